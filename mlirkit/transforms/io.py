"""Transform files: safetensors (float32 tensors) whose ``__metadata__`` holds the JSON metadata.

Tensors: ``<prefix>.<lang>`` with prefix ``vector`` (SHIFT, shape ``(d,)``), ``mean`` (centering, ``(d,)``)
or ``components`` (LIR, ``(r, d)``); optionally ``langid.weight`` ``(L, d)`` and ``langid.bias`` ``(L,)``.
``__metadata__``: ``{"format": "mlirkit-transform", "format_version": "1", "meta": <JSON>}`` where the
JSON has ``method``, ``encoder`` (fingerprint), ``source_lang``, ``dim``, ``languages``, ``pairs`` (pairs
or passages counted per language), ``prefix``, ``normalized``, ``mlirkit_version``, ``created`` and, with
a classifier, ``langid``. The format is recognised from the content, never from the file name.

The SHIFT authors' ``.pt`` files (``torch.save`` of ``{model_name, source_lang, v_<lang>: tensor}``) are
read by :func:`read_shift_pt` (``torch.load(weights_only=True)``: no pickled code runs) and imported
into this format by ``python -m mlirkit.shift fit --pairs FILE.pt``.
"""
from __future__ import annotations

import hashlib
import json
import os
import struct
from pathlib import Path
from typing import Any

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.fs import atomic_file
from mlirkit.base.langs import check_lang
from mlirkit.base.outputs import TRANSFORM_FORMAT
from mlirkit.io.files import GZIP_MAGIC
from mlirkit.base.vectors import check_finite
from mlirkit.base.option_names import in_cli
from mlirkit.transforms.transform import TRANSFORMS, LanguageTransform

FORMAT = TRANSFORM_FORMAT  # defined with the "is this ours?" checks
FORMAT_VERSION = 1
LANGID_PREFIX = "langid."


def sniff(path: str | os.PathLike) -> str:
    """"mlirkit" (a transform file), "safetensors" (another safetensors file), "torch" (zip or pickle), "gzip", "text" or "unknown"."""
    path = Path(path)
    if path.is_dir():
        return "directory"
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) == 8:
            (n,) = struct.unpack("<Q", head)
            if 2 <= n <= 100_000_000 and f.read(1) == b"{":
                f.seek(8)
                try:
                    header = json.loads(f.read(n))
                except (ValueError, UnicodeDecodeError):
                    header = None
                if isinstance(header, dict):
                    return "mlirkit" if (header.get("__metadata__") or {}).get("format") == FORMAT else "safetensors"
    if head.startswith(b"PK\x03\x04") or head[:1] == b"\x80":
        return "torch"
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head[:1] in (b"{", b"[") or head.strip():
        return "text"
    return "unknown"


