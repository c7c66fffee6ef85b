"""The hostile pass's harness: a case is an attack on one surface with the outcome mlirkit promises
(docs/core.md: one line naming the file, line or field, exit 2, nothing lost or half-written).

A case's ``attack(ws)`` returns an :class:`Outcome`; :func:`cli` runs a CLI in this process through
``run_cli`` (stderr captured) and judges it; :func:`api` calls Python and judges the exception. The
workspace (:func:`workspace`) is built once with the tiny random-init model: a corpus, a dense index with
embeddings, topics, qrels, a run with its provenance sidecar and a SHIFT file.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

__all__ = ["Case", "Outcome", "api", "cli", "listing", "module_cli", "one_line_error", "workspace"]


@dataclass
class Outcome:
    """What happened: ``held`` (the promise kept) and what was seen (exit code and last line, or the answer)."""

    held: bool
    observed: str


@dataclass
class Case:
    """One attack: ``surface``, what was sent, what mlirkit promises, and the function that sends it."""

    surface: str
    name: str
    attack: Callable[[dict], Outcome]
    expected: str = "exit 2, one line naming the field"
    note: str = ""
    #: the commit that made the case hold (it failed before), or "" (it held already): set from marks.py
    fixed: str = ""
    #: a judgement call, the outcome argued in ``note``: set from marks.py
    argued: bool = False


def listing(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with a file's bytes (a directory: None): what "nothing changed" compares."""
    out: dict[str, bytes | None] = {}
    for p in sorted(Path(root).rglob("*")):
        out[str(p.relative_to(root))] = p.read_bytes() if p.is_file() and not p.is_symlink() else None
    return out


