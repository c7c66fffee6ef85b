"""What mlirkit made: one "is this ours?" check per output kind, in one place.

``--overwrite`` replaces an existing output only when the check of its kind says mlirkit wrote it
(:func:`mlirkit.base.fs.refuse_existing`); anything else (a directory of photos, a source file, a file
where a directory is expected) is refused with one line. The checks read the format, never a name:

=============  ==========================================================================================
kind           an existing path counts as mlirkit's when
=============  ==========================================================================================
``index``      a directory whose ``meta.json`` is a JSON object with ``"format": "mlirkit-dense-index"``
               (FAISS) or ``"mlirkit-lucene-index"`` (BM25)
``run``        a file whose first 10,000 records parse as a TREC run (6 columns, integer rank, number score)
``qrels``      a file whose first 10,000 records parse as TREC qrels (4 columns) or BEIR qrels (header)
``report``     a file in the layout :mod:`mlirkit.eval.report` writes for its extension (``.json``: an
               object with ``_meta``; ``.md``: a ``| run |`` table, padded; ``.tex``: ``\\begin{table}``;
               ``.csv``: a ``run,`` header)
``transform``  a safetensors file whose metadata says ``"format": "mlirkit-transform"``
``provenance`` a JSON object with ``"format": "mlirkit-run-provenance"`` (a run's sidecar, :mod:`mlirkit.io.provenance`)
``dcl-model``  a directory holding ``mlirkit_dcl.json``
``benchmark``  a directory holding ``report.json`` and ``runs/``
``export``     a directory holding ``corpus.jsonl``
``qdrant-shard`` a directory holding ``mlirkit_qdrant.json`` (:mod:`mlirkit.index.qdrant_export`)
``checkpoint`` a directory holding ``trainer_state.pt``
``directory``  (the default of :func:`~mlirkit.base.fs.atomic_directory`) only an empty directory
``figure``     a PNG whose ``Software`` text is ``mlirkit``, or an SVG whose creator is (:mod:`mlirkit.eval.plots`)
``file``       (the default of :func:`~mlirkit.base.fs.atomic_file`) a regular file (never a directory):
               derived files such as caches
=============  ==========================================================================================

An empty directory counts as anyone's (nothing is lost by replacing it). Every directory kind but
``directory`` is registered with ``entries``, glob patterns of the names mlirkit writes at its top level
(:data:`INDEX_ENTRIES`, :data:`BENCHMARK_ENTRIES`, ...), and counts as mlirkit's only while it holds
nothing else: a file a user added there (notes, a fine-tuned head, a hand-made figure) makes the whole
directory foreign, and :func:`foreign_entry` names it.
"""
from __future__ import annotations

import fnmatch
import gzip
import json
import re
import struct
from itertools import islice
from pathlib import Path
from typing import Callable, Iterator

from mlirkit.base.errors import MlirkitError

INDEX_FORMAT = "mlirkit-dense-index"
LUCENE_INDEX_FORMAT = "mlirkit-lucene-index"
TRANSFORM_FORMAT = "mlirkit-transform"
PROVENANCE_FORMAT = "mlirkit-run-provenance"
#: a dense index (:mod:`mlirkit.io.index_files`: Pyserini's ``index`` and ``docid``, mlirkit's sidecars)
DENSE_INDEX_ENTRIES = ("index", "docid", "langs", "meta.json", "embeddings.npy", "transform.safetensors")
#: a BM25 index (:mod:`mlirkit.lexical.layout`): mlirkit's sidecars and Lucene's files, named as Lucene names
#: them (``IndexFileNames``: ``segments_N``, ``write.lock``, codec files ``_<segment>[_<suffix>].<ext>``)
LUCENE_INDEX_ENTRIES = ("docid", "langs", "meta.json", "segments_*", "pending_segments_*", "write.lock",
                        "_[0-9a-z]*.*")
