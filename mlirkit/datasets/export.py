"""Write a registered collection as BEIR or TREC/Pyserini files, so other tools can read it.

- ``beir``: ``corpus.jsonl`` (``_id``, ``title`` = "", ``text``, ``lang``), ``queries.jsonl``
  (``_id``, ``text``, ``lang``), ``qrels/test.tsv`` (header ``query-id corpus-id score``).
- ``trec``: ``corpus.jsonl`` in Pyserini's JsonCollection form (``id``, ``contents``, ``lang``),
  ``topics.tsv`` (``qid<TAB>text<TAB>lang``), ``qrels.txt`` (TREC ``qid 0 docid rel``).

Documents of a parallel set and translated queries (BEIR ``queries.jsonl``) also carry ``group_id``. The directory is written to a temporary
sibling and renamed when complete.
"""
from __future__ import annotations

import json
from enum import Enum
from pathlib import Path

from mlirkit.base.errors import MlirkitError


class ExportFormat(str, Enum):
    BEIR = "beir"
    TREC = "trec"


def _check_id(kind: str, value: str) -> str:
    """An id every reader of the export (mlirkit's, TREC tools') reads back: not empty, no whitespace, no control
    or other unprintable character."""
    if not value or any(c.isspace() or not c.isprintable() for c in value):
        raise MlirkitError(f"{kind} id {value!r} is empty or contains whitespace or a control character; "
                           "it cannot be written to TREC files")
    return value


def _check_question(query_id: str, text: str) -> str:
    if not text.strip():
        raise MlirkitError(f"query {query_id!r}: field 'text' is empty or whitespace only; no reader of the export "
                           "takes it")
    return text


def export(dataset_id: str, fmt: ExportFormat | str, output: str | Path, *, overwrite: bool = False) -> dict[str, int]:
    """Export ``dataset_id``; returns counts ``{"docs", "queries", "qrels"}``."""
    import ir_datasets
    from tqdm import tqdm

    import mlirkit.datasets  # noqa: F401
    from mlirkit.base.fs import atomic_directory

    fmt = ExportFormat(fmt)
    ds = ir_datasets.load(dataset_id)
    default_lang = ds.docs_lang() if ds.has_docs() else None
    counts = {"docs": 0, "queries": 0, "qrels": 0}
    with atomic_directory(output, overwrite, kind="export") as tmp:
        with open(tmp / "corpus.jsonl", "w", encoding="utf-8") as f:
            for d in tqdm(ds.docs_iter(), desc=f"export {dataset_id} docs", unit="doc", disable=None):
                lang = getattr(d, "lang", None) or default_lang
                rec = ({"_id": _check_id("doc", d.doc_id), "title": "", "text": d.text} if fmt is ExportFormat.BEIR
                       else {"id": _check_id("doc", d.doc_id), "contents": d.text})
                if lang:
                    rec["lang"] = lang
                if hasattr(d, "group_id"):
                    rec["group_id"] = d.group_id
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                counts["docs"] += 1
        if ds.has_queries():
            q_default = ds.queries_lang()
            name = "queries.jsonl" if fmt is ExportFormat.BEIR else "topics.tsv"
            with open(tmp / name, "w", encoding="utf-8") as f:
                for q in ds.queries_iter():
                    _check_question(q.query_id, q.text)
                    lang = getattr(q, "lang", None) or q_default
                    if fmt is ExportFormat.BEIR:
                        rec = {"_id": _check_id("query", q.query_id), "text": q.text}
                        if lang:
                            rec["lang"] = lang
                        if hasattr(q, "group_id"):
                            rec["group_id"] = q.group_id
                        f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                    else:
                        text = " ".join(q.text.split())  # no tabs/newlines inside a TSV field
                        f.write("\t".join([_check_id("query", q.query_id), text] + ([lang] if lang else [])) + "\n")
                    counts["queries"] += 1
        if ds.has_qrels():
            qpath = tmp / "qrels" / "test.tsv" if fmt is ExportFormat.BEIR else tmp / "qrels.txt"
            qpath.parent.mkdir(exist_ok=True)
            with open(qpath, "w", encoding="utf-8") as f:
                if fmt is ExportFormat.BEIR:
                    f.write("query-id\tcorpus-id\tscore\n")
                for r in ds.qrels_iter():
                    qid, did = _check_id("qrels query", r.query_id), _check_id("qrels doc", r.doc_id)
                    cols = (qid, did, str(r.relevance)) if fmt is ExportFormat.BEIR \
                        else (qid, "0", did, str(r.relevance))
                    f.write(("\t" if fmt is ExportFormat.BEIR else " ").join(cols) + "\n")
                    counts["qrels"] += 1
    return counts


__all__ = ["ExportFormat", "export"]
