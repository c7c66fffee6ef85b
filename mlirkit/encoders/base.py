"""The encoder interface every retriever implements (HF, USE, DCL, ...)."""
from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from typing import Any, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError


def fingerprint_digest(fingerprint: dict[str, Any]) -> str:
    """A short stable hash of a fingerprint dict (canonical JSON, sha256, 16 hex digits)."""
    blob = json.dumps(fingerprint, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


class Encoder(ABC):
    """Maps texts to float32 ``(n, dim)`` embeddings, with separate query and document sides.

    ``langs`` gives each text's language (or None); most encoders ignore it, a few use it.
    ``fingerprint`` identifies everything that changes the vectors (model id and weights hash or
    revision, pooling, prefixes, normalisation, max length) and must be JSON-serialisable; indexes
    and transform files store it and refuse another encoder's vectors.
    """

    #: the registry name of the encoder class ("hf", "usem", "dcl", ...)
    class_name: str = ""

    @property
    @abstractmethod
    def dim(self) -> int: ...

    @property
    @abstractmethod
    def fingerprint(self) -> dict[str, Any]: ...

    @property
    def normalized(self) -> bool:
        """True when every output row has unit L2 norm."""
        return bool(self.fingerprint.get("normalize", False))

    @abstractmethod
    def encode_queries(
        self, texts: Sequence[str], langs: Sequence[str | None] | None = None, *,
        batch_size: int | None = None, show_progress: bool = False,
    ) -> np.ndarray: ...

    @abstractmethod
    def encode_docs(
        self, texts: Sequence[str], langs: Sequence[str | None] | None = None, *,
        batch_size: int | None = None, show_progress: bool = False,
    ) -> np.ndarray: ...

    @property
    def digest(self) -> str:
        return fingerprint_digest(self.fingerprint)


class EncoderMismatchError(MlirkitError):
    pass


#: fingerprint fields that say how the vectors were computed, not which vectors they are: the
#: ``hf`` encoder's ``backend`` (torch, openvino, onnx), its ``batches`` (equal-length batches in bf16)
#: and its ``precision`` when that is one of
#: :data:`EQUIVALENT_PRECISIONS` (each agrees with torch fp32 to a cosine >= 0.9999, docs/encoders.md).
#: Other precisions (int8, fp16) stay in the comparison, and so do ``dtype`` and ``quantize``.
RUNTIME_FIELDS = ("backend", "precision", "batches")
EQUIVALENT_PRECISIONS = ("fp32", "bf16")


def comparable_fingerprint(fingerprint: dict[str, Any]) -> dict[str, Any]:
    """The fingerprint without the fields whose values give equivalent vectors (:data:`RUNTIME_FIELDS`).

    Fingerprints written before backends existed have neither field and compare as torch fp32.
    """
    out = {k: v for k, v in fingerprint.items() if k not in ("backend", "batches")}
    if out.get("precision") in EQUIVALENT_PRECISIONS:
        del out["precision"]
    return out


def check_same_encoder(expected: dict[str, Any], actual: dict[str, Any], what: str) -> None:
    """Refuse when two fingerprints differ in a field that changes the vectors (every field except
    equivalent backends and precisions, :func:`comparable_fingerprint`); the message lists them."""
    expected, actual = comparable_fingerprint(expected), comparable_fingerprint(actual)
    if fingerprint_digest(expected) == fingerprint_digest(actual):
        return
    keys = sorted(set(expected) | set(actual))
    diffs = [f"{k}: {expected.get(k)!r} != {actual.get(k)!r}" for k in keys if expected.get(k) != actual.get(k)]
    raise EncoderMismatchError(f"{what} was made with another encoder ({'; '.join(diffs)})")


__all__ = ["Encoder", "EncoderMismatchError", "check_same_encoder", "comparable_fingerprint", "fingerprint_digest"]
