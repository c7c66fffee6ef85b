"""Provenance sidecars: where a run file came from, in a small JSON file beside it.

Every run written by :func:`mlirkit.io.trec.write_run` (``mlirkit.search``, the benchmark, fusion, ...) and
every run the Pyserini search wrapper publishes gets ``RUN.provenance.json`` beside ``RUN``::

    {"format": "mlirkit-run-provenance", "format_version": 1,
     "run": "base.trec", "run_sha256": "<sha256 of the run file's bytes>",
     "mlirkit_version": "0.1.0", "created": "2025-01-01T12:00:00+00:00",
     "command": ["python", "-m", "mlirkit.search", "--index", "...", ...],
     ...what the producer adds: "index": {"path", "meta_sha256"}, "encoder": {"name", "digest", "fingerprint"},
     "transform": {"sha256", "method", "alpha"} or null, "query_shift", "topics": {"source", "sha256"}, "k"}

The run file itself stays a plain 6-column TREC run (``ranx.Run.from_file(path, kind="trec")`` and
trec_eval read it unchanged); mlirkit's readers never read the sidecar as a run (a sidecar named in a
list of runs is skipped, :func:`is_sidecar`). ``run_sha256`` ties the sidecar to the bytes it describes:
:func:`describe_file` reports a sidecar whose hash differs (the run was replaced by another program) as
``stale`` and does not use it. The sidecar comes last: run and sidecar are written to temporaries under
both output locks and fsync-ed, then the run is renamed into place and only then the sidecar
(:func:`mlirkit.base.fs.claim_outputs`), so a failed write (a full disk) leaves neither a new run nor a
new sidecar and an old run keeps its own; it replaces an older sidecar (only one mlirkit wrote, judged by
its format). A sidecar is checked where it is read (:data:`SIDECAR`, :mod:`mlirkit.io.json_fields`): a
file at the sidecar's path that is not JSON, or a field of another type (an ``index`` that is a string,
a ``command`` that is a number), is one error naming the file and the field.
"""
from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from mlirkit.base.errors import MlirkitError
from mlirkit.base.outputs import PROVENANCE_FORMAT as FORMAT
from mlirkit.io.files import file_sha256
from mlirkit.io.json_fields import (OPT_SHA256, OPT_STRING, POSITIVE_INT, SHA256, STRING, check_json, either,
                                    list_of, map_of, read_json_file, record, value)

SUFFIX = ".provenance.json"
FORMAT_VERSION = 1


def sidecar_path(run_path: str | os.PathLike) -> Path:
    """``runs/base.trec`` -> ``runs/base.trec.provenance.json``."""
    run_path = Path(run_path)
    return run_path.with_name(run_path.name + SUFFIX)


def is_sidecar(path: str | os.PathLike) -> bool:
    """Whether ``path`` names a provenance sidecar (by its suffix: what a shell glob ``runs/*`` adds)."""
    return str(path).endswith(SUFFIX)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_record(v: Any, field: str) -> None:
    """What :func:`describe_file` / :func:`describe_source` write (a run's inputs are described so)."""
    FILE(v, field)


def _sidecar(v: Any, field: str) -> None:
    SIDECAR(v, field)


#: an input as :func:`describe_source` records it: a file (path, sha256, its own sidecar) or a name
FILE = record({"path": STRING, "sha256": SHA256, "provenance": _sidecar, "provenance_stale": STRING, "source": STRING})
#: the fields of a sidecar and their shapes (fields a newer mlirkit adds are allowed)
SIDECAR = record({
    "format": value("string", test=lambda v: v == FORMAT, what=repr(FORMAT)),
    "format_version": value("int", test=lambda v: v == FORMAT_VERSION, what=str(FORMAT_VERSION)),
    "run": STRING, "run_sha256": SHA256, "mlirkit_version": STRING, "created": STRING,
    "command": list_of(STRING), "producer": STRING,
    "index": record({"path": STRING, "meta_sha256": OPT_SHA256, "name": OPT_STRING,
                     "shards": list_of(record({"path": STRING, "meta_sha256": OPT_SHA256}, required=("path",)))}),
    "encoder": record({"name": OPT_STRING, "digest": OPT_STRING, "class": OPT_STRING,
                       "fingerprint": value("object", "null")}),
    "transform": either(value("null"), record({"method": OPT_STRING, "sha256": OPT_STRING, "file": OPT_STRING,
                                               "alpha": either(value("number", "null"), map_of(value("number")))})),
    "query_shift": value("object", "null"), "topics": _file_record, "hits": POSITIVE_INT, "k": POSITIVE_INT,
    "bm25": record({"k1": value("number", test=lambda v: v >= 0, what="a number >= 0"),
                    "b": value("number", test=lambda v: 0 <= v <= 1, what="a number in [0, 1]"),
                    "statistics": STRING}),
    "fusion": record({"method": STRING, "norm": STRING, "params": value("object"), "keep_languages": value("bool")}),
    "runs": list_of(_file_record),
    "tuned": record({"on": list_of(_file_record), "qrels": _file_record, "metric": STRING}),
    "benchmark": record({"split": STRING, "system": STRING}),
}, required=("format", "format_version", "run", "run_sha256", "command"))


