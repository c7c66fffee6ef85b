"""Safe outputs: write to a temporary sibling under an exclusive lock, rename on success.

Every output mlirkit writes goes through :func:`atomic_file` or :func:`atomic_directory`:

- **claimed**: ``.NAME.lock`` beside the output is locked (``filelock``, no waiting) for the whole
  write; a second writer of the same output fails at once with one line;
- **overwrite**: an existing output is replaced only with ``overwrite=True`` *and* when
  :func:`mlirkit.base.outputs.is_ours` says mlirkit wrote it (one check per output kind);
- **atomic**: the data goes to ``.NAME.tmp-<pid>-<random>`` and is renamed onto ``NAME`` only when
  the block exits without an exception; on any exception (``KeyboardInterrupt`` and SIGTERM included)
  the temporary, the lock file and every parent directory this write created are removed;
- **durable**: a file is flushed and ``fsync``-ed before it is renamed into place, so a full disk fails the
  write (not a later close) and a published file holds its bytes;
- **together**: :func:`claim_outputs` publishes several files as one (a run, then its provenance sidecar):
  nothing is renamed until every one is written, and a rename that fails puts back what came before;
- **errors**: an ``OSError`` about the output (disk full, read-only directory, a parent that is a
  file) becomes one-line :class:`MlirkitError`; :func:`refuse_existing` (every CLI calls it before it
  starts working) first writes one byte beside the output, so a full disk or a file-size limit
  (``ulimit -f``) is that one line before anything is computed;
- **stale temporaries**: ``.NAME.tmp-<pid>-*`` / ``.NAME.old-<pid>-*`` siblings left by a killed run
  (their pid is no longer alive) are removed, with a warning, by the next write of ``NAME``.
"""
from __future__ import annotations

import errno
import logging
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from mlirkit.base.errors import MlirkitError
from mlirkit.base.option_names import option

logger = logging.getLogger(__name__)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def publish_mode(path: Path) -> None:
    """Give a temporary file or directory the permissions a plain ``open``/``mkdir`` would have
    (``mkstemp``/``mkdtemp`` create them owner-only, ignoring the umask)."""
    os.chmod(path, (0o777 if path.is_dir() else 0o666) & ~_umask())


def refuse_existing(path: str | os.PathLike, overwrite: bool, kind: str = "file", *, probe: bool = True) -> None:
    """Raise unless ``path`` may be written: it does not exist, or ``overwrite`` and mlirkit made it; with
    ``probe``, also unless its directory (or the nearest one that exists) takes a byte (:func:`check_writable`)."""
    from mlirkit.base.outputs import foreign_entry, is_ours, kind_info

    path = Path(path)
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:  # runs, sidecars and reports record their paths as UTF-8 text
        shown = str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise MlirkitError(f"cannot write {shown}: the file name is not valid UTF-8 (mlirkit records output "
                           "paths as text)") from None
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise MlirkitError(f"cannot write {path}: {parent} is not a directory")
            if probe:
                check_writable(path, parent)
            break
    if not (path.exists() or path.is_symlink()):
        return
    directory, description, _ = kind_info(kind)
    if path.is_dir() and not directory:
        raise MlirkitError(f"{path} is a directory, not {description}: refusing to replace it")
    if directory and not path.is_dir():
        raise MlirkitError(f"{path} is a file, not {description}: refusing to replace it")
    if not overwrite:
        raise MlirkitError(f"{path} already exists (use {option('overwrite', True)} to replace it)")
    if not is_ours(path, kind):
        foreign = foreign_entry(path, kind)
        what = (f"{foreign} is not mlirkit's" if foreign is not None
                else f"{path} exists but is not {description} written by mlirkit")
        raise MlirkitError(f"{what}: refusing to replace {path} even with {option('overwrite', True)} "
                           "(remove it yourself or choose another path)")


def check_writable(path: Path, directory: Path) -> None:
    """Write one byte to a fresh file in ``directory`` (the output's, or its nearest existing ancestor) and
    remove it: a full disk, a file-size limit, a read-only file system is ``cannot write PATH: <reason>``
    now, before a command works for minutes (or imports a library that fails on it with another message)."""
    probe = directory / f".{path.name}.probe-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileNotFoundError:  # the directory went away meanwhile: the write itself will say so
        return
    except OSError as e:
        raise write_error(path, e) from None
    try:
        try:
            os.write(fd, b"\0")
        finally:
            os.close(fd)
    except OSError as e:
        raise write_error(path, e) from None
    finally:
        try:
            os.unlink(probe)
        except OSError:
            pass


