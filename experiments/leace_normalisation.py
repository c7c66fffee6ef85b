"""What L2 normalisation gives back after LEACE, and what removing the erased vectors' common mean first would.

LEACE (:class:`mlirkit.transforms.LEACETransform`) leaves no linear signal of the language in the erased
vectors, but an index stores them L2-normalised. On XQuAD-R's documents (1,920 paragraphs, 8 languages), a
logistic-regression probe (standardised features) is trained on the documents of every other paragraph and
tested on the rest (translations never straddle the halves; the eraser is fitted on the probe's half), on:

- ``raw``: the encoder's embeddings;
- ``erased``: LEACE's output (what the slow test of tests/transforms/test_leace.py checks: chance);
- ``erased, L2``: what the index stores;
- ``erased - mean, L2``: the erased vectors' common mean (over the fitting half) removed before normalising. Not
  LEACE as published (Belrose et al. 2023; Fan et al. 2025 score ``LeaceEraser``'s output by cosine, as mlirkit
  does): it changes every score, and its retrieval effect is not measured here.

The share of the raw probe's margin over chance left is ``(acc - 1/8) / (raw - 1/8)``.

    python -m experiments.leace_normalisation [--encoder multilingual-e5-small-q4]
"""
from __future__ import annotations

import argparse

import numpy as np


def probe_accuracy(x: np.ndarray, langs: np.ndarray, train: np.ndarray) -> float:
    """A logistic-regression probe trained on the rows ``train`` predicts the language of the others."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(x[train])
    clf = LogisticRegression(max_iter=5000).fit(scaler.transform(x[train]), langs[train])
    return float((clf.predict(scaler.transform(x[~train])) == langs[~train]).mean())


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m experiments.leace_normalisation", description=__doc__.split("\n\n")[0])
    p.add_argument("--encoder", default="multilingual-e5-small-q4")
    return p


def main(argv: list[str] | None = None) -> int:
    import mlirkit as mk
    from mlirkit.base.cache import cache_dir
    from mlirkit.base.vectors import l2_normalize
    from mlirkit.benchmark.cache import EmbeddingCache
    from mlirkit.transforms import LEACETransform

    args = build_parser().parse_args(argv)
    docs = list(mk.read_corpus("mlirkit/xquad-r/en"))
    langs = np.array([d.lang for d in docs])
    encoder = mk.load_encoder(args.encoder, max_length=512)
    x = EmbeddingCache(cache_dir("benchmark", "embeddings"), show_progress=False).embed(
        encoder, args.encoder, "xquad-r-corpus", "doc", [d.text for d in docs], list(langs))
    paragraph = np.array([int(d.doc_id.split("_")[1]) * 1000 + int(d.doc_id.split("_")[2]) for d in docs])
    train = np.isin(paragraph, np.unique(paragraph)[::2])
    chance = 1 / len(set(langs))
    erased = LEACETransform("en").fit(x[train], list(langs[train])).transform(x, list(langs), "doc")
    rows = {"raw": x, "erased": erased, "erased, L2": l2_normalize(erased),
            "erased - mean, L2": l2_normalize(erased - erased[train].mean(axis=0))}
    raw = probe_accuracy(x, langs, train)
    print(f"| {args.encoder}, XQuAD-R documents | probe accuracy (chance {chance:.3f}) | share of the raw margin left |")
    print("|---|---:|---:|")
    for name, v in rows.items():
        acc = raw if name == "raw" else probe_accuracy(v, langs, train)
        print(f"| {name} | {acc:.4f} | {(acc - chance) / (raw - chance):.1%} |")
    norms = np.linalg.norm(erased, axis=1)
    print("mean norm of the erased vectors:", ", ".join(f"{la} {norms[langs == la].mean():.3f}" for la in sorted(set(langs))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
