"""Language-preserving fusion keeps the anchor's language at every rank, orders each language by the fused
score, and is ranx's fusion otherwise."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("ranx")

from mlirkit.base.cli import run_cli  # noqa: E402
from tests.helpers import examples  # noqa: E402
from mlirkit.base.errors import MlirkitError  # noqa: E402
from mlirkit.fuse import fuse, keep_languages  # noqa: E402
from mlirkit.fuse.cli import main  # noqa: E402
from mlirkit.io.trec import read_run, write_run  # noqa: E402

LANGS = ("en", "de", "fr", "ja")


def _ranking(docs):
    return [d for d, _ in sorted(docs.items(), key=lambda x: (-x[1], x[0]))]


def _world(seed: int, n_docs: int = 40):
    rng = np.random.default_rng(seed)
    doc_langs = {f"d{i}": LANGS[int(rng.integers(len(LANGS)))] for i in range(n_docs)}
    docs = sorted(doc_langs)

    def run(depth):
        return {f"q{q}": {d: float(s) for d, s in zip(rng.choice(docs, depth, replace=False), rng.normal(size=depth))}
                for q in range(5)}

    return doc_langs, run(15), run(25)


@settings(max_examples=examples(default=25, thorough=500))
@given(st.integers(0, 10_000), st.sampled_from(["rrf", "wsum"]))
def test_every_rank_keeps_the_anchor_language_and_languages_follow_the_fused_order(seed, method):
    doc_langs, anchor, lexical = _world(seed)
    params = {"weights": [0.4, 0.6]} if method == "wsum" else {}
    fused = fuse([anchor, lexical], method=method, params=params)
    out = keep_languages(fused, anchor, doc_langs).to_dict()
    for q in anchor:
        a, f, o = _ranking(anchor[q]), _ranking(fused.to_dict()[q]), _ranking(out[q])
        assert sorted(o) == sorted(f)  # the same documents
        assert [doc_langs[d] for d in o[:len(a)]] == [doc_langs[d] for d in a]  # language at every anchor rank
        for lang in LANGS:  # within a language, the fused order
            assert [d for d in o if doc_langs[d] == lang] == [d for d in f if doc_langs[d] == lang]


def test_same_language_share_at_every_k_is_the_anchors():
    doc_langs, anchor, lexical = _world(3)
    out = keep_languages(fuse([anchor, lexical], method="rrf"), anchor, doc_langs).to_dict()
    for q in anchor:
        a, o = _ranking(anchor[q]), _ranking(out[q])
        for k in range(1, len(a) + 1):
            assert sum(doc_langs[d] == "en" for d in o[:k]) == sum(doc_langs[d] == "en" for d in a[:k])


def test_document_without_language_is_an_error():
    doc_langs, anchor, lexical = _world(4)
    missing = next(iter(lexical["q0"]))
    del doc_langs[missing]
    with pytest.raises(MlirkitError, match=f"document '{missing}'"):
        keep_languages(fuse([anchor, lexical], method="rrf"), anchor, doc_langs)


def test_cli_keep_languages_needs_doc_langs_and_writes_the_slotted_run(tmp_path, capsys):
    doc_langs, anchor, lexical = _world(5)
    a, b, langs = tmp_path / "dense.trec", tmp_path / "bm25.trec", tmp_path / "langs.tsv"
    write_run(anchor, a, tag="dense")
    write_run(lexical, b, tag="bm25")
    langs.write_text("".join(f"{d}\t{la}\n" for d, la in doc_langs.items()))
    out = tmp_path / "slots.trec"
    assert run_cli(main, ["--runs", str(a), str(b), "--keep-languages", "--output", str(out), "--quiet"]) == 2
    assert "--doc-langs" in capsys.readouterr().err and not out.exists()
    assert main(["--runs", str(a), str(b), "--keep-languages", "--doc-langs", str(langs), "--output", str(out),
                 "--quiet"]) == 0
    expected = keep_languages(fuse([anchor, lexical], method="rrf"), anchor, doc_langs).to_dict()
    got = read_run(out)
    assert {q: _ranking(d) for q, d in got.items()} == {q: _ranking(d) for q, d in expected.items()}