def save_transform(t: LanguageTransform, path: str | os.PathLike, overwrite: bool = False) -> Path:
    """Write ``t`` to exactly ``path`` (atomically); sets ``t.path`` and ``t.sha256``."""
    from safetensors.numpy import save

    from mlirkit import __version__

    path = Path(path)
    tensors: dict[str, np.ndarray] = {f"{t.tensor_prefix}.{lang}": np.ascontiguousarray(v, dtype=np.float32)
                                      for lang, v in t.params.items()}
    meta = {**t.meta, "method": t.method, "encoder": t.encoder, "source_lang": t.source_lang, "dim": t.dim,
            "languages": t.languages}
    meta.setdefault("mlirkit_version", __version__)
    if "created" not in meta:
        from datetime import datetime, timezone

        meta["created"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    if t.langid is not None:
        tensors[LANGID_PREFIX + "weight"] = np.ascontiguousarray(t.langid.weight, dtype=np.float32)
        tensors[LANGID_PREFIX + "bias"] = np.ascontiguousarray(t.langid.bias, dtype=np.float32)
        meta["langid"] = t.langid.to_meta()
    else:
        meta.pop("langid", None)
    blob = save(tensors, metadata={"format": FORMAT, "format_version": str(FORMAT_VERSION),
                                   "meta": json.dumps(meta, ensure_ascii=False, sort_keys=True)})
    with atomic_file(path, overwrite=overwrite, mode="wb", kind="transform") as f:
        f.write(blob)
    t.meta = meta
    t.path = path
    t.sha256 = hashlib.sha256(blob).hexdigest()
    return path


def load_transform(path: str | os.PathLike) -> LanguageTransform:
    """Read and validate a transform file; :class:`MlirkitError` on anything malformed."""
    from safetensors import SafetensorError
    from safetensors.numpy import load

    from mlirkit.transforms.langid import LangIdClassifier

    path = Path(path)
    if not path.is_file():
        raise MlirkitError(f"{path}: no such transform file")
    kind = sniff(path)
    if kind == "torch":
        how = (f"'python -m mlirkit.shift fit --method shift --pairs {path} --encoder NAME --output FILE'" if in_cli()
               else "mlirkit.transforms.import_pt.import_shift_pt(path, encoder, encoder_name=NAME)")
        raise MlirkitError(f"{path}: a torch file, not an mlirkit transform; import the SHIFT authors' vectors with "
                           f"{how}")
    if kind != "mlirkit":
        raise MlirkitError(f"{path}: not an mlirkit transform file (expected safetensors with "
                           f"format={FORMAT!r} metadata)")
    data = path.read_bytes()
    try:
        tensors = load(data)
    except (SafetensorError, ValueError, OSError) as e:
        raise MlirkitError(f"{path}: unreadable safetensors file ({e})") from None
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    raw_meta = header.get("__metadata__") or {}
    try:
        version = int(raw_meta.get("format_version", "0"))
        meta: dict[str, Any] = json.loads(raw_meta["meta"])
    except (KeyError, ValueError, TypeError, RecursionError):
        raise MlirkitError(f"{path}: missing or invalid JSON metadata") from None
    _check_meta_types(meta, path)
    if version > FORMAT_VERSION:
        raise MlirkitError(f"{path}: transform format version {version} is newer than this mlirkit ({FORMAT_VERSION})")
    for key in ("method", "encoder", "source_lang"):
        if key not in meta:
            raise MlirkitError(f"{path}: metadata lacks {key!r}")
    cls = TRANSFORMS.get(meta["method"])
    params: dict[str, np.ndarray] = {}
    langid_tensors: dict[str, np.ndarray] = {}
    for name, value in tensors.items():
        if value.dtype != np.float32:
            raise MlirkitError(f"{path}: tensor {name!r} is {value.dtype}, expected float32")
        check_finite(f"tensor {name!r}", value, path)
        prefix, _, lang = name.partition(".")
        if name.startswith(LANGID_PREFIX):
            langid_tensors[name[len(LANGID_PREFIX):]] = value
        elif prefix == cls.tensor_prefix and lang:
            params[lang] = value
        else:
            raise MlirkitError(f"{path}: unexpected tensor {name!r} in a {cls.method} transform")
    if sorted(params) != sorted(meta.get("languages", params)):
        raise MlirkitError(f"{path}: metadata languages {meta.get('languages')} do not match the tensors {sorted(params)}")
    langid = None
    if langid_tensors or meta.get("langid"):
        try:
            langid = LangIdClassifier.from_file(langid_tensors, meta.get("langid") or {})
        except MlirkitError as e:
            raise MlirkitError(f"{path}: {e}") from None
    try:
        t = cls(params, encoder=meta["encoder"], source_lang=meta["source_lang"], meta=meta, langid=langid)
    except MlirkitError as e:
        raise MlirkitError(f"{path}: {e}") from None
    if "dim" in meta and int(meta["dim"]) != t.dim:
        raise MlirkitError(f"{path}: metadata says dim {meta['dim']} but the vectors have {t.dim}")
    if langid is not None and langid.dim != t.dim:
        raise MlirkitError(f"{path}: language classifier has dimension {langid.dim}, vectors {t.dim}")
    t.path = path
    t.sha256 = hashlib.sha256(data).hexdigest()
    return t


#: the types of the metadata fields that :func:`load_transform` uses
_META_TYPES: dict[str, tuple[type, ...]] = {
    "method": (str,), "encoder": (dict,), "source_lang": (str,), "languages": (list,), "dim": (int,),
    "langid": (dict, type(None)),
}


def _check_meta_types(meta: Any, path: Path) -> None:
    """Wrong types in a transform's metadata are one error naming the file and field."""
    if not isinstance(meta, dict):
        raise MlirkitError(f"{path}: metadata must be a JSON object, got {type(meta).__name__}")
    for key, types in _META_TYPES.items():
        value = meta.get(key)
        if key in meta and (not isinstance(value, types) or (isinstance(value, bool) and bool not in types)):
            raise MlirkitError(f"{path}: metadata field {key!r} has the wrong type ({type(value).__name__})")
    if not all(isinstance(lang, str) for lang in meta.get("languages", [])):
        raise MlirkitError(f"{path}: metadata field 'languages' must be a list of strings")


def read_shift_pt(path: str | os.PathLike) -> tuple[str, str, dict[str, np.ndarray]]:
    """``(model_name, source_lang, {lang: V_lang float32})`` from a SHIFT authors' ``.pt`` vector file."""
    import torch

    from mlirkit.io.binary import check_torch_file

    path = Path(path)
    check_torch_file(path)
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # a damaged pickle stream fails in the unpickler in many ways (IndexError, KeyError, ...)
        raise MlirkitError(f"{path}: cannot read as a SHIFT vector file with torch.load(weights_only=True) "
                           f"({str(e).splitlines()[0] if str(e) else type(e).__name__})") from None
    if not isinstance(payload, dict):
        raise MlirkitError(f"{path}: expected a dict {{model_name, source_lang, v_<lang>}}, got {type(payload).__name__}")
    source = payload.get("source_lang")
    if not isinstance(source, str) or not source:
        raise MlirkitError(f"{path}: missing 'source_lang'")
    source = check_lang(source, f"{path}: 'source_lang'", known=True)
    model_name = str(payload.get("model_name", ""))
    vectors: dict[str, np.ndarray] = {}
    for key, value in payload.items():
        if not key.startswith("v_"):
            continue
        if not isinstance(value, torch.Tensor) or value.ndim != 1:
            raise MlirkitError(f"{path}: {key} is not a 1-d tensor")
        array = value.detach().to(torch.float64).numpy().astype(np.float32)
        check_finite(key, array, path)
        lang = check_lang(key[2:], f"{path}: key {key!r}", known=True)
        if lang in vectors:
            raise MlirkitError(f"{path}: key {key!r} names a language given by another key too")
        vectors[lang] = array
    if not vectors:
        raise MlirkitError(f"{path}: no 'v_<lang>' vectors")
    return model_name, source, vectors