#: either index format: ``--overwrite`` may replace one with the other
INDEX_ENTRIES = tuple(dict.fromkeys(DENSE_INDEX_ENTRIES + LUCENE_INDEX_ENTRIES))
#: ``python -m mlirkit.benchmark --output`` (:mod:`mlirkit.benchmark.pipeline`)
BENCHMARK_ENTRIES = ("report.json", "report.md", "runs", "plots", "transforms")
#: ``python -m mlirkit.index qdrant`` (:mod:`mlirkit.index.qdrant_export`)
QDRANT_SHARD_ENTRIES = ("shard", "mlirkit_qdrant.json", "lang_means.npy", "transform.safetensors")
#: records read by the TREC checks (a run of millions of lines is not read whole to decide)
SNIFF_RECORDS = 10_000

#: kind -> (whether the output is a directory, description, check)
_KINDS: dict[str, tuple[bool, str, Callable[[Path], bool]]] = {}
#: directory kind -> glob patterns of every top-level name mlirkit writes there (kinds without: not listed)
_ENTRIES: dict[str, tuple[str, ...]] = {}


def output_kind(name: str, *, directory: bool, description: str,
                entries: tuple[str, ...] | None = None) -> Callable[[Callable[[Path], bool]], Callable[[Path], bool]]:
    def register(check: Callable[[Path], bool]) -> Callable[[Path], bool]:
        _KINDS[name] = (directory, description, check)
        if entries is not None:
            _ENTRIES[name] = entries
        return check
    return register


def foreign_entry(path: Path, kind: str) -> Path | None:
    """The first entry of the directory ``path`` that mlirkit does not write for ``kind`` (None: none, or
    the kind lists no entries)."""
    patterns = _ENTRIES.get(kind)
    if patterns is None or not path.is_dir() or path.is_symlink():
        return None
    for entry in sorted(path.iterdir()):
        if not any(fnmatch.fnmatchcase(entry.name, p) for p in patterns):
            return entry
    return None


def kind_info(kind: str) -> tuple[bool, str, Callable[[Path], bool]]:
    if kind not in _KINDS:
        from mlirkit.base.registry import did_you_mean

        raise MlirkitError(f"unknown output kind {kind!r}{did_you_mean(kind, list(_KINDS))}")
    return _KINDS[kind]


def is_ours(path: Path, kind: str) -> bool:
    """Whether the existing ``path`` is an output of ``kind`` that mlirkit wrote (see the table above)."""
    return has_format(path, kind) and foreign_entry(path, kind) is None


def has_format(path: Path, kind: str) -> bool:
    """Whether the existing ``path`` is in the format of ``kind`` (its entries not looked at)."""
    directory, _, check = kind_info(kind)
    if path.is_symlink():
        return False
    if path.is_dir():
        if not directory:
            return False
        try:
            if not any(path.iterdir()):
                return True
        except OSError:
            return False
    elif directory or not path.is_file():
        return False
    try:
        return bool(check(path))
    except (OSError, ValueError, UnicodeDecodeError, EOFError, struct.error, RecursionError):
        return False


def _records(path: Path) -> Iterator[list[str]]:
    with open(path, "rb") as raw:
        gz = raw.read(2) == b"\x1f\x8b"
    opener = gzip.open if gz else open
    with opener(path, "rt", encoding="utf-8") as f:  # type: ignore[operator]
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                yield line.split()


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@output_kind("run", directory=False, description="a TREC run file")
def _run(path: Path) -> bool:
    return all(len(c) == 6 and c[3].lstrip("-").isdigit() and _is_number(c[4])
               for c in islice(_records(path), SNIFF_RECORDS))


@output_kind("qrels", directory=False, description="a qrels file")
def _qrels(path: Path) -> bool:
    rows = list(islice(_records(path), SNIFF_RECORDS))
    if rows and rows[0] == ["query-id", "corpus-id", "score"]:
        return all(len(c) == 3 and c[2].lstrip("-").isdigit() for c in rows[1:])
    return all(len(c) == 4 and c[3].lstrip("-").isdigit() for c in rows)