def one_line_error(code: int | None, err: str, needles: Sequence[str] = ()) -> Outcome:
    """Judge a CLI's exit code and stderr: exit 2, no traceback, exactly one ``error:`` line (the last),
    holding every needle."""
    lines = [line for line in err.strip().splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    errors = [line for line in lines if "error:" in line]
    ok = (code == 2 and "Traceback" not in err and len(errors) == 1 and "error:" in last
          and all(n in last for n in needles))
    return Outcome(ok, f"exit {code}: {last[:160]}")


def cli(main: Callable, argv: Sequence[str], *needles: str, unchanged: Path | None = None,
        expect_code: int = 2) -> Outcome:
    """Run ``main(argv)`` as the command line would (``run_cli``) and judge it; with ``unchanged``, also that
    nothing under that folder changed."""
    from mlirkit.base.cli import run_cli

    before = listing(unchanged) if unchanged is not None else None
    err = io.StringIO()
    out = io.StringIO()
    code: int | None
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = run_cli(main, list(argv))
        except SystemExit as e:  # argparse's usage errors
            code = e.code if isinstance(e.code, int) else 1
        except BaseException:  # what the user would see as a traceback, exit 1
            traceback.print_exc(file=err)
            code = 1
    text = err.getvalue()
    if expect_code == 0:
        outcome = Outcome(code == 0 and "Traceback" not in text, f"exit {code}: {out.getvalue().strip()[:160]}")
    else:
        outcome = one_line_error(code, text, needles)
    if before is not None:
        after = listing(unchanged)
        if after != before:
            changed = sorted(set(after) ^ set(before)) or [k for k in after if after[k] != before.get(k)]
            outcome = Outcome(False, f"{outcome.observed}; changed on disk: {changed[:3]}")
    return outcome


def api(call: Callable[[], Any], errors: tuple[type, ...], *needles: str) -> Outcome:
    """Call ``call()`` and judge: it raises one of ``errors`` whose one-line message holds every needle."""
    try:
        result = call()
    except errors as e:
        text = str(e)
        ok = "\n" not in text and all(n in text for n in needles)
        return Outcome(ok, f"{type(e).__name__}: {text[:160]}")
    except BaseException as e:  # noqa: BLE001 (the attack's point: what else comes out)
        return Outcome(False, f"{type(e).__name__} (unexpected): {str(e).splitlines()[0][:140] if str(e) else ''}")
    return Outcome(False, f"no error: returned {str(result)[:120]}")


#: (id, language, text): two questions' documents in three languages
DOCS = [("d1", "en", "The ferry leaves the harbour twice a day."),
        ("d2", "de", "Die Fähre verlässt den Hafen zweimal am Tag."),
        ("d3", "fr", "Le traversier quitte le port deux fois par jour."),
        ("d4", "de", "Die Programme kopieren Dateien."),
        ("d5", "en", "The programs copy files to the disk."),
        ("d6", "fr", "Les programmes copient des fichiers.")]
#: (id, language, text, group): each question in three languages (what MRC and PEER compare)
QUERIES = [("q1-en", "en", "ferry harbour", "g1"), ("q1-de", "de", "Fähre Hafen", "g1"),
           ("q1-fr", "fr", "traversier port", "g1"), ("q2-en", "en", "programs copy files", "g2"),
           ("q2-de", "de", "Programme kopieren Dateien", "g2"), ("q2-fr", "fr", "programmes copient fichiers", "g2")]
RELEVANT = {"g1": ("d1", "d2", "d3"), "g2": ("d4", "d5", "d6")}


def workspace(root: Path) -> dict:
    """Build (once per folder) the inputs every case reads; returns ``{"root", "model", "enc", ...}``."""
    import torch

    from mlirkit.base.cli import run_cli
    from mlirkit.encode.cli import main as encode_main
    from mlirkit.encoders import load_encoder
    from mlirkit.search.cli import main as search_main
    from mlirkit.shift.cli import main as shift_main
    from mlirkit.testing import build_tiny_hf_model

    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    model = build_tiny_hf_model(root / "tiny-model")
    enc = ["--encoder", str(model), "--encoder-class", "hf", "--encoder-option", "max_length=64"]
    ws = {"root": root, "model": model, "enc": enc}
    if (root / "ready-2").is_file():
        return ws
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": "", "text": t, "lang": la},
                                                          ensure_ascii=False) + "\n" for i, la, t in DOCS), "utf-8")
    quiet = contextlib.redirect_stderr(io.StringIO())
    with quiet:
        assert run_cli(encode_main, ["--corpus", str(root / "corpus.jsonl"), "--output", str(root / "index"), *enc,
                                     "--save-embeddings", "--quiet", "--overwrite"]) == 0
    (root / "topics.jsonl").write_text("".join(json.dumps({"_id": q, "text": t, "lang": la, "group_id": g},
                                                          ensure_ascii=False) + "\n" for q, la, t, g in QUERIES), "utf-8")
    (root / "qrels.txt").write_text("".join(f"{q} 0 {d} 1\n" for q, _, _, g in QUERIES for d in RELEVANT[g]),
                                    encoding="utf-8")
    with quiet:
        assert run_cli(search_main, ["--index", str(root / "index"), "--topics", str(root / "topics.jsonl"),
                                     "--output", str(root / "run.trec"), "--hits", "6", "--quiet", "--overwrite"]) == 0
    dim = load_encoder(str(model), "hf", max_length=64).dim
    torch.save({"source_lang": "en", "v_de": torch.full((dim,), 0.1), "v_fr": torch.full((dim,), -0.1)},
               root / "vec.pt")
    with quiet:
        assert run_cli(shift_main, ["fit", "--pairs", str(root / "vec.pt"), *enc, "--output",
                                    str(root / "t.safetensors"), "--overwrite"]) == 0
    (root / "ready-2").write_text("1")
    os.sync()
    return ws


def module_cli(module: str, argv: Sequence[str], *needles: str, env: dict | None = None,
               unchanged: Path | None = None, timeout: float = 300) -> Outcome:
    """``python -m module argv`` in a child process (this checkout first on ``PYTHONPATH``), judged as :func:`cli`."""
    import subprocess
    import sys

    import mlirkit

    repo = Path(mlirkit.__file__).resolve().parents[1]  # the checkout whose mlirkit this process runs
    before = listing(unchanged) if unchanged is not None else None
    full_env = {**os.environ, "PYTHONPATH": f"{repo}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
                "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", **(env or {})}
    proc = subprocess.run([sys.executable, "-m", module, *argv], capture_output=True, text=True, env=full_env,
                          timeout=timeout, errors="backslashreplace")
    outcome = one_line_error(proc.returncode, proc.stderr, needles)
    if before is not None and listing(unchanged) != before:
        outcome = Outcome(False, f"{outcome.observed}; changed on disk")
    return outcome
