"""Where upstream files come from: a local data root, else mlirkit's bundled copy, else ir_datasets' download
mechanism, else an error.

Lookup order for a file with relative path ``REL`` (e.g. ``belebele/data/eng_Latn.jsonl``):

1. ``$MLIRKIT_DATA/REL`` when the environment variable ``MLIRKIT_DATA`` is set;
2. ``$IR_DATASETS_HOME/mlirkit/REL`` (``IR_DATASETS_HOME`` defaults to ``~/.ir_datasets``);
   a JSON or JSON Lines file may also be placed gzip-compressed as ``REL.gz`` at either place;
3. for the files mlirkit bundles (XQuAD-R, Tatoeba: ``SourceFile.bundled`` names the archive in
   ``resources/``), the bundled copy. A bundled member is the upstream file byte for byte: its MD5
   (``resources/manifest.json``) is checked when it is read and is the MD5 a download of that file must
   have, so downloading it would fetch the same bytes; no network is tried, online or not;
4. a download from the upstream host into location 2 through ``ir_datasets.util.Download``, which
   writes ``REL.tmp`` and renames it only when complete (a failed download leaves nothing behind;
   with a known MD5, a download that differs is refused); skipped when offline (``MLIRKIT_OFFLINE``,
   ``HF_HUB_OFFLINE`` or ``HF_DATASETS_OFFLINE`` set to 1/true). A host name that does not resolve is
   one line, without ir_datasets' retries.

When none works, :class:`MissingDataError` names the file, where to get it and where to put it.
"""
from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

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
    bundled: str | None = None  # the archive in resources/ holding this file under ``relpath``, if any


class BundledFile(NamedTuple):
    """An upstream file read from mlirkit's bundled archive: its bytes (MD5 checked against the manifest)."""

    relpath: str
    archive: Path
    data: bytes

    def __str__(self) -> str:  # where, in error messages
        return f"{self.archive}:{self.relpath}"


def bundled_source(relpath: str, url: str, how: str, archive: str) -> SourceFile:
    """A :class:`SourceFile` that mlirkit bundles in ``archive``, with the MD5 of the bundled copy."""
    return SourceFile(relpath, url, how, _member_info(archive, relpath).get("md5"), archive)


def _member_info(archive: str, relpath: str) -> dict:
    from mlirkit.datasets.resources import manifest

    return manifest().get("upstream", {}).get(archive, {}).get("members", {}).get(relpath, {})


def bundled_available(files: list[SourceFile]) -> bool:
    """True when every file of ``files`` has a bundled copy in an archive that is installed."""
    from mlirkit.datasets.resources import resources_dir

    return all(sf.bundled and _member_info(sf.bundled, sf.relpath) and (resources_dir() / sf.bundled).is_file()
               for sf in files)


def read_bundled(files: list[SourceFile]) -> dict[str, BundledFile]:
    """The bundled copies of ``files`` (each archive read once); a member that is absent or whose MD5
    differs from the manifest's is an error naming the archive."""
    import lzma
    import tarfile

    from mlirkit.datasets.resources import resource

    out: dict[str, BundledFile] = {}
    for archive in dict.fromkeys(sf.bundled for sf in files):
        path = resource(archive)
        wanted = {sf.relpath for sf in files if sf.bundled == archive}
        try:
            with lzma.open(path) as raw, tarfile.open(fileobj=raw, mode="r|") as tar:
                for member in tar:
                    if member.name in wanted and member.isfile():
                        out[member.name] = BundledFile(member.name, path, tar.extractfile(member).read())
        except (OSError, EOFError, lzma.LZMAError, tarfile.TarError) as e:
            raise MlirkitError(f"{path}: cannot read the bundled archive ({e}); reinstall mlirkit") from None
        for rel in sorted(wanted):
            expected = _member_info(archive, rel).get("md5")
            if rel not in out or expected is None or hashlib.md5(out[rel].data).hexdigest() != expected:
                raise MlirkitError(f"{path}: member {rel} is " + ("missing" if rel not in out else
                                   "not the file the manifest lists (MD5 differs)") + "; reinstall mlirkit")
    return out


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


