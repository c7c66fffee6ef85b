"""When does the ``mined`` recipe keep SHIFT vectors out of the topic subspace? The data behind the rule of
:func:`mlirkit.transforms.mining.mined_recipe` (no rule may name an encoder).

On the three DDTP beds (pooled parallel, non-parallel with even topics, non-parallel with topics that differ by
language), for each encoder: the topic subspace of the documents (rank at the Marchenko-Pastur edge), and the mean
share of energy in it of the corpus vectors ``mu_l - mu_en``, of the mined vectors without the projection
(union-kNN, centred: what the language offset looks like once topics are matched), and of translation-pair vectors
(DDTP pairs, disjoint from the beds), against the share of a random direction (the skew test's null, ``r/d``, and
its critical value at level 0.01; * = the skew test fires). The recipe projects when the test fires on the
corpus vectors and the mined ones hold less than ``LANGUAGE_IN_TOPICS`` (2) times a random direction's share.
Embeddings from the main job's cache (``python -m mlirkit.benchmark``, default
options), the beds' documents taken from the pooled corpus by id.

    MLIRKIT_CACHE=... python -m experiments.topic_criterion --output work/topic-criterion.json
"""
from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np

BEDS = ("mlirkit/ddtp", "mlirkit/ddtp-nonparallel", "mlirkit/ddtp-nonparallel-sorted")
ENCODERS = ("multilingual-e5-small-q4", "usem")


def shares(topic: Any, vectors: dict[str, np.ndarray], level: float = 0.01) -> dict[str, Any]:
    from mlirkit.transforms.topic_subspace import skew_test

    test = skew_test(topic, list(vectors.values()), level)
    return {"mean_share": test["mean_share"], "skewed": test["skewed"],
            "per_language": {la: round(topic.energy_in(v), 4) for la, v in sorted(vectors.items())}}


def measure(encoder_name: str, min_docs: int) -> list[dict[str, Any]]:
    from mlirkit.base.cache import cache_dir
    from mlirkit.benchmark.cache import EmbeddingCache
    from mlirkit.benchmark.config import DEFAULT_ENCODER_OPTIONS, DEFAULT_FIT_SOURCES
    from mlirkit.benchmark.data import load_benchmark, load_parallel
    from mlirkit.benchmark.steps import fit_transforms
    from mlirkit.benchmark.config import BenchmarkConfig
    from mlirkit.encoders import load_encoder
    from mlirkit.transforms import ShiftTransform
    from mlirkit.transforms.mining import mined_vectors
    from mlirkit.transforms.topic_subspace import skew_test, topic_subspace

    encoder = load_encoder(encoder_name, **DEFAULT_ENCODER_OPTIONS.get(encoder_name, {}))
    cache = EmbeddingCache(cache_dir("benchmark", "embeddings"), show_progress=False)
    pooled = load_benchmark("mlirkit/ddtp", ("en",))
    pooled_embs = cache.embed(encoder, encoder_name, f"{pooled.name}-corpus", "doc", [d.text for d in pooled.docs],
                              [d.lang for d in pooled.docs])
    row = {d.doc_id: i for i, d in enumerate(pooled.docs)}
    ps = load_parallel("ddtp", DEFAULT_FIT_SOURCES["ddtp"], source_lang="en", target_langs=pooled.languages,
                       pairs_per_lang=200)
    pair_embs = cache.embed(encoder, encoder_name, "parallel-ddtp", "doc", ps.texts, ps.langs)
    pairs = fit_transforms(ps, pair_embs, encoder.fingerprint, BenchmarkConfig())["shift"].params_
    out = []
    for bed in BEDS:
        data = pooled if bed == "mlirkit/ddtp" else load_benchmark(bed, ("en",))
        x = pooled_embs[[row[d.doc_id] for d in data.docs]]
        langs = [d.lang for d in data.docs]
        topic = topic_subspace(x, langs, "auto")
        corpus = ShiftTransform("en", vectors="corpus", min_docs=min_docs).fit(x, langs).params_
        mined, _ = mined_vectors(x, langs, "en", k=4, center=True, min_docs=min_docs)
        d, r = x.shape[1], topic.rank
        null = skew_test(topic, list(corpus.values()), 0.01)
        out.append({"encoder": encoder_name, "bed": bed, "documents": len(x), "rank": r, "dim": d,
                    "random_share": null["null_mean"], "critical": null["critical"],
                    "corpus": shares(topic, corpus), "mined": shares(topic, mined),
                    "pairs": shares(topic, {la: v for la, v in pairs.items() if la in corpus})})
    return out


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING)
    p = argparse.ArgumentParser(prog="python -m experiments.topic_criterion", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--encoders", nargs="+", default=list(ENCODERS))
    p.add_argument("--min-docs", type=int, default=15)
    p.add_argument("--output", type=Path, required=True)
    args = p.parse_args(argv)
    rows = [r for name in args.encoders for r in measure(name, args.min_docs)]
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(rows, indent=1) + "\n")
    from mlirkit.transforms.mining import LANGUAGE_IN_TOPICS

    print("| encoder | bed | rank | random share (critical) | corpus | mined, unprojected (x random) | translation pairs "
          "| the recipe projects |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        cell = lambda k: f"{r[k]['mean_share']:.3f}{' *' if r[k]['skewed'] else ''}"  # noqa: E731
        ratio = r["mined"]["mean_share"] / r["random_share"]
        project = r["corpus"]["skewed"] and ratio < LANGUAGE_IN_TOPICS
        print(f"| {r['encoder']} | {r['bed']} | {r['rank']} | {r['random_share']:.3f} ({r['critical']:.3f}) | "
              f"{cell('corpus')} | {cell('mined')} ({ratio:.2f}x) | {cell('pairs')} | {'yes' if project else 'no'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
