"""The two pieces of ``pyserini.encode``'s pipeline the mlirkit wrapper swaps in (JVM required).

- :class:`LangJsonlCollectionIterator`: Pyserini's JSONL reader, with ``lang`` as an optional field:
  listed in ``--fields``, it is read from each record's ``lang`` key (not split out of ``contents``),
  and a record without one gets ``default_lang`` or fails naming the document, as ``mlirkit.encode``
  does. A single text field taken from a Pyserini ``contents`` string is the whole string (Pyserini
  would split a multi-line document at every ``--delimiter`` and stop with an error).
- :class:`IndexDirectoryWriter`: Pyserini's ``FaissRepresentationWriter`` that, when the encoder is an
  mlirkit one, writes a full mlirkit index directory through :class:`mlirkit.index.IndexWriter`
  (``index`` + ``docid`` as Pyserini writes them, plus ``langs``, ``meta.json`` with the encoder
  fingerprint and transform, the transform file, optionally ``embeddings.npy``), atomically. For other
  encoders it is Pyserini's writer unchanged.
"""
from __future__ import annotations

import logging
import shutil
from typing import Any, Callable

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import UNKNOWN
from mlirkit.base.jvm import boot_jvm

boot_jvm()

from pyserini.encode import JsonlCollectionIterator  # noqa: E402
from pyserini.encode.optional import FaissRepresentationWriter  # noqa: E402

logger = logging.getLogger(__name__)

LANG_FIELD = "lang"


class LangJsonlCollectionIterator(JsonlCollectionIterator):
    """``JsonlCollectionIterator`` reading ``lang`` from its own JSON key (see module docstring)."""

    def __init__(self, collection_path: str, fields=None, docid_field=None, delimiter: str = "\n", *,
                 default_lang: str | None = None) -> None:
        self.default_lang = default_lang
        self.missing_lang = 0
        super().__init__(collection_path, fields, docid_field, delimiter)
        if self.missing_lang:
            logger.warning("%d documents without a 'lang' field got --default-lang %s", self.missing_lang, default_lang)

    def _parse_text_fields(self, info, fields, strict, strip_trailing_space):
        if len(fields) == 1 and fields[0] not in info and isinstance(info.get("contents"), str):
            # one text field from Pyserini's "contents": the whole contents, newlines included
            # (Pyserini would split it at every --delimiter and fail on a multi-line document)
            return [info["contents"].strip()]
        saved = self.fields
        self.fields = list(fields)
        try:
            return super()._parse_fields_from_info(info, strict, strip_trailing_space)
        finally:
            self.fields = saved

    def _parse_fields_from_info(self, info, strict=True, strip_trailing_space=True):
        if LANG_FIELD not in self.fields:
            return self._parse_text_fields(info, self.fields, strict, strip_trailing_space)
        fields = self.fields
        values = self._parse_text_fields(info, [f for f in fields if f != LANG_FIELD], strict, strip_trailing_space)
        lang = info.get(LANG_FIELD)
        if not lang:
            if self.default_lang is None:
                doc_id = info.get(self.docid_field) if self.docid_field else info.get("id", info.get("_id", info.get("docid")))
                raise MlirkitError(f"document {doc_id!r} has no \"lang\" field (give --default-lang to set one)")
            lang = self.default_lang
            self.missing_lang += 1
        values = list(values)
        values.insert(fields.index(LANG_FIELD), str(lang))
        return values


class IndexDirectoryWriter(FaissRepresentationWriter):
    """``FaissRepresentationWriter`` writing an mlirkit index directory for mlirkit encoders.

    ``get_encoder()`` returns the document encoder Pyserini built (None for Pyserini's own classes).
    The directory is replaced atomically when encoding finishes (Pyserini overwrites too).
    """

    def __init__(self, dir_path: str, dimension: int = 768, *, get_encoder: Callable[[], Any],
                 save_embeddings: bool = False, extra_meta: dict[str, Any] | None = None) -> None:
        super().__init__(dir_path, dimension=dimension)
        self.get_encoder = get_encoder
        self.save_embeddings = save_embeddings
        self.extra_meta = dict(extra_meta or {})
        self._writer = None

    def __enter__(self):
        encoder = self.get_encoder()
        if encoder is None:
            if self.save_embeddings:
                raise MlirkitError("--save-embeddings needs an mlirkit encoder class")
            return super().__enter__()
        from mlirkit.index import IndexWriter
        from mlirkit.index.layout import TRANSFORM_FILE

        if self.dimension != encoder.dim:
            logger.info("using the encoder's dimension %d (Pyserini's --dimension is %d)", encoder.dim, self.dimension)
            self.dimension = encoder.dim
        meta = {"encoder_name": encoder.model_name, "encoder_options": encoder.encoder_options(),
                "written_by": "pyserini.encode via mlirkit.pyserini", **self.extra_meta}
        self._writer = IndexWriter(self.dir_path, dim=encoder.dim, encoder=encoder.fingerprint, normalized=True,
                                   transform=encoder.describe_transform(), save_embeddings=self.save_embeddings,
                                   overwrite=True, extra_meta=meta)
        self._writer.__enter__()
        path = getattr(encoder, "transform_path", None)
        if path is not None:
            shutil.copyfile(path, self._writer.tmp / TRANSFORM_FILE)
        self._encoder = encoder
        return self

    def write(self, batch_info, fields=None):
        if self._writer is None:
            return super().write(batch_info, fields)
        ids = list(batch_info["id"])
        langs = batch_info.get(LANG_FIELD)
        langs = [str(x) if x else UNKNOWN for x in langs] if langs is not None else [UNKNOWN] * len(ids)
        raw = self._encoder.last_raw if self.save_embeddings else None
        self._writer.add(ids, langs, batch_info["vector"], raw=raw)

    def __exit__(self, exc_type, exc_val, exc_tb):
        if self._writer is None:
            return super().__exit__(exc_type, exc_val, exc_tb)
        writer, self._writer = self._writer, None
        writer.__exit__(exc_type, exc_val, exc_tb)
        if exc_type is None:
            logger.info("wrote %d documents to %s", writer.count, self.dir_path)


__all__ = ["IndexDirectoryWriter", "LangJsonlCollectionIterator"]
