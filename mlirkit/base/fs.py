"""Write to a temporary sibling, rename on success: a crash leaves nothing that looks finished."""
from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from mlirkit.base.errors import MlirkitError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def publish_mode(path: Path) -> None:
    """Give a temporary file or directory the permissions a plain ``open``/``mkdir`` would have
    (``mkstemp``/``mkdtemp`` create them owner-only, ignoring the umask)."""
    os.chmod(path, (0o777 if path.is_dir() else 0o666) & ~_umask())


def refuse_existing(path: Path, overwrite: bool) -> None:
    if path.exists() and not overwrite:
        raise MlirkitError(f"{path} already exists (use --overwrite to replace it)")


@contextmanager
def atomic_directory(path: str | os.PathLike, overwrite: bool = False) -> Iterator[Path]:
    """Yield an empty temporary directory beside ``path``; on success it replaces ``path``."""
    path = Path(path)
    refuse_existing(path, overwrite)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.tmp-", dir=path.parent))
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    replace_path(tmp, path)


@contextmanager
def atomic_file(path: str | os.PathLike, overwrite: bool = False, mode: str = "w") -> Iterator[object]:
    """Open a temporary file beside ``path`` for writing; on success it replaces ``path``."""
    path = Path(path)
    refuse_existing(path, overwrite)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    os.close(fd)
    try:
        with open(tmp, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
            yield f
    except BaseException:
        os.unlink(tmp)
        raise
    publish_mode(Path(tmp))
    os.replace(tmp, path)


def replace_path(src: Path, dst: Path) -> None:
    """Move ``src`` onto ``dst``; an existing ``dst`` directory is moved aside first, then removed."""
    publish_mode(src)
    if dst.is_dir():
        old = Path(tempfile.mkdtemp(prefix=f".{dst.name}.old-", dir=dst.parent))
        os.replace(dst, old / dst.name)
        os.replace(src, dst)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(src, dst)
