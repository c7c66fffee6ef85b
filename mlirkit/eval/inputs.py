"""What :func:`mlirkit.eval.evaluate` accepts, turned into plain dicts; anything else is refused by name.

- **qrels**: ``{qid: {docid: relevance}}``, a ``ranx.Qrels``, or a source :func:`mlirkit.io.qrels.read_qrels`
  reads (a TREC/BEIR qrels file, a BEIR folder, an ir_datasets id such as ``mlirkit/ddtp/en``);
- **a run**: ``{qid: {docid: score}}``, what :meth:`mlirkit.search.Searcher.search` returns
  (``{qid: [Hit, ...]}``, a :class:`~mlirkit.search.results.SearchResults`), a ``ranx.Run``, or a TREC
  run file;
- **runs**: ``{name: run}``; a list of named runs (``ranx.Run`` objects with a ``name``, run files named
  by their file: ``runs/shift.trec`` -> ``shift``); or one run that is not a plain dict (search
  results, a ``ranx.Run``, a file), named by its name or file, else ``run``;
- **doc_langs**: ``{docid: lang}`` or a source :func:`mlirkit.io.doc_langs.read_doc_langs` reads (an
  index directory, a corpus or doc-langs file, an ir_datasets id).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

from mlirkit.base.errors import MlirkitError

RunDict = Mapping[str, Mapping[str, float]]

_RUN_KINDS = ("{qid: {docid: score}}, Searcher.search results ({qid: [Hit, ...]}), a ranx.Run or a TREC "
              "run file")


def _is_ranx(obj: Any, cls: str) -> bool:
    return type(obj).__name__ == cls and type(obj).__module__.split(".")[0] == "ranx"


def ranx_to_dict(obj: Any) -> dict[str, dict[str, Any]]:
    """``{qid: {docid: value}}`` of a ``ranx.Run`` or ``ranx.Qrels``: what their ``to_dict()`` gives (same keys,
    values and order); a run is read in one compiled pass (:mod:`mlirkit.eval.ranx_runs`)."""
    if _is_ranx(obj, "Qrels"):
        return {q: dict(d) for q, d in obj.to_dict().items()}
    from mlirkit.base.numba_cache import import_cached

    return import_cached("mlirkit.eval.ranx_runs").run_to_dict(obj)


def _is_source(obj: Any) -> bool:
    return isinstance(obj, (str, os.PathLike))


def _kind(obj: Any) -> str:
    """``dict``, ``numpy.ndarray``, ``pandas.DataFrame``: what was given instead, for the message."""
    module = type(obj).__module__.split(".")[0]
    return type(obj).__name__ if module == "builtins" else f"{module}.{type(obj).__name__}"


def run_name(path: str | os.PathLike) -> str:
    """``runs/bm25.trec.gz`` -> ``bm25``: the file name without ``.gz`` and its last extension."""
    name = Path(path).name
    if name.endswith(".gz"):
        name = name[:-3]
    stem = name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
    return stem or name


def as_qrels(qrels: Any) -> Mapping[str, Mapping[str, int]]:
    """``{qid: {docid: relevance}}`` from a dict, a ``ranx.Qrels`` or a qrels source (file, folder, dataset id)."""
    if _is_ranx(qrels, "Qrels"):
        return ranx_to_dict(qrels)
    if _is_source(qrels):
        from mlirkit.io.qrels import read_qrels

        return read_qrels(qrels)
    if isinstance(qrels, Mapping) and all(isinstance(v, Mapping) for v in qrels.values()):
        return qrels
    raise MlirkitError(f"qrels must be {{qid: {{docid: relevance}}}}, a ranx.Qrels, a qrels file or an ir_datasets "
                       f"id; got {_kind(qrels)}")


def _is_single_run(obj: Any) -> bool:
    """One run rather than several: search results (``{qid: [Hit, ...]}``), a ranx.Run, a file."""
    if isinstance(obj, Mapping):
        return any(isinstance(v, (list, tuple)) for v in obj.values())
    return _is_ranx(obj, "Run") or _is_source(obj)


def as_run(run: Any, name: str = "run") -> RunDict:
    """``{qid: {docid: score}}`` from any run form of the module docstring (``name`` is for messages)."""
    if _is_ranx(run, "Run"):
        return ranx_to_dict(run)
    if _is_source(run):
        from mlirkit.io.trec import read_run

        return read_run(run)
    if not isinstance(run, Mapping):
        raise MlirkitError(f"run {name!r} must be {_RUN_KINDS}; got {_kind(run)}")
    out: dict[str, Mapping[str, float]] = {}
    for qid, hits in run.items():
        if isinstance(hits, Mapping):
            out[qid] = hits
        elif isinstance(hits, (list, tuple)):
            try:
                out[qid] = {doc_id: float(score) for doc_id, score in hits}
            except (TypeError, ValueError):
                raise MlirkitError(f"run {name!r}, query {qid!r}: a list of hits must hold (doc_id, score) pairs "
                                   f"such as mlirkit.search.Hit") from None
        else:
            raise MlirkitError(f"run {name!r}, query {qid!r}: expected {{docid: score}} or a list of hits, got "
                               f"{_kind(hits)}" + (" (runs is {name: run}: for one run {qid: {docid: score}} "
                                                   "pass {'name': run})" if isinstance(hits, (int, float)) else ""))
    return out


def as_runs(runs: Any) -> dict[str, RunDict]:
    """``{name: {qid: {docid: score}}}`` from the forms of the module docstring."""
    if _is_single_run(runs):
        name = (runs.name if _is_ranx(runs, "Run") else run_name(runs) if _is_source(runs) else None) or "run"
        return {name: as_run(runs, name)}
    if isinstance(runs, Mapping) and runs:
        return {name: as_run(run, name) for name, run in runs.items()}
    if isinstance(runs, (list, tuple)) and runs:
        out: dict[str, RunDict] = {}
        for i, run in enumerate(runs):
            name = _name_of(run, i)
            if name in out:
                raise MlirkitError(f"two runs are named {name!r}; give distinct names ({{name: run}})")
            out[name] = as_run(run, name)
        return out
    if isinstance(runs, (Mapping, list, tuple)):
        raise MlirkitError("no runs to evaluate")
    raise MlirkitError(f"runs must be {{name: run}}, a list of named runs or one run ({_RUN_KINDS}); "
                       f"got {_kind(runs)}")


def run_sources(runs: Any) -> dict[str, str | os.PathLike]:
    """``{name: run file}`` of the runs given as files, named as :func:`as_runs` names them."""
    if _is_single_run(runs):
        return {run_name(runs): runs} if _is_source(runs) else {}
    if isinstance(runs, Mapping):
        return {name: run for name, run in runs.items() if _is_source(run)}
    if isinstance(runs, (list, tuple)):
        return {_name_of(run, i): run for i, run in enumerate(runs) if _is_source(run)}
    return {}


def _name_of(run: Any, i: int) -> str:
    """The name of the ``i``-th run of a list: a ``ranx.Run``'s own, a file's; anything else has none."""
    if _is_ranx(run, "Run"):
        if run.name:
            return run.name
        raise MlirkitError(f"ranx.Run number {i + 1} has no name (set Run(name=...), or pass {{name: run}})")
    if _is_source(run):
        return run_name(run)
    raise MlirkitError(f"run number {i + 1} ({_kind(run)}) has no name: pass {{name: run}} "
                       f"(or results.to_ranx(name=...))")


def as_doc_langs(doc_langs: Any) -> Mapping[str, str] | None:
    """``{docid: lang}`` from a dict or a source :func:`mlirkit.io.doc_langs.read_doc_langs` reads; None stays None."""
    if doc_langs is None or isinstance(doc_langs, Mapping):
        return doc_langs
    if _is_source(doc_langs):
        from mlirkit.io.doc_langs import read_doc_langs

        return read_doc_langs(doc_langs)
    raise MlirkitError(f"doc_langs must be {{docid: lang}}, an index directory, a corpus or doc-langs file or an "
                       f"ir_datasets id; got {_kind(doc_langs)}")


__all__ = ["as_doc_langs", "as_qrels", "as_run", "as_runs", "ranx_to_dict", "run_name", "run_sources"]