#: files that may also be placed gzip-compressed (``REL.gz``; read by content)
GZ_SUFFIXES = (".json", ".jsonl")


def locate(relpath: str) -> Path | None:
    """The first existing ``root/relpath`` over :func:`data_roots` (for JSON files also ``root/relpath.gz``), else None."""
    names = [relpath, relpath + ".gz"] if relpath.endswith(GZ_SUFFIXES) else [relpath]
    for root in data_roots():
        for name in names:
            p = root / name
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


def unreachable(url: str) -> str | None:
    """Why ``url`` cannot be downloaded before trying (its host name does not resolve: no network, and no proxy
    that would resolve it), or None. Spares the attempt and ir_datasets' retry lines on an offline machine."""
    import socket
    import urllib.parse
    import urllib.request

    parts = urllib.parse.urlsplit(url)
    if not parts.hostname or urllib.request.getproxies().get(parts.scheme):
        return None
    try:
        socket.getaddrinfo(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
    except OSError as e:
        return f"no network: {parts.hostname} does not resolve ({e.strerror or type(e).__name__})"
    return None


def download_file(sf: SourceFile, target: Path, alternative: str = "") -> Path:
    """Download ``sf`` to ``target`` through ir_datasets (atomic; its MD5 checked when known); a failure is a
    :class:`MissingDataError` naming the file and the way to get it."""
    from ir_datasets.util.download import Download, RequestsDownload

    reason = unreachable(sf.url)
    if reason is not None:
        error = MissingDataError(missing_message(sf, why=f"download failed: {reason}", alternative=alternative))
        error.reason = reason
        raise error
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
        error = MissingDataError(missing_message(sf, why=f"download failed: {_short(e)}", alternative=alternative))
        error.reason = _short(e)
        raise error from None
    return target


def fetch(sf: SourceFile, *, download: bool = True, alternative: str = "") -> Path:
    """Path of a local copy of ``sf``, downloading it when allowed; :class:`MissingDataError` otherwise."""
    p = locate(sf.relpath)
    if p is not None:
        return p
    if download and sf.url and not is_offline():
        return download_file(sf, default_root() / sf.relpath, alternative)
    why = "offline mode" if (sf.url and is_offline()) else ""
    raise MissingDataError(missing_message(sf, why=why, alternative=alternative))


def all_local(files: list[SourceFile]) -> bool:
    return all(locate(sf.relpath) is not None for sf in files)


def fetch_all(files: list[SourceFile], *, alternative: str = "") -> dict[str, Path | BundledFile]:
    """Every file of a dataset: a local copy, else the bundled copy, else a download (module docstring); or
    one error naming the first missing file (nothing is downloaded when some file cannot be had anyway,
    offline)."""
    out: dict[str, Path | BundledFile] = {}
    missing, from_bundle = [], []
    for sf in files:
        p = locate(sf.relpath)
        if p is not None:
            out[sf.relpath] = p
        elif bundled_available([sf]):
            from_bundle.append(sf)
        else:
            missing.append(sf)
    download = bool(missing) and not is_offline() and all(sf.url for sf in missing)
    if missing and not download:
        first = next((sf for sf in missing if not sf.url), missing[0])
        why = "offline mode" if is_offline() and first.url else ""
        raise MissingDataError(missing_message(first, why=why, also_missing=len(missing) - 1, alternative=alternative))
    for sf in missing:
        out[sf.relpath] = fetch(sf, alternative=alternative)
    if from_bundle:
        logger.info("reading %d file(s) from mlirkit's bundled copy (%s)", len(from_bundle),
                    ", ".join(dict.fromkeys(sf.bundled for sf in from_bundle)))
        out.update(read_bundled(from_bundle))
    return {sf.relpath: out[sf.relpath] for sf in files}


__all__ = ["BundledFile", "ENV_DATA", "MissingDataError", "OFFLINE_ENVS", "SourceFile", "all_local",
           "bundled_available", "bundled_source", "download_file", "fetch", "fetch_all", "is_offline", "locate",
           "read_bundled", "roots_key", "unreachable"]
