"""Import a SHIFT authors' ``.pt`` vector file as a :class:`~mlirkit.transforms.shift_transform.ShiftTransform`."""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Callable, Sequence

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import check_lang, require_langs
from mlirkit.base.option_names import option
from mlirkit.encoders.base import Encoder
from mlirkit.transforms.io import read_shift_pt
from mlirkit.transforms.shift_transform import ShiftTransform

__all__ = ["import_shift_pt", "same_model"]

logger = logging.getLogger(__name__)


def same_model(recorded: str, model: str) -> bool:
    """Whether the file's ``model_name`` names the encoder's model: equal ids, or equal last path
    components (the authors' code records an HF id or the local directory it loaded), case-insensitive."""
    a, b = recorded.strip().rstrip("/").lower(), model.strip().rstrip("/").lower()
    return a == b or a.replace("\\", "/").split("/")[-1] == b.replace("\\", "/").split("/")[-1]


def import_shift_pt(path: str | os.PathLike, encoder: Encoder | Callable[[], Encoder], *, encoder_name: str,
                    source_lang: str | None = None, langs: Sequence[str] | None = None,
                    force: bool = False) -> ShiftTransform:
    """The vectors of ``path`` (only ``langs`` if given) recorded for ``encoder``, whose dimension they must have.

    ``encoder`` may be a function that builds it: called once the file is read and checked, so a bad file
    fails before a model loads.

    ``source_lang``, if given, must be the file's own. The file's ``model_name``, when it records one, must
    name the encoder's model (:func:`same_model`; the encoder's HF id, e.g. from the preset's
    ``mlirkit_encoder.json``): another model's vectors are refused, or warned about with ``force``. The
    file does not say which prefix or pooling its vectors were made with: those are the encoder's.
    """
    model_name, source, vectors = read_shift_pt(path)
    source_lang = check_lang(source_lang, "source language", known=True) if source_lang else None
    langs = [check_lang(la, "languages asked for", known=True) for la in langs] if langs else langs
    if source_lang and source_lang != source:
        raise MlirkitError(f"{path} has source language {source!r}, not {source_lang!r} "
                           f"(derive other sources with 'python -m mlirkit.shift derive')")
    if langs:
        require_langs([l for l in langs if l != source], vectors, "vectors", f" in {path}")
        vectors = {l: v for l, v in vectors.items() if l in langs}
        if not vectors:
            raise MlirkitError(f"{path}: the languages asked for ({', '.join(langs)}) keep no target-language vector")
    if not isinstance(encoder, Encoder):
        encoder = encoder()
    dim = next(iter(vectors.values())).shape[0]
    if dim != encoder.dim:
        raise MlirkitError(f"{path} has {dim}-d vectors but encoder {encoder_name} gives {encoder.dim}-d embeddings")
    fp = encoder.fingerprint
    model = str(fp.get("model") or fp.get("model_name") or encoder_name)
    if not model_name:
        logger.info("%s records no model name: only its dimension (%d) is checked", path, dim)
    elif not same_model(model_name, model):
        if not force:
            raise MlirkitError(f"{path} was made with model {model_name!r}, not the encoder's {model!r} "
                               f"({option('force', True)} imports it anyway)")
        logger.warning("%s was made with %r; recording it for encoder %r (%s)", path, model_name, model,
                       option("force", True))
    meta = {"pairs": None, "source": str(path), "imported_from": {"file": Path(path).name,
            "model_name": model_name, "format": "SHIFT authors' torch .pt"},
            "prefix": fp.get("doc_prefix"), "normalized": False, "encoder_name": encoder_name}
    return ShiftTransform.from_tensors(vectors, encoder=fp, source_lang=source, meta=meta)