@output_kind("report", directory=False, description="an evaluation report")
def _report(path: Path) -> bool:
    suffix = path.suffix.lower()
    if suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        return isinstance(data, dict) and isinstance(data.get("_meta"), dict)
    with open(path, encoding="utf-8") as f:
        first = f.readline()
    if suffix in (".md", ".markdown"):  # columns are padded to the longest run name
        return re.match(r"\| (# +\| )?run +\|", first) is not None
    if suffix == ".tex":
        return first.startswith("\\begin{table}")
    if suffix == ".csv":
        return first.startswith("run,")
    return False


@output_kind("transform", directory=False, description="a transform file")
def _transform(path: Path) -> bool:
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            return False
        (n,) = struct.unpack("<Q", head)
        if n > 100_000_000:
            return False
        header = json.loads(f.read(n))
    return isinstance(header, dict) and (header.get("__metadata__") or {}).get("format") == TRANSFORM_FORMAT


@output_kind("provenance", directory=False, description="a run's provenance sidecar")
def _provenance(path: Path) -> bool:
    data = json.loads(path.read_text(encoding="utf-8"))
    return isinstance(data, dict) and data.get("format") == PROVENANCE_FORMAT


@output_kind("index", directory=True, description="an index directory", entries=INDEX_ENTRIES)
def _index(path: Path) -> bool:
    meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
    return isinstance(meta, dict) and meta.get("format") in (INDEX_FORMAT, LUCENE_INDEX_FORMAT)


@output_kind("dcl-model", directory=True, description="a DCL model directory",
             entries=("backbone", "heads.safetensors", "mlirkit_dcl.json", "train_config.json"))
def _dcl_model(path: Path) -> bool:
    return (path / "mlirkit_dcl.json").is_file()


@output_kind("benchmark", directory=True, description="a benchmark output directory",
             entries=BENCHMARK_ENTRIES)
def _benchmark(path: Path) -> bool:
    return (path / "report.json").is_file() and (path / "runs").is_dir()


@output_kind("export", directory=True, description="a dataset export directory",
             entries=("corpus.jsonl", "queries.jsonl", "topics.tsv", "qrels", "qrels.txt"))
def _export(path: Path) -> bool:
    return (path / "corpus.jsonl").is_file()


@output_kind("qdrant-shard", directory=True, description="an mlirkit Qdrant shard directory",
             entries=QDRANT_SHARD_ENTRIES)
def _qdrant_shard(path: Path) -> bool:
    return (path / "mlirkit_qdrant.json").is_file()


@output_kind("checkpoint", directory=True, description="a training checkpoint",
             entries=("model", "trainer_state.pt", "train_config.json", "rng-rank*.pt", "alignments-rank*.json"))
def _checkpoint(path: Path) -> bool:
    return (path / "trainer_state.pt").is_file()


#: what mlirkit's figures carry (:mod:`mlirkit.eval.plots`): PNG ``tEXt`` Software, SVG ``<dc:creator>``
FIGURE_MARK = "mlirkit"


@output_kind("figure", directory=False, description="a figure")
def _figure(path: Path) -> bool:
    with open(path, "rb") as f:
        head = f.read(65536)
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return b"tEXtSoftware\x00" + FIGURE_MARK.encode() in head
    return head.lstrip().startswith((b"<?xml", b"<svg")) and b"<dc:title>" + FIGURE_MARK.encode() + b"</dc:title>" in head


@output_kind("directory", directory=True, description="an empty directory")
def _directory(path: Path) -> bool:
    return False  # only an empty one (is_ours) may be replaced


@output_kind("file", directory=False, description="a file")
def _file(path: Path) -> bool:
    return True


__all__ = ["BENCHMARK_ENTRIES", "DENSE_INDEX_ENTRIES", "FIGURE_MARK", "INDEX_ENTRIES", "INDEX_FORMAT", "LUCENE_INDEX_ENTRIES",
           "LUCENE_INDEX_FORMAT", "PROVENANCE_FORMAT", "QDRANT_SHARD_ENTRIES", "SNIFF_RECORDS", "TRANSFORM_FORMAT",
           "foreign_entry", "has_format", "is_ours", "kind_info", "output_kind"]
