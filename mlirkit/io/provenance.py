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
``stale`` and does not use it. The sidecar is written while the run's output lock is held, before the
run is renamed into place; it replaces an older sidecar (only one mlirkit wrote, judged by its format).
"""
from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from mlirkit.base.outputs import PROVENANCE_FORMAT as FORMAT
from mlirkit.io.files import file_sha256

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


def command() -> list[str]:
    """The command that is running: what :func:`mlirkit.base.cli.run_cli` recorded (``python -m mlirkit.X
    ARGS``), else this process's ``sys.argv``."""
    import sys

    from mlirkit.base.cli import current_command

    return list(current_command() or sys.argv)


def write_sidecar(run_path: str | os.PathLike, run_sha256: str, provenance: Mapping[str, Any] | None = None) -> Path:
    """Write ``RUN.provenance.json`` for the run at ``run_path`` whose bytes hash to ``run_sha256``, with the
    common fields (version, time, command) and the producer's ``provenance``; an older sidecar is replaced."""
    import sys

    from mlirkit.base.fs import atomic_file

    # the package is imported before any of its modules; read here without an import statement, so this low
    # layer does not depend on the package root (which registers the dataset ids)
    __version__ = getattr(sys.modules.get("mlirkit"), "__version__", "unknown")

    record = {"format": FORMAT, "format_version": FORMAT_VERSION, "run": Path(run_path).name,
              "run_sha256": run_sha256, "mlirkit_version": __version__,
              "created": datetime.now(timezone.utc).isoformat(timespec="seconds"), "command": command(),
              **dict(provenance or {})}
    path = sidecar_path(run_path)
    with atomic_file(path, overwrite=True, mode="w", kind="provenance") as f:
        f.write(json.dumps(record, indent=2, ensure_ascii=False, sort_keys=False, default=str) + "\n")
    return path


def read_sidecar(run_path: str | os.PathLike) -> dict[str, Any] | None:
    """The sidecar of ``run_path`` as a dict, or None when there is none or it is not one mlirkit wrote."""
    path = sidecar_path(run_path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None
    return data if isinstance(data, dict) and data.get("format") == FORMAT else None


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


__all__ = ["FORMAT", "SUFFIX", "command", "describe_file", "describe_source", "is_sidecar", "read_sidecar",
           "sha256_bytes", "sidecar_path", "summary", "write_sidecar"]