def fsync_file(path: Path) -> None:
    """Flush ``path``'s bytes to the disk (a published output holds what was written, even after a crash)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_durably(path: Path, data: bytes) -> None:
    """Write ``data`` to the (temporary) file ``path`` and fsync it; a full disk fails here, not later."""
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def lock_path(path: Path) -> Path:
    return path.parent / f".{path.name}.lock"


class OutputLock:
    """The exclusive claim on one output (``.NAME.lock`` beside it); removed again on release."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file = lock_path(path)
        self._lock = None

    def acquire(self) -> None:
        from filelock import FileLock, Timeout

        busy = MlirkitError(f"{self.path} is being written by another process (lock {self.file} is held); "
                            "wait for it to finish")
        lock = FileLock(str(self.file), timeout=0, thread_local=False)
        try:
            lock.acquire()
        except Timeout:
            raise busy from None
        # a lock file unlinked by its previous holder after we opened it locks nothing: the claim is
        # only ours when the locked file is still the one at the lock path
        fd = getattr(getattr(lock, "_context", None), "lock_file_fd", None)
        try:
            same = fd is None or os.path.samestat(os.fstat(fd), os.stat(self.file))
        except OSError:
            same = False
        if not same:
            lock.release()
            raise busy
        self._lock = lock

    def release(self) -> None:
        if self._lock is None:
            return
        try:
            os.unlink(self.file)
        except OSError:
            pass
        self._lock.release()
        self._lock = None


def _make_parents(directory: Path) -> list[Path]:
    """Create ``directory`` and its missing ancestors; the ones created, deepest first."""
    missing = []
    d = directory
    while not d.exists() and d != d.parent:
        if d.is_symlink():
            break
        missing.append(d)
        d = d.parent
    for p in reversed(missing):
        try:
            p.mkdir()
        except FileExistsError:
            if not p.is_dir():
                _remove_parents([m for m in missing if m != p and m.exists()])
                raise
    return missing


def _remove_parents(created: list[Path]) -> None:
    for p in created:  # deepest first; only while empty
        try:
            p.rmdir()
        except OSError:
            break


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stale_temporaries(path: Path) -> list[Path]:
    """Remove ``.NAME.tmp-<pid>-*`` / ``.NAME.old-<pid>-*`` siblings of ``path`` whose process is gone
    (warning about each); call while holding the output's lock. Returns what was removed."""
    removed = []
    try:
        siblings = list(path.parent.iterdir())
    except OSError:
        return removed
    for kind in ("tmp", "old"):
        prefix = f".{path.name}.{kind}-"
        for p in siblings:
            if not p.name.startswith(prefix):
                continue
            pid_text = p.name[len(prefix):].split("-", 1)[0]
            if pid_text.isdigit() and _pid_alive(int(pid_text)):
                logger.warning("%s: a temporary of process %s, which is still running; left in place", p, pid_text)
                continue
            logger.warning("removing %s, a temporary left by an interrupted write of %s", p, path)
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
            removed.append(p)
    return removed


def _temp_prefix(path: Path, kind: str = "tmp") -> str:
    return f".{path.name}.{kind}-{os.getpid()}-"


def _is_output_error(e: OSError, path: Path, tmp: Path) -> bool:
    """Whether an ``OSError`` raised inside a write block is about this output (not about an input):
    it names no file (``write`` on a full disk), or the output, its temporary or something inside it."""
    if e.filename is None:
        return True
    try:
        name = Path(os.path.abspath(e.filename))
    except (TypeError, ValueError):
        return False
    mine = {Path(os.path.abspath(path)), Path(os.path.abspath(tmp))}
    return name in mine or any(parent in mine for parent in name.parents)


def write_error(path: Path, e: OSError) -> MlirkitError:
    reason = e.strerror or errno.errorcode.get(e.errno or 0, "") or str(e) or type(e).__name__
    where = f" ({e.filename})" if e.filename and os.path.abspath(e.filename) != os.path.abspath(path) else ""
    return MlirkitError(f"cannot write {path}: {reason}{where}")


class _Claim:
    """One output being written: its lock, the parents it made and its temporary sibling."""

    def __init__(self, path: Path, overwrite: bool, kind: str, directory: bool) -> None:
        self.path, self.overwrite, self.kind, self.directory = path, overwrite, kind, directory
        self.lock = OutputLock(path)
        self.created: list[Path] = []
        self.tmp: Path | None = None
        self.backup: Path | None = None  # the replaced file, kept until every output of a group is published
        self.new = False  # published where nothing was before

    def claim(self) -> Path:
        path = self.path
        try:
            refuse_existing(path, self.overwrite, self.kind)
            self.created = _make_parents(path.parent)
            self.lock.acquire()
            refuse_existing(path, self.overwrite, self.kind, probe=False)  # again, now that the output is ours
            clean_stale_temporaries(path)
            if self.directory:
                self.tmp = Path(tempfile.mkdtemp(prefix=_temp_prefix(path), dir=path.parent))
            else:
                fd, name = tempfile.mkstemp(prefix=_temp_prefix(path), dir=path.parent)
                os.close(fd)
                self.tmp = Path(name)
        except (FileExistsError, NotADirectoryError) as e:
            raise MlirkitError(f"cannot write {path}: {e.filename or path.parent} is not a directory") from None
        except OSError as e:
            raise write_error(path, e) from None
        return self.tmp

    def publish(self, keep_backup: bool) -> None:
        """Rename the temporary onto the output; with ``keep_backup``, a replaced file stays linked aside
        (``.NAME.old-<pid>-*``) so that :meth:`rollback` can put it back."""
        if keep_backup and self.path.is_file() and not self.path.is_symlink():
            backup = self.path.parent / f"{_temp_prefix(self.path, 'old')}{os.urandom(4).hex()}"
            try:
                os.link(self.path, backup)
                self.backup = backup
            except OSError:  # no hard links here: the output is replaced without a way back
                self.backup = None
        self.new = not (self.path.exists() or self.path.is_symlink())
        replace_path(self.tmp, self.path)
        self.tmp = None

    def rollback(self) -> None:
        """Undo :meth:`publish` (a later output of the group could not be published)."""
        try:
            if self.backup is not None:
                os.replace(self.backup, self.path)
                self.backup = None
            elif self.new:
                self.path.unlink(missing_ok=True)
        except OSError:
            logger.warning("could not put back %s after a failed write", self.path)

    def finish(self, published: bool) -> None:
        if self.tmp is not None:
            if self.tmp.is_dir():
                shutil.rmtree(self.tmp, ignore_errors=True)
            else:
                self.tmp.unlink(missing_ok=True)
        if self.backup is not None:
            self.backup.unlink(missing_ok=True)
        self.lock.release()
        if not published:
            _remove_parents(self.created)


