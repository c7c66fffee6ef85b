"""Import a SHIFT authors' ``.pt`` vector file as a :class:`~mlirkit.transforms.shift.ShiftTransform`."""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Callable, Sequence

from mlirkit.base.errors import MlirkitError
from mlirkit.encoders.base import Encoder
from mlirkit.transforms.io import read_shift_pt
from mlirkit.transforms.shift import ShiftTransform

logger = logging.getLogger(__name__)


def import_shift_pt(path: str | os.PathLike, encoder: Encoder | Callable[[], Encoder], *, encoder_name: str,
                    source_lang: str | None = None, langs: Sequence[str] | None = None) -> ShiftTransform:
    """The vectors of ``path`` (only ``langs`` if given) recorded for ``encoder``, whose dimension they must have.

    ``encoder`` may be a function that builds it: called once the file is read and checked, so a bad file
    fails before a model loads.

    ``source_lang``, if given, must be the file's own; a model name in the file that does not match the
    encoder's is warned about (the file does not say which prefix or pooling its vectors were made with).
    """
    model_name, source, vectors = read_shift_pt(path)
    if source_lang and source_lang != source:
        raise MlirkitError(f"{path} has source language {source!r}, not {source_lang!r} "
                           f"(derive other sources with 'python -m mlirkit.shift derive')")
    if langs:
        vectors = {l: v for l, v in vectors.items() if l in langs}
    if not isinstance(encoder, Encoder):
        encoder = encoder()
    dim = next(iter(vectors.values())).shape[0]
    if dim != encoder.dim:
        raise MlirkitError(f"{path} has {dim}-d vectors but encoder {encoder_name} gives {encoder.dim}-d embeddings")
    fp = encoder.fingerprint
    model = str(fp.get("model") or fp.get("model_name") or encoder_name)
    if model_name and model_name.split("/")[-1] not in model:
        logger.warning("%s was made with %r; recording it for encoder %r", path, model_name, model)
    meta = {"pairs": None, "source": str(path), "imported_from": {"file": Path(path).name,
            "model_name": model_name, "format": "SHIFT authors' torch .pt"},
            "prefix": fp.get("doc_prefix"), "normalized": False, "encoder_name": encoder_name}
    return ShiftTransform(vectors, encoder=fp, source_lang=source, meta=meta)
