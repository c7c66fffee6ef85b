"""TREC run and qrels files (and BEIR qrels TSV): strict readers, deterministic atomic writers.

Formats (trec_eval's):

- **run**, 6 whitespace-separated columns ``qid Q0 docno rank score tag``. ``Q0`` and ``rank`` are
  read but ignored, as trec_eval does: documents are ranked by ``(-score, docno)``. Every line must
  carry the same run tag (a file with several tags is a concatenation of runs and is refused).
- **qrels**, TREC: 4 whitespace-separated columns ``qid iter docno rel`` (``iter`` ignored, ``rel`` an
  integer); BEIR: a TSV whose first line is the header ``query-id<TAB>corpus-id<TAB>score`` followed
  by ``qid<TAB>docno<TAB>int`` rows.

Ids are strings (never converted to numbers), checked by :func:`mlirkit.io.fields.check_id` (no
control characters; a BEIR TSV id with a space inside is refused). A byte-order mark at the start of
the file is dropped. Blank lines and lines starting with ``#`` are
skipped. Files starting with the gzip magic bytes are decompressed (:mod:`mlirkit.io.files`). Every
malformed line raises :class:`~mlirkit.base.errors.InputFormatError` naming ``file:line``; a (query,
document) pair that occurs twice is refused.

Writers sort queries by id and documents by ``(-score, docno)``, number ranks from 1, end the file
with a newline, write to a temporary sibling and rename it on success, and refuse to replace an
existing file unless ``overwrite=True``. A path ending in ``.gz`` is written gzip-compressed
(with a zero timestamp, so equal runs give equal bytes). :func:`write_run` also writes the run's provenance
sidecar ``RUN.provenance.json`` (:mod:`mlirkit.io.provenance`), which the readers never read as a run
(:func:`run_files` drops sidecars from a list of runs).
"""
from __future__ import annotations

import gzip
import io
import math
import numbers
import os
import re
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from mlirkit.base.errors import MlirkitError, format_error
from mlirkit.io.fields import check_id
from mlirkit.io.files import iter_lines

RUN_TAG_RE = re.compile(r"^[A-Za-z0-9_.+:=@-]{1,128}$")
BEIR_HEADER = ("query-id", "corpus-id", "score")


def validate_run_tag(tag: str) -> str:
    """Return ``tag`` if it is a valid run tag (1-128 of ``A-Z a-z 0-9 _ . + : = @ -``), else raise."""
    if not isinstance(tag, str) or not RUN_TAG_RE.match(tag):
        raise MlirkitError(f"invalid run tag {tag!r}: use 1-128 characters from A-Z a-z 0-9 _ . + : = @ - "
                           "(no whitespace)")
    return tag


def default_run_tag(path: str | os.PathLike) -> str:
    """The run tag that names a run after its file: the file name without ``.gz`` and its extension
    (``runs/shift.trec`` -> ``shift``), characters a tag cannot hold replaced by ``_``. So
    ``ranx.Run.from_file`` gives runs written to different files different names."""
    name = Path(path).name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    stem = name.rsplit(".", 1)[0] if "." in name.strip(".") else name
    tag = re.sub(r"[^A-Za-z0-9_.+:=@-]", "_", stem)[:128]
    return tag or "run"


def run_tag_for(tag: str | None, path: str | os.PathLike) -> str:
    """The tag a CLI writes into the run ``path``: ``tag`` if given (checked), else :func:`default_run_tag`."""
    return validate_run_tag(tag) if tag is not None else default_run_tag(path)


