#!/usr/bin/env bash
# The package sets under which sentence-transformers' OpenVINO and ONNX backends run beside the project's
# venv (torch 2.13, transformers 5.25), for `perf.encode_speed --side-by-side --openvino-path ... --onnx-path ...`.
#
# Neither backend imports with the project's transformers, and the two need each other's conflicting pins,
# so each goes into its own directory (installed with --no-deps, put first on PYTHONPATH of its process only):
#   - optimum-intel 2.2.0 (the newest) declares transformers<5.6 and huggingface-hub<1.22; with transformers
#     5.25 it fails at import: "ImportError: cannot import name 'VisionRotaryEmbedding' from
#     'transformers.models.qwen2_vl.modeling_qwen2_vl'". transformers 5.5.4 in turn needs tokenizers<=0.23.0
#     and, with hub 1.21, datasets<5 (datasets 5.2 imports huggingface_hub.utils.httpx).
#   - optimum-onnx 0.1.0 (the newest) declares transformers<4.58 and optimum~=2.1.0; with transformers 5.x it
#     fails at import: "ImportError: cannot import name 'is_offline_mode' from 'transformers.utils'" (which
#     sentence-transformers reports as Optimum missing); sentence-transformers 6 needs transformers>=5, so
#     the ONNX backend runs with sentence-transformers 5.1.2.
#
# Usage: bash perf/st_backend_overlays.sh DIR   (writes DIR/openvino and DIR/onnx)
set -euo pipefail
dir=${1:?usage: bash perf/st_backend_overlays.sh DIR}
pip=${PIP:-.venv/bin/pip}
"$pip" install -q --no-deps --target "$dir/openvino" transformers==5.5.4 huggingface-hub==1.21.0 tokenizers==0.22.2 \
    datasets==4.4.2 optimum==2.3.0 optimum-intel==2.2.0 openvino-tokenizers==2026.4.1.0
"$pip" install -q --no-deps --target "$dir/onnx" transformers==4.57.6 huggingface-hub==0.36.2 tokenizers==0.22.2 \
    datasets==4.4.2 optimum==2.1.0 optimum-onnx==0.1.0 sentence-transformers==5.1.2
echo "--openvino-path $dir/openvino --onnx-path $dir/onnx"