@contextmanager
def claim_outputs(outputs: Sequence[tuple[str | os.PathLike, bool, str, bool]]) -> Iterator[list[Path]]:
    """Claim several outputs ``(path, overwrite, kind, directory)`` (locks taken in order) and yield their
    temporaries; when the block succeeds they are renamed into place in order, so the last one appears
    only once the others are in place (a run's provenance sidecar comes after the run). Until then
    nothing is renamed: a failed block leaves every output as it was; a rename that fails puts back the
    outputs renamed before it. See the module docstring."""
    claims = [_Claim(Path(p), overwrite, kind, directory) for p, overwrite, kind, directory in outputs]
    published = False
    try:
        for c in claims:
            c.claim()
        try:
            yield [c.tmp for c in claims]
        except OSError as e:
            for c in claims:
                if _is_output_error(e, c.path, c.tmp):
                    raise write_error(c.path, e) from None
            raise
        done: list[_Claim] = []
        for i, c in enumerate(claims):
            try:
                c.publish(keep_backup=i < len(claims) - 1)
            except OSError as e:
                for d in reversed(done):
                    d.rollback()
                raise write_error(c.path, e) from None
            done.append(c)
        published = True
    finally:
        for c in reversed(claims):
            c.finish(published)


@contextmanager
def claim_output(path: str | os.PathLike, overwrite: bool, kind: str, directory: bool) -> Iterator[Path]:
    """Lock ``path``, check it may be replaced, and yield a fresh temporary sibling (an empty directory
    or an empty file); on success the temporary replaces ``path``. See the module docstring."""
    with claim_outputs([(path, overwrite, kind, directory)]) as (tmp,):
        yield tmp


@contextmanager
def made_directory(directory: str | os.PathLike) -> Iterator[Path]:
    """``directory``, created with its missing ancestors for the block; when the block fails, the directories
    it created are removed again (while empty), so a failed command leaves no new empty folders behind."""
    directory = Path(directory)
    try:
        created = _make_parents(directory)
    except OSError as e:
        raise write_error(directory, e) from None
    try:
        yield directory
    except BaseException:
        _remove_parents(created)
        raise


@contextmanager
def atomic_directory(path: str | os.PathLike, overwrite: bool = False, kind: str | None = None) -> Iterator[Path]:
    """Yield an empty temporary directory beside ``path``; on success it replaces ``path``.
    ``kind`` (:mod:`mlirkit.base.outputs`) says which existing directories ``overwrite`` may replace;
    without one only an empty directory is."""
    with claim_output(path, overwrite, kind or "directory", directory=True) as tmp:
        yield tmp


@contextmanager
def atomic_file(path: str | os.PathLike, overwrite: bool = False, mode: str = "w",
                kind: str = "file") -> Iterator[object]:
    """Open a temporary file beside ``path`` for writing; on success it replaces ``path``."""
    with claim_output(path, overwrite, kind, directory=False) as tmp:
        with open(tmp, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())


def replace_path(src: Path, dst: Path) -> None:
    """Move ``src`` onto ``dst``; an existing ``dst`` directory is moved aside first, then removed."""
    publish_mode(src)
    if dst.is_dir() and not dst.is_symlink():
        old = Path(tempfile.mkdtemp(prefix=_temp_prefix(dst, "old"), dir=dst.parent))
        os.replace(dst, old / dst.name)
        try:
            os.replace(src, dst)
        except OSError:
            os.replace(old / dst.name, dst)
            shutil.rmtree(old, ignore_errors=True)
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(src, dst)


__all__ = ["atomic_directory", "atomic_file", "check_writable", "claim_output", "claim_outputs",
           "clean_stale_temporaries", "fsync_file", "made_directory", "refuse_existing", "replace_path",
           "write_durably"]
