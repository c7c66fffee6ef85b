"""Plain helpers shared by several test modules (``from tests.helpers import ...``); fixtures live in
``tests/conftest.py``, helpers that users share in ``mlirkit/testing`` (the rule: ``tests/README.md``)."""
from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
"""The repository root (the checkout)."""
SHARED_DATA = REPO.parent / "shared" / "data"
"""The shared data set (``$SHARED_DATA`` in the docs): ``../shared/data`` beside the checkout."""


def require_shared_data(path: Path) -> Path:
    """``path`` if it is a directory; otherwise fail the test when ``CI`` is set, else skip it."""
    import os

    import pytest

    if not path.is_dir():
        message = f"the shared data set {path} is not present"
        if os.environ.get("CI"):
            pytest.fail(f"{message} (CI is set, so this is an error, not a skip)")
        pytest.skip(message)
    return path

IN_RAY_CHILD = __import__("os").environ.get("MLIRKIT_TEST_RAY_CHILD") == "1"
"""Whether this pytest is the child that :func:`run_ray_tests_in_a_child` started."""


def run_ray_tests_in_a_child(passed: dict[str, int], junit: Path) -> None:
    """Run the tests ``passed`` names (files or node ids, marked ``@in_ray_child``) in one child pytest (one pytest
    and one import of Ray for all of them), and check that it passed and that ``passed[test]`` tests of each
    ``test`` passed in it (read from its JUnit XML, written to ``junit``). A Ray driver changes its process
    (signal handlers among them: a JVM that the Pyserini and BM25 tests started relies on its own SIGSEGV
    handler, and later JVM calls crashed), so no Ray driver runs in the suite's processes (nor in a worker's)."""
    import os
    import subprocess
    import sys
    import xml.etree.ElementTree as ET

    assert not IN_RAY_CHILD
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-m", "", "-p", "no:cacheprovider",
                           f"--junitxml={junit}", *passed], env={**os.environ, "MLIRKIT_TEST_RAY_CHILD": "1"},
                          capture_output=True, text=True, timeout=1500, cwd=REPO)
    log = proc.stdout[-4000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, log
    cases = list(ET.parse(junit).iter("testcase"))
    for test, count in passed.items():
        path, _, name = test.partition("::")
        module = path.removesuffix(".py").replace("/", ".")
        ran = [case for case in cases if case.get("classname") == module and (not name or case.get("name") == name)]
        outcomes = [[child.tag for child in case if child.tag in ("failure", "error", "skipped")] for case in ran]
        assert outcomes.count([]) == count, (test, log)


def in_ray_child(test):
    """Mark a test that runs a Ray driver: it runs only in the child pytest of :func:`run_ray_tests_in_a_child`."""
    import pytest

    return pytest.mark.skipif(not IN_RAY_CHILD, reason="run in a child process by run_ray_tests_in_a_child")(test)


HYPOTHESIS_PROFILES = ("default", "thorough")
"""The property tests' profiles (registered in ``tests/conftest.py``), chosen by ``MLIRKIT_HYPOTHESIS_PROFILE``."""


def hypothesis_profile() -> str:
    """The profile ``MLIRKIT_HYPOTHESIS_PROFILE`` names (``default`` when unset); another name is an error."""
    import os

    name = os.environ.get("MLIRKIT_HYPOTHESIS_PROFILE") or "default"
    if name not in HYPOTHESIS_PROFILES:
        raise ValueError(f"MLIRKIT_HYPOTHESIS_PROFILE={name!r}: expected one of {', '.join(HYPOTHESIS_PROFILES)}")
    return name


def examples(default: int, thorough: int) -> int:
    """How many examples a property test draws: ``default``, or ``thorough`` under the thorough profile."""
    return thorough if hypothesis_profile() == "thorough" else default


WORDS = {"apple": "Apfel", "house": "Haus", "river": "Fluss", "green": "grün", "computer": "Rechner",
         "music": "Musik", "window": "Fenster", "garden": "Garten", "paper": "Papier", "light": "Licht",
         "stone": "Stein", "water": "Wasser"}


def write_tiny_data(root: Path, n: int = 24, seed: int = 0) -> dict[str, str]:
    """Retrieval triples, an aligned parallel JSONL (en/de) and a monolingual JSONL (fr/it)."""
    rng = random.Random(seed)
    words = sorted(WORDS)
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "triples.jsonl", "w", encoding="utf-8") as f:
        for _ in range(n):
            a, b, c = rng.sample(words, 3)
            f.write(json.dumps({"query": f"{a} {b}", "positive": f"a text about {a} and {b}",
                                "negatives": [f"something on {c}", f"other {c} words"]}) + "\n")
    with open(root / "parallel.jsonl", "w", encoding="utf-8") as f:
        for i in range(n):
            a, b = rng.sample(words, 2)
            f.write(json.dumps({"id": f"p{i:03d}", "lang": "de", "text": f"{WORDS[a]} und {WORDS[b]}"}) + "\n")
            f.write(json.dumps({"id": f"p{i:03d}", "lang": "en", "text": f"{a} and {b}"}) + "\n")
    with open(root / "mono.jsonl", "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"text": f"{rng.choice(words)} est là {i}", "lang": rng.choice(["fr", "it"])}) + "\n")
    return {"triples": str(root / "triples.jsonl"), "parallel": str(root / "parallel.jsonl"),
            "mono": str(root / "mono.jsonl")}


def copy_model(model):
    """A deep copy of a DCL model whose tokenizer is shared, not copied: the tokenizer is read-only, and copying
    its 250k-token vocabulary takes ~1.5 s (the weights of the tiny model: ~0.01 s)."""
    import copy

    return copy.deepcopy(model, {id(model.tokenizer): model.tokenizer})


def no_dropout(model) -> None:
    """Make a model deterministic in train mode (for equality tests)."""
    import torch.nn as nn

    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.p = 0.0
    cfg = model.backbone.config
    for key in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
        if hasattr(cfg, key):
            setattr(cfg, key, 0.0)


def clusters(n=200, d=12, seed=0):
    """``n`` points per language (en, de, fr) around a random centre each: (x, langs, centres)."""
    r = np.random.default_rng(seed)
    centers = {l: 3 * r.normal(size=d) for l in ["en", "de", "fr"]}
    x = np.concatenate([c + r.normal(size=(n, d)) for c in centers.values()]).astype(np.float32)
    y = [l for l in centers for _ in range(n)]
    return x, y, centers


class ClusterEncoder:
    """A toy encoder whose documents lie around their language's centre of :func:`clusters` (language id tests)."""

    dim = 12
    normalized = False
    fingerprint = {"model": "cluster"}

    def __init__(self):
        _, _, self.centers = clusters()

    def encode_docs(self, texts, langs=None, *, batch_size=None, show_progress=False):
        r = np.random.default_rng(len(texts))
        return np.stack([self.centers[l] + r.normal(size=12) for l in langs]).astype(np.float32)


def tree_listing(root: Path) -> list[str]:
    """Every path under ``root`` (sorted, relative): what a refused command must leave unchanged."""
    return sorted(p.relative_to(root).as_posix() for p in Path(root).rglob("*"))


def assert_refused(main, argv, capsys, root: Path, message: str) -> str:
    """Run a CLI ``main`` through :func:`mlirkit.base.cli.run_cli`: exit 2, one ``error:`` line on stderr naming
    ``message``, no traceback, and nothing added, removed or left behind under ``root``. Returns the line.

    INFO logging is switched off for the run (progress messages are not errors); warnings would count, and
    so would anything but third-party progress bars (``NN%|``)."""
    import logging
    import re

    from mlirkit.base.cli import run_cli

    before = tree_listing(root)
    logging.disable(logging.INFO)
    try:
        code = run_cli(main, argv)
    finally:
        logging.disable(logging.NOTSET)
    err = capsys.readouterr().err
    lines = [line for line in re.split(r"[\r\n]+", err) if line.strip() and not re.search(r"\d+%\|", line)]
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err and message in lines[0], err
    assert tree_listing(root) == before
    return lines[0]


def assert_usage_error(main, argv, capsys, root: Path, option: str) -> None:
    """An argparse refusal (a bad option value): exit 2 naming ``option``, no traceback, nothing written."""
    import pytest

    before = tree_listing(root)
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2 and f"argument {option}" in err.splitlines()[-1] and "Traceback" not in err, err
    assert tree_listing(root) == before


MODELING = '''
import pathlib
pathlib.Path({marker!r}).write_text("the model's own code ran")

from transformers import XLMRobertaConfig, XLMRobertaModel


class EvilConfig(XLMRobertaConfig):
    model_type = "xlm-roberta"


class EvilModel(XLMRobertaModel):
    config_class = EvilConfig
'''


def crafted_model(tiny_model_dir: Path, root: Path) -> Path:
    """The tiny model with ``auto_map`` pointing at a ``modeling_evil.py`` that writes ``root/marker`` on import."""
    import shutil

    model = root / "model-with-code"
    shutil.copytree(tiny_model_dir, model)
    config = json.loads((model / "config.json").read_text("utf-8"))
    config["auto_map"] = {"AutoConfig": "modeling_evil.EvilConfig", "AutoModel": "modeling_evil.EvilModel"}
    (model / "config.json").write_text(json.dumps(config), "utf-8")
    (model / "modeling_evil.py").write_text(MODELING.format(marker=str(root / "marker")), "utf-8")
    return model


def aligned_rows(src, targets, source_lang: str = "en"):
    """``(embeddings, langs, groups)`` for an estimator's ``fit`` from source rows ``src`` (n, d) and
    ``{lang: tgt}`` with ``tgt`` row-aligned with ``src`` or ``(tgt (m, d), source row of each (m,))``: every
    (source row, target row) pair a group."""
    src = np.asarray(src)
    rows, langs, groups = [], [], []
    for lang, value in targets.items():
        tgt, index = (np.asarray(value[0]), np.asarray(value[1])) if isinstance(value, tuple) else \
            (np.asarray(value), np.arange(len(value)))
        rows += [src[index], tgt]
        langs += [source_lang] * len(tgt) + [lang] * len(tgt)
        groups += [(lang, i) for i in range(len(tgt))] * 2
    return np.concatenate(rows), langs, groups


def aligned_shift(src, targets, source_lang: str = "en", encoder=None, meta=None):
    """SHIFT fitted on :func:`aligned_rows` (the encoder fingerprint and metadata recorded)."""
    from mlirkit.transforms import ShiftTransform

    t = ShiftTransform(source_lang).fit(*aligned_rows(src, targets, source_lang))
    t.encoder, t.meta = dict(encoder or {}), {**t.meta, **(meta or {})}
    return t


def fitted_by_language(method: str, embs_by_lang, source_lang: str = "en", encoder=None, **recipe):
    """Centering, LIR, LSAR or LEACE fitted on ``{lang: (n_l, d)}`` (the encoder fingerprint recorded)."""
    from mlirkit.transforms import TRANSFORMS

    x = np.concatenate([np.asarray(v) for v in embs_by_lang.values()])
    langs = [lang for lang, v in embs_by_lang.items() for _ in range(len(v))]
    t = TRANSFORMS.get(method)(source_lang, **recipe).fit(x, langs)
    t.encoder = dict(encoder or {})
    return t


def fit_from_groups(encoder, groups, *, method, source_lang, rank=None, **options):
    """:func:`mlirkit.transforms.fit.fit_groups` with the estimator named (LIR's ``rank`` its recipe when given,
    else the method's default)."""
    from mlirkit.transforms.fit import estimator, fit_groups

    recipe = {"rank": rank} if method == "lir" and rank is not None else {}
    return fit_groups(encoder, groups, estimator(method, source_lang, **recipe), **options)


def fit_triples_shift(encoder, words, path):
    """A SHIFT transform (en pivot) fitted on ``the W is here`` / ``der W ist hier`` / ``le W est ici`` of each
    word, saved at ``path``; returns it."""
    from mlirkit.transforms import save_transform
    from mlirkit.transforms.parallel import ParallelGroup

    pairs = [ParallelGroup(str(i), {"en": f"the {w} is here", "de": f"der {w} ist hier", "fr": f"le {w} est ici"})
             for i, w in enumerate(words)]
    t, _ = fit_from_groups(encoder, pairs, method="shift", source_lang="en")
    save_transform(t, path)
    return t
