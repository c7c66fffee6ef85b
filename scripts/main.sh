#!/usr/bin/env bash
# The README's main-job command: set up .venv (idempotent) and run the benchmark
# (language bias of real retrievers on real translated text, SHIFT and the baselines).
# Extra arguments go to `python -m mlirkit.benchmark` (e.g. --quick).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
exec .venv/bin/python -m mlirkit.benchmark "$@"