def sidecar_bytes(run_path: str | os.PathLike, run_sha256: str, provenance: Mapping[str, Any] | None = None) -> bytes:
    """The sidecar of the run at ``run_path`` whose bytes hash to ``run_sha256``: the common fields (version,
    time, command) and the producer's ``provenance``, as the bytes of ``RUN.provenance.json``; the writer
    publishes them after the run (:func:`mlirkit.io.trec.write_run`). The command is the one the producer
    passes as ``provenance["command"]`` (a CLI passes its own, :func:`mlirkit.base.cli.cli_command`), else
    this process's ``sys.argv`` (a script's)."""
    import sys

    # the package is imported before any of its modules; read here without an import statement, so this low
    # layer does not depend on the package root (which registers the dataset ids)
    __version__ = getattr(sys.modules.get("mlirkit"), "__version__", "unknown")

    record_ = {"format": FORMAT, "format_version": FORMAT_VERSION, "run": Path(run_path).name,
               "run_sha256": run_sha256, "mlirkit_version": __version__,
               "created": datetime.now(timezone.utc).isoformat(timespec="seconds"), "command": list(sys.argv),
               **dict(provenance or {})}
    text = json.dumps(record_, indent=2, ensure_ascii=False, sort_keys=False, default=str) + "\n"
    check_json(sidecar_path(run_path), json.loads(text), SIDECAR)  # what is written reads back
    return text.encode("utf-8")


def read_sidecar(run_path: str | os.PathLike) -> dict[str, Any] | None:
    """The sidecar of ``run_path`` as a dict, or None when there is none; a file there that is not a sidecar
    with its fields of their types (:data:`SIDECAR`) is one error naming the file and the field."""
    path = sidecar_path(run_path)
    if not (path.exists() or path.is_symlink()):
        return None
    if path.is_dir():
        raise MlirkitError(f"{path}: a directory, not a provenance sidecar")
    return check_json(path, read_json_file(path), SIDECAR)


def describe_file(path: str | os.PathLike) -> dict[str, Any]:
    """What an evaluation report lists for an input file: ``path``, ``sha256`` and, for a run with a sidecar,
    ``provenance`` (the sidecar) or ``provenance_stale`` (a sidecar written for other bytes)."""
    path = Path(path)
    out: dict[str, Any] = {"path": str(path), "sha256": file_sha256(path)}
    sidecar = read_sidecar(path)
    if sidecar is not None:
        if sidecar.get("run_sha256") == out["sha256"]:
            out["provenance"] = sidecar
        else:
            out["provenance_stale"] = str(sidecar_path(path))
    return out


def describe_source(source: str | os.PathLike) -> dict[str, Any]:
    """A file as :func:`describe_file`; anything else (an ir_datasets id, a folder) by its name."""
    return describe_file(source) if Path(source).is_file() else {"source": str(source)}


def summary(record: Mapping[str, Any]) -> str:
    """One line saying where a run came from, from its sidecar: the command, the index, encoder, transform."""
    parts = []
    if record.get("command"):
        import shlex

        parts.append(shlex.join(str(c) for c in record["command"]))
    index = record.get("index") or {}
    if index.get("path"):
        parts.append(f"index {index['path']}" + (f" (meta {index['meta_sha256'][:12]})" if index.get("meta_sha256") else ""))
    encoder = record.get("encoder") or {}
    if encoder.get("name") or encoder.get("digest"):
        parts.append(f"encoder {encoder.get('name') or '?'}" + (f" ({encoder['digest'][:12]})" if encoder.get("digest") else ""))
    transform = record.get("transform") or {}
    if transform.get("sha256"):
        parts.append(f"transform {transform.get('method', '')} {transform['sha256'][:12]} alpha {transform.get('alpha')}")
    parts.append(f"mlirkit {record.get('mlirkit_version', '?')}")
    return "; ".join(parts)


__all__ = ["FILE", "FORMAT", "SIDECAR", "SUFFIX", "describe_file", "describe_source", "is_sidecar",
           "read_sidecar", "sha256_bytes", "sidecar_bytes", "sidecar_path", "summary"]
