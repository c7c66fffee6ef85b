"""Where upstream files come from: a local data root, else ir_datasets' download mechanism, else an error.

Lookup order for a file with relative path ``REL`` (e.g. ``belebele/data/eng_Latn.jsonl``):

1. ``$MLIRKIT_DATA/REL`` when the environment variable ``MLIRKIT_DATA`` is set;
2. ``$IR_DATASETS_HOME/mlirkit/REL`` (``IR_DATASETS_HOME`` defaults to ``~/.ir_datasets``);
3. a download from the upstream host into location 2 through ``ir_datasets.util.Download``, which
   writes ``REL.tmp`` and renames it only when complete (a failed download leaves nothing behind);
   skipped when offline (``MLIRKIT_OFFLINE``, ``HF_HUB_OFFLINE`` or ``HF_DATASETS_OFFLINE`` set to 1/true).

When none works, :class:`MissingDataError` names the file, where to get it and where to put it.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from mlirkit.base.errors import MlirkitError

logger = logging.getLogger(__name__)

ENV_DATA = "MLIRKIT_DATA"
OFFLINE_ENVS = ("MLIRKIT_OFFLINE", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
DOCS_HINT = "see docs/datasets.md"


class MissingDataError(MlirkitError, FileNotFoundError):
    """An upstream file is neither present locally nor downloadable."""


@dataclass(frozen=True)
class SourceFile:
    """One upstream file: its place under a data root, its download URL and how a user gets it."""

    relpath: str
    url: str | None = None
    how: str = ""  # where it comes from, e.g. "https://huggingface.co/datasets/facebook/belebele (CC BY-SA 4.0)"
    md5: str | None = None


def default_root() -> Path:
    """``$IR_DATASETS_HOME/mlirkit`` (where downloads go)."""
    home = os.environ.get("IR_DATASETS_HOME") or str(Path.home() / ".ir_datasets")
    return Path(home) / "mlirkit"


def data_roots() -> list[Path]:
    roots = []
    if os.environ.get(ENV_DATA):
        roots.append(Path(os.environ[ENV_DATA]).expanduser())
    roots.append(default_root())
    return roots


def roots_key() -> tuple:
    """What a built collection depends on besides the files: the data-root environment variables."""
    return (os.environ.get(ENV_DATA), os.environ.get("IR_DATASETS_HOME"))


def is_offline() -> bool:
    return any(os.environ.get(v, "").strip().lower() in {"1", "true", "yes", "on"} for v in OFFLINE_ENVS)


def locate(relpath: str) -> Path | None:
    """The first existing ``root/relpath`` over :func:`data_roots`, else None."""
    for root in data_roots():
        p = root / relpath
        if p.is_file():
            return p
    return None


def _where(relpath: str) -> str:
    places = [str(default_root() / relpath)]
    if os.environ.get(ENV_DATA):
        places.insert(0, str(Path(os.environ[ENV_DATA]).expanduser() / relpath))
    else:
        places.append(f"${ENV_DATA}/{relpath}")
    return " or ".join(places)


def missing_message(sf: SourceFile, *, why: str = "", also_missing: int = 0, alternative: str = "") -> str:
    if sf.url:
        get = f"from {sf.url}" + (f" ({sf.how})" if sf.how else "")
    else:
        get = f"from {sf.how}" if sf.how else ""
    msg = f"missing file {sf.relpath}"
    if why:
        msg += f" ({why})"
    msg += f": get it {get} and put it at {_where(sf.relpath)}" if get else f": put it at {_where(sf.relpath)}"
    if also_missing:
        msg += f"; {also_missing} more file(s) of this dataset are missing too"
    if alternative:
        msg += f"; alternatively {alternative}"
    return f"{msg}; {DOCS_HINT}"


def _short(e: Exception, limit: int = 160) -> str:
    text = " ".join(f"{type(e).__name__}: {e}".split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _download(sf: SourceFile, target: Path, alternative: str = "") -> Path:
    from ir_datasets.util.download import Download, RequestsDownload

    created = []
    parent = target.parent
    while not parent.exists():
        created.append(parent)
        parent = parent.parent
    logger.info("downloading %s -> %s", sf.url, target)
    try:
        Download([RequestsDownload(sf.url)], cache_path=str(target), expected_md5=sf.md5).path()
    except Exception as e:  # network, HTTP, md5: ir_datasets removed its .tmp file already
        Path(f"{target}.tmp").unlink(missing_ok=True)
        for d in created:  # directories made for this download only
            try:
                d.rmdir()
            except OSError:
                pass
        raise MissingDataError(missing_message(sf, why=f"download failed: {_short(e)}", alternative=alternative)) from None
    return target


def fetch(sf: SourceFile, *, download: bool = True, alternative: str = "") -> Path:
    """Path of a local copy of ``sf``, downloading it when allowed; :class:`MissingDataError` otherwise."""
    p = locate(sf.relpath)
    if p is not None:
        return p
    if download and sf.url and not is_offline():
        return _download(sf, default_root() / sf.relpath, alternative)
    why = "offline mode" if (sf.url and is_offline()) else ""
    raise MissingDataError(missing_message(sf, why=why, alternative=alternative))


def all_local(files: list[SourceFile]) -> bool:
    return all(locate(sf.relpath) is not None for sf in files)


def fetch_all(files: list[SourceFile], *, alternative: str = "") -> dict[str, Path]:
    """Every file of a dataset, or one error naming the first missing one (nothing is downloaded
    when some file cannot be had anyway, offline)."""
    missing = [sf for sf in files if locate(sf.relpath) is None]
    if missing and (is_offline() or any(not sf.url for sf in missing)):
        first = next((sf for sf in missing if not sf.url), missing[0])
        why = "offline mode" if is_offline() and first.url else ""
        raise MissingDataError(missing_message(first, why=why, also_missing=len(missing) - 1, alternative=alternative))
    return {sf.relpath: fetch(sf, alternative=alternative) for sf in files}
