"""Transform files: safetensors (float32 tensors) whose ``__metadata__`` holds the JSON metadata.

Tensors: ``<prefix>.<lang>`` with prefix ``vector`` (SHIFT, shape ``(d,)``), ``mean`` (centering, ``(d,)``)
or ``components`` (LIR, ``(r, d)``); ``<prefix>.left`` ``(d, k)``, ``<prefix>.right`` ``(k, d)`` and
``<prefix>.bias`` ``(d,)`` for the methods that apply one map to every row (prefix ``lsar``, ``leace``);
optionally ``langid.weight`` ``(L, d)`` and ``langid.bias`` ``(L,)``.
``__metadata__``: ``{"format": "mlirkit-transform", "format_version": "1", "meta": <JSON>}`` where the
JSON has ``method``, ``encoder`` (fingerprint), ``source_lang``, ``dim``, ``languages``, ``pairs`` (pairs
or passages counted per language), ``prefix``, ``normalized``, ``mlirkit_version``, ``created`` and, with
a classifier, ``langid``. The format is recognised from the content, never from the file name. Every
metadata field mlirkit reads is checked at load (type and range): a bad one is one error naming the file
and the field.

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
from mlirkit.transforms.defaults import MISSING_POLICIES
from mlirkit.transforms.registry import TRANSFORMS
from mlirkit.transforms.transform import LanguageTransform

__all__ = ["FORMAT", "FORMAT_VERSION", "LANGID_PREFIX", "META_FIELDS", "check_meta", "load_transform",
           "parse_transform", "read_shift_pt", "save_transform", "sniff"]

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
    tensors: dict[str, np.ndarray] = t.tensors()
    meta = {**t.meta, "method": t.method, "encoder": t.encoder, "source_lang": t.source_lang_, "dim": t.dim,
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
    try:  # what is written is what load_transform reads
        parse_transform(blob, path)
    except MlirkitError as e:
        raise MlirkitError(f"refusing to write a transform that would not load: {e}") from None
    with atomic_file(path, overwrite=overwrite, mode="wb", kind="transform") as f:
        f.write(blob)
    t.meta = meta
    t.path = path
    t.sha256 = hashlib.sha256(blob).hexdigest()
    return path


def load_transform(path: str | os.PathLike) -> LanguageTransform:
    """Read and validate a transform file; :class:`MlirkitError` on anything malformed."""
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
    return parse_transform(path.read_bytes(), path)


def parse_transform(data: bytes, path: str | os.PathLike) -> LanguageTransform:
    """The transform in ``data``, the bytes of the mlirkit transform file ``path``, validated as
    :func:`load_transform` validates it (what :func:`save_transform` writes is checked with it first)."""
    from safetensors import SafetensorError
    from safetensors.numpy import load

    from mlirkit.base.registry import UnknownNameError
    from mlirkit.transforms.langid import LangIdClassifier

    path = Path(path)
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
    if version > FORMAT_VERSION:
        raise MlirkitError(f"{path}: transform format version {version} is newer than this mlirkit ({FORMAT_VERSION})")
    check_meta(meta, path)
    for key in ("method", "encoder", "source_lang"):
        if key not in meta:
            raise MlirkitError(f"{path}: metadata lacks {key!r}")
    try:
        cls = TRANSFORMS.get(meta["method"])
    except UnknownNameError as e:
        raise MlirkitError(f"{path}: metadata field 'method': {e}") from None
    params: dict[str, np.ndarray] = {}
    langid_tensors: dict[str, np.ndarray] = {}
    for name, value in tensors.items():
        if value.dtype != np.float32:
            raise MlirkitError(f"{path}: tensor {name!r} is {value.dtype}, expected float32")
        check_finite(f"tensor {name!r}", value, path)
        prefix, _, rest = name.partition(".")
        if name.startswith(LANGID_PREFIX):
            langid_tensors[name[len(LANGID_PREFIX):]] = value
        elif prefix == cls.tensor_prefix and rest:
            params[rest] = value
        else:
            raise MlirkitError(f"{path}: unexpected tensor {name!r} in a {cls.method} transform")
    if cls.per_language and sorted(params) != sorted(meta.get("languages", params)):
        raise MlirkitError(f"{path}: metadata languages {meta.get('languages')} do not match the tensors {sorted(params)}")
    if not cls.per_language and not meta.get("languages"):
        raise MlirkitError(f"{path}: metadata field 'languages' must list the languages a {cls.method} transform "
                           f"was fitted on")
    langid = None
    if langid_tensors or meta.get("langid"):
        try:
            langid = LangIdClassifier.from_file(langid_tensors, meta.get("langid") or {})
        except MlirkitError as e:
            raise MlirkitError(f"{path}: {e}") from None
    try:
        t = cls.from_tensors(params, encoder=meta["encoder"], source_lang=meta["source_lang"], meta=meta,
                             langid=langid, **cls.recipe_from_meta(meta))
    except MlirkitError as e:
        raise MlirkitError(f"{path}: {e}") from None
    if "dim" in meta and int(meta["dim"]) != t.dim:
        raise MlirkitError(f"{path}: metadata says dim {meta['dim']} but the vectors have {t.dim}")
    if langid is not None and langid.dim != t.dim:
        raise MlirkitError(f"{path}: language classifier has dimension {langid.dim}, vectors {t.dim}")
    t.path = path
    t.sha256 = hashlib.sha256(data).hexdigest()
    return t


# --------------------------------------------------------------------------- metadata checks
def _lang(value: Any) -> str | None:
    if not isinstance(value, str):
        return f"must be a language code, got {_type_name(type(value))}"
    try:
        check_lang(value, "language", known=True)
    except MlirkitError:
        return f"must be a language code, got {value!r}"
    return None


def _of(*types: type) -> Any:
    def check(value: Any) -> str | None:
        if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
            return f"must be {' or '.join(_type_name(t) for t in types)}, got {_type_name(type(value))}"
        return None
    return check


def _type_name(t: type) -> str:
    return {dict: "a JSON object", list: "a list", str: "a string", int: "a whole number", float: "a number",
            bool: "true or false", type(None): "null"}.get(t, t.__name__)


def _count(value: Any, *, minimum: int = 0, none: bool = False) -> str | None:
    if value is None and none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        return f"must be a whole number >= {minimum}{' or null' if none else ''}, got {value!r}"
    return None


def _counts_by_lang(value: Any) -> str | None:
    """``null`` or ``{lang: count or null}``."""
    if value is None:
        return None
    if not isinstance(value, dict):
        return f"must be null or a JSON object of counts per language, got {_type_name(type(value))}"
    for lang, n in value.items():
        problem = _lang(lang) or _count(n, none=True)
        if problem:
            return f"entry {lang!r} {problem}"
    return None


def _languages(value: Any) -> str | None:
    if not isinstance(value, list):
        return f"must be a list of language codes, got {_type_name(type(value))}"
    for lang in value:
        if _lang(lang):
            return f"must be a list of language codes, got {lang!r}"
    return None


def _missing_record(value: Any) -> str | None:
    if not isinstance(value, dict):
        return f"must be a JSON object, got {_type_name(type(value))}"
    if value.get("policy") not in MISSING_POLICIES:
        return f"field 'policy' must be one of {', '.join(MISSING_POLICIES)}, got {value.get('policy')!r}"
    for key in ("filled", "kept"):
        if not isinstance(value.get(key, {}), dict):
            return f"field {key!r} must be a JSON object"
    return _counts_by_lang(value.get("filled", {}))


def _derived(value: Any) -> str | None:
    if not isinstance(value, dict):
        return f"must be a JSON object, got {_type_name(type(value))}"
    for key in ("source_lang", "pivot"):
        if value.get(key) is not None and _lang(value[key]):
            return f"field {key!r} {_lang(value[key])}"
    return None


def _numbers(value: Any) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return "must be a list of numbers"
    return None


#: every metadata field mlirkit reads: name -> check (None when fine, else what is wrong)
META_FIELDS: dict[str, Any] = {
    "method": _of(str), "encoder": _of(dict), "source_lang": _lang, "dim": lambda v: _count(v, minimum=1),
    "languages": _languages, "pairs": _counts_by_lang, "docs": _counts_by_lang,
    "rank": lambda v: _count(v, minimum=1, none=True), "directions": lambda v: _count(v),
    "singular_values": _numbers, "prefix": _of(str, type(None)), "normalized": _of(bool, type(None)),
    "mlirkit_version": _of(str), "created": _of(str), "source": _of(str, type(None)), "encoded_as": _of(str),
    "encoder_name": _of(str, type(None)), "langid": _of(dict, type(None)), "fit": _of(dict),
    "provenance": _of(dict), "corpus_fit": _of(dict, type(None)), "hybrid": _of(dict), "mining": _of(dict),
    "recipe": _of(dict), "topic_robust": _of(dict), "imported_from": _of(dict), "parallel": _of(dict),
    "concept_erasure": _of(dict), "missing_languages": _missing_record, "derived_from": _derived,
}


def check_meta(meta: Any, path: str | os.PathLike) -> None:
    """Refuse a transform's metadata whose fields (:data:`META_FIELDS`) have the wrong type or range: one error
    naming the file and the field."""
    if not isinstance(meta, dict):
        raise MlirkitError(f"{path}: metadata must be a JSON object, got {type(meta).__name__}")
    for key, check in META_FIELDS.items():
        if key in meta:
            problem = check(meta[key])
            if problem:
                raise MlirkitError(f"{path}: metadata field {key!r} {problem}")
    for lang, entry in (meta.get("provenance") or {}).items():
        if _lang(lang) or not isinstance(entry, dict):
            raise MlirkitError(f"{path}: metadata field 'provenance' must map language codes to JSON objects "
                               f"(entry {lang!r})")


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