def _iter_records(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` for every non-blank, non-comment line; strict UTF-8."""
    return iter_lines(path, skip_comments=True)


def _parse_score(text: str, path: Path, line_no: int) -> float:
    try:
        score = float(text)
    except ValueError:
        raise format_error(path, line_no, f"score {text!r} is not a number") from None
    if not math.isfinite(score):
        raise format_error(path, line_no, f"score {text!r} is not finite")
    return score


def _parse_int(text: str, what: str, path: Path, line_no: int) -> int:
    try:
        return int(text)
    except ValueError:
        raise format_error(path, line_no, f"{what} {text!r} is not an integer") from None


def _check_ids(qid: str, docno: str, path: Path, line_no: int) -> None:
    if qid and docno and " " not in qid and " " not in docno and (qid + docno).isprintable():
        return  # the common case, in one pass; else check_id names the field and the character
    where = f"{path}:{line_no}"
    check_id(qid, where, "query id")
    check_id(docno, where, "document id")


def _check_run_line(cols: list[str], path: Path, line_no: int, tag: str | None, tag_line: int) -> float:
    """Every check of one run line, in order (the first failing one raises); returns its score."""
    if len(cols) != 6:
        raise format_error(path, line_no, f"expected 6 columns (qid Q0 docno rank score tag), got {len(cols)}")
    qid, _, docno, rank, score_text, line_tag = cols
    _check_ids(qid, docno, path, line_no)
    _parse_int(rank, "rank", path, line_no)
    score = _parse_score(score_text, path, line_no)
    if not RUN_TAG_RE.match(line_tag):
        raise format_error(path, line_no, f"invalid run tag {line_tag!r}")
    if tag is not None and line_tag != tag:
        raise format_error(path, line_no, f"run tag {line_tag!r} differs from {tag!r} on line {tag_line} "
                                          "(one run per file)")
    return score


def read_run_with_tag(path: str | os.PathLike) -> tuple[dict[str, dict[str, float]], str]:
    """Read a 6-column TREC run: ``({qid: {docno: score}}, run tag)``.

    A line passes a quick test (6 columns, printable ids, integer rank, finite score, the tag of the first
    line); one that fails it, and the first line, go through :func:`_check_run_line`, which raises the error
    naming the field."""
    path = Path(path)
    run: dict[str, dict[str, float]] = {}
    tag: str | None = None
    tag_line = 0
    isfinite = math.isfinite
    for line_no, line in _iter_records(path):
        cols = line.split()
        try:
            qid, _, docno, rank, score_text, line_tag = cols
            int(rank)
            score = float(score_text)
            passed = line_tag == tag and isfinite(score) and (qid + docno).isprintable()
        except ValueError:  # not 6 columns, a rank or score that is not a number
            passed = False
        if not passed:
            score = _check_run_line(cols, path, line_no, tag, tag_line)
            if tag is None:
                tag, tag_line = line_tag, line_no
        docs = run.get(qid)
        if docs is None:
            docs = run[qid] = {}
        elif docno in docs:
            raise format_error(path, line_no, f"duplicate document {docno!r} for query {qid!r}")
        docs[docno] = score
    if tag is None:
        raise MlirkitError(f"{path}: empty run (no result lines)")
    return run, tag


def run_files(paths: Iterable[str]) -> list[str]:
    """A list of run files without the provenance sidecars among them (``RUN.provenance.json``, which a shell
    glob ``runs/*`` lists beside each run; :mod:`mlirkit.io.provenance`): they are skipped, with an INFO line."""
    import logging

    from mlirkit.io.provenance import is_sidecar

    paths = list(paths)
    skipped = [str(p) for p in paths if is_sidecar(p)]
    if skipped:
        logging.getLogger(__name__).info("not runs, skipped: %s (provenance sidecars)", ", ".join(skipped))
    return [p for p in paths if not is_sidecar(p)]


def read_run(path: str | os.PathLike) -> dict[str, dict[str, float]]:
    """Read a 6-column TREC run as ``{qid: {docno: score}}`` (see the module docstring)."""
    return read_run_with_tag(path)[0]


def read_run_tag(path: str | os.PathLike) -> str:
    """The run tag of a TREC run file."""
    return read_run_with_tag(path)[1]


def add_judgement(qrels: dict[str, dict[str, int]], qid: str, docno: str, rel: int, path: object,
                  line_no: int | None) -> None:
    """Record one judgement; the one duplicate rule of every qrels reader: a (query, document) pair
    judged twice is an error naming where the second judgement is."""
    docs = qrels.setdefault(qid, {})
    if docno in docs:
        raise format_error(path, line_no, f"duplicate judgement of document {docno!r} for query {qid!r}")
    docs[docno] = rel


def read_qrels(path: str | os.PathLike) -> dict[str, dict[str, int]]:
    """Read TREC 4-column qrels or BEIR TSV qrels (with header) as ``{qid: {docno: relevance}}``
    (:func:`mlirkit.io.qrels.read_qrels` also reads the qrels of an ir_datasets id)."""
    path = Path(path)
    qrels: dict[str, dict[str, int]] = {}
    beir: bool | None = None
    for line_no, line in _iter_records(path):
        if beir is None:  # decided by the first record
            cols = line.split("\t")
            beir = len(cols) == 3
            if beir:
                if tuple(c.strip() for c in cols) != BEIR_HEADER:
                    raise format_error(path, line_no, "3 tab-separated columns: a BEIR qrels TSV must start with "
                                                      "the header 'query-id<TAB>corpus-id<TAB>score'")
                continue
        if beir:
            cols = line.split("\t")
            if len(cols) != 3:
                raise format_error(path, line_no, f"expected 3 tab-separated columns (query-id corpus-id score), "
                                                  f"got {len(cols)}")
            qid, docno, rel_text = (c.strip() for c in cols)
            if not qid or not docno:
                raise format_error(path, line_no, "empty query or document id")
        else:
            cols = line.split()
            if len(cols) != 4:
                raise format_error(path, line_no, f"expected 4 columns (qid iter docno rel), got {len(cols)}")
            qid, _, docno, rel_text = cols
        _check_ids(qid, docno, path, line_no)
        add_judgement(qrels, qid, docno, _parse_int(rel_text, "relevance", path, line_no), path, line_no)
    if not qrels:
        raise MlirkitError(f"{path}: empty qrels (no judgement lines)")
    return qrels


def ranked(docs: Mapping[str, float]) -> list[tuple[str, float]]:
    """``docs`` as ``[(docno, score), ...]`` in the deterministic order ``(-score, docno)``."""
    return sorted(docs.items(), key=lambda item: (-item[1], item[0]))


def _check_id(value: object, what: str) -> str:
    if not isinstance(value, str) or not value or any(c.isspace() for c in value):
        raise MlirkitError(f"invalid {what} {value!r}: ids must be non-empty strings without whitespace")
    return value


def _format_score(score: float) -> str:
    score = float(score)
    if not math.isfinite(score):
        raise MlirkitError(f"cannot write a non-finite score ({score})")
    return repr(score)  # shortest text that reads back to the same float


def _write_bytes(path: str | os.PathLike, data: bytes, overwrite: bool, kind: str,
                 sidecar: dict[str, Any] | None = None) -> None:
    """``data`` (UTF-8 text) to ``path`` atomically, gzip-compressed for a ``.gz`` path (zero timestamp: equal
    text, equal bytes); with ``sidecar``, the provenance sidecar is published after the file, both written
    and fsync-ed first (:func:`mlirkit.base.fs.claim_outputs`): a failed write publishes neither."""
    from mlirkit.base.fs import claim_outputs, write_durably

    path = Path(path)
    if path.suffix == ".gz":
        buffer = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0) as gz:
            gz.write(data)
        data = buffer.getvalue()
    outputs = [(path, overwrite, kind, False)]
    if sidecar is not None:
        from mlirkit.io.provenance import sha256_bytes, sidecar_bytes, sidecar_path

        side = sidecar_bytes(path, sha256_bytes(data), sidecar)
        outputs.append((sidecar_path(path), True, "provenance", False))
    with claim_outputs(outputs) as tmps:
        write_durably(tmps[0], data)
        if sidecar is not None:
            write_durably(tmps[1], side)


def write_run(run: Mapping[str, Mapping[str, float]], path: str | os.PathLike, tag: str,
              overwrite: bool = False, *, k: int | None = None,
              provenance: Mapping[str, Any] | None = None) -> None:
    """Write ``{qid: {docno: score}}`` as a 6-column TREC run, and its provenance sidecar beside it.

    Queries in id order, documents by ``(-score, docno)`` with ranks from 1; ``k`` keeps only the
    first ``k`` documents of each query. Scores are written with the shortest text that reads back
    to the same float, so a read-write round trip keeps every score (and therefore the ranking).
    ``RUN.provenance.json`` (:mod:`mlirkit.io.provenance`) records the command (``provenance["command"]``,
    which a CLI passes, else ``sys.argv``), the mlirkit version, the run's sha256 and what else the producer
    passes as ``provenance`` (index, encoder, transform, topics).
    """
    validate_run_tag(tag)
    if k is not None and (isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1):
        raise MlirkitError(f"k must be a whole number >= 1, got {k!r}")
    lines: list[str] = []
    checked: set[str] = set()  # each document id checked once (a run repeats them across its queries)
    for qid in sorted(run):
        _check_id(qid, "query id")
        for rank, (docno, score) in enumerate(ranked(run[qid])[:k], start=1):
            if not (isinstance(docno, str) and docno in checked):
                checked.add(_check_id(docno, "document id"))
            lines.append(f"{qid} Q0 {docno} {rank} {_format_score(score)} {tag}\n")
    _write_bytes(path, "".join(lines).encode("utf-8"), overwrite, "run", sidecar=dict(provenance or {}))


def write_qrels(qrels: Mapping[str, Mapping[str, int]], path: str | os.PathLike, overwrite: bool = False,
                *, beir: bool = False) -> None:
    """Write ``{qid: {docno: rel}}`` as TREC 4-column qrels (``qid 0 docno rel``), or as a BEIR TSV
    with header when ``beir=True``; queries and documents in id order."""
    lines: list[str] = ["\t".join(BEIR_HEADER) + "\n"] if beir else []
    for qid in sorted(qrels):
        _check_id(qid, "query id")
        for docno in sorted(qrels[qid]):
            _check_id(docno, "document id")
            rel = qrels[qid][docno]
            if isinstance(rel, bool) or int(rel) != rel:
                raise MlirkitError(f"relevance of ({qid}, {docno}) must be an integer, got {rel!r}")
            lines.append(f"{qid}\t{docno}\t{int(rel)}\n" if beir else f"{qid} 0 {docno} {int(rel)}\n")
    _write_bytes(path, "".join(lines).encode("utf-8"), overwrite, "qrels")


__all__ = ["BEIR_HEADER", "RUN_TAG_RE", "add_judgement", "default_run_tag", "ranked", "read_qrels", "read_run", "read_run_tag", "read_run_with_tag",
           "run_files", "run_tag_for", "validate_run_tag", "write_qrels", "write_run"]
