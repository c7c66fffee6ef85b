"""Query language identification for free-text search: which identifier, which threshold.

On the bundled XQuAD-R questions (8 languages, 1,190 each) and on held-out Tatoeba sentences (ids 800-999 of each
language's 1,000 pairs; the transform's fit reads the first 200), each identifier of
:data:`mlirkit.search.langid.IDENTIFIERS` (restricted to the query-time shift's languages, the Searcher's
candidates; ``py3langid`` and ``lingua`` also unrestricted, over every language they know) gives a language and a
confidence per text. Reported: per-language accuracy, coverage and accuracy above each threshold, time per query
(one text per call, as an interactive query arrives), and the end-to-end figure: XQuAD-R macro nDCG@20 over the 8
question languages with the query-time shift (``query_shift="cosine"``, default alpha) when each question's
language is given, detected (:func:`mlirkit.search.langid.decide_languages`: below the threshold, or outside the
shift's languages, the pivot) or the pivot for all. nDCG@20 comes from :func:`mlirkit.evaluate`.

The question and sentence vectors are encoded once with :meth:`mlirkit.search.Searcher.encode_texts` and cached
as .npy under ``--work``; every variant is scored from the cache::

    python -m experiments.query_langid --index indexes/xquad-e5 --transform vectors/e5-tatoeba-langid.shift \\
        --work work/query-langid --output experiments/results/query_langid.json \\
        [--seed-questions BENCHMARK_CACHE/multilingual-e5-small-q4/xquad-r-queries-query-*.npy]

(the index and the transform as in README's Quick start, the transform fitted with ``--fit-langid``;
``--seed-questions``: the same questions encoded by the same encoder earlier, checked on 64 re-encoded rows).
"""
from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

logger = logging.getLogger(__name__)

XQUAD_LANGS = ("ar", "de", "en", "es", "hi", "ru", "vi", "zh")
THRESHOLDS = (0.0, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99)
TATOEBA_HELDOUT = range(800, 1000)


def _questions() -> tuple[list[str], list[str], list[str]]:
    from mlirkit.io.topics import read_topics

    ids, texts, langs = [], [], []
    for lang in XQUAD_LANGS:
        for q in read_topics(f"mlirkit/xquad-r/{lang}"):
            ids.append(q.query_id)
            texts.append(q.text)
            langs.append(lang)
    return ids, texts, langs


def _tatoeba(langs: Sequence[str]) -> tuple[list[str], list[str]]:
    """Held-out Tatoeba sentences: ids 800-999 of each language; English from the German pairs."""
    from mlirkit.transforms.parallel import open_parallel

    wanted = {f"{la}/{i}" for la in langs if la != "en" for i in TATOEBA_HELDOUT}
    texts, out_langs = [], []
    english = []
    for group in open_parallel("mlirkit/parallel/tatoeba"):
        if group.id not in wanted:
            continue
        la = group.id.split("/")[0]
        texts.append(group.texts[la])
        out_langs.append(la)
        if la == "de":
            english.append(group.texts["en"])
    if "en" in langs:
        texts += english
        out_langs += ["en"] * len(english)
    return texts, out_langs


def _cached_vectors(searcher: Any, path: Path, texts: list[str], seed: str | None = None,
                    check: int = 64) -> np.ndarray:
    """``texts`` encoded by ``searcher.encode_texts``, cached at ``path``; ``seed``: an .npy of the same texts
    encoded earlier by the same encoder (e.g. the benchmark's cache), used after ``check`` random rows re-encoded
    here agree with it (cosine > 0.999)."""
    if path.exists():
        vectors = np.load(path)
        if len(vectors) == len(texts):
            return vectors
    if seed is not None:
        vectors = np.load(seed)
        picks = np.random.default_rng(0).choice(len(texts), size=min(check, len(texts)), replace=False)
        fresh = searcher.encode_texts([texts[i] for i in picks], [None] * len(picks))
        cosine = np.sum(fresh * vectors[picks], axis=1)
        logger.info("seed %s: %d re-encoded rows, min cosine %.6f", seed, len(picks), cosine.min())
        if len(vectors) != len(texts) or cosine.min() < 0.999:
            raise SystemExit(f"{seed} does not hold these texts' vectors (min cosine {cosine.min():.6f})")
        np.save(path, vectors)
        return vectors
    start = time.perf_counter()
    vectors = searcher.encode_texts(texts, [None] * len(texts))
    logger.info("encoded %d texts in %.1f s", len(texts), time.perf_counter() - start)
    np.save(path, vectors)
    return vectors


class _Unrestricted:
    """py3langid / lingua over every language they know (answers outside the candidates count as wrong)."""

    def __init__(self, name: str) -> None:
        self.name = f"{name}-all"
        self.needs_vectors = False
        if name == "py3langid":
            from py3langid.langid import MODEL_FILE, LanguageIdentifier

            model = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
            self.identify = lambda texts, vectors=None: [(c, float(p)) for c, p in map(model.classify, texts)]
        else:
            from lingua import LanguageDetectorBuilder

            detector = LanguageDetectorBuilder.from_all_languages().build()

            def identify(texts, vectors=None):
                return [(v[0].language.iso_code_639_1.name.lower(), float(v[0].value))
                        for v in detector.compute_language_confidence_values_in_parallel(list(texts))]
            self.identify = identify


def _identifiers(searcher: Any) -> dict[str, Any]:
    from mlirkit.search.langid import make_identifier

    candidates = searcher.candidate_langs()
    out = {name: make_identifier(name, candidates, searcher.shift.transform)
           for name in ("py3langid", "lingua", "embedding")}
    out["py3langid-all"] = _Unrestricted("py3langid")
    out["lingua-all"] = _Unrestricted("lingua")
    return out


def _canonical(code: str) -> str:
    from mlirkit.base.langs import canonical

    return (canonical(code) or code).split("-")[0].lower()


def _accuracy(found: list[tuple[str, float]], truth: Sequence[str]) -> dict[str, Any]:
    codes = np.array([_canonical(c) for c, _ in found])
    conf = np.array([p for _, p in found])
    truth_arr = np.array(truth)
    right = codes == truth_arr
    per_lang = {la: round(float(right[truth_arr == la].mean()), 4) for la in sorted(set(truth))}
    curve = []
    for t in THRESHOLDS:
        kept = conf >= t
        curve.append({"threshold": t, "coverage": round(float(kept.mean()), 4),
                      "accuracy_covered": round(float(right[kept].mean()), 4) if kept.any() else None,
                      "wrong_used": round(float((kept & ~right).mean()), 4)})
    return {"accuracy": round(float(right.mean()), 4), "per_lang": per_lang, "threshold_curve": curve}


def _time_per_query(identifier: Any, texts: list[str], vectors: np.ndarray, sample: int) -> float:
    """Median milliseconds of one identify call on one text (vectors: the query's, for ``embedding``)."""
    rng = np.random.default_rng(0)
    picks = rng.choice(len(texts), size=min(sample, len(texts)), replace=False)
    identifier.identify([texts[picks[0]]], vectors[picks[:1]])  # warm up
    times = []
    for i in picks:
        start = time.perf_counter()
        identifier.identify([texts[i]], vectors[i:i + 1])
        times.append(time.perf_counter() - start)
    return round(float(np.median(times)) * 1000, 4)


def _ndcg(searcher: Any, vectors: np.ndarray, ids: list[str], truth: list[str], decided: list[str],
          k: int = 100) -> dict[str, float]:
    """Per-language and macro nDCG@20 of the questions scored with the shift of ``decided``."""
    from mlirkit.eval import evaluate

    hits = searcher.search_vectors(vectors, k, decided)
    out = {}
    truth_arr = np.array(truth)
    for lang in XQUAD_LANGS:
        rows = np.flatnonzero(truth_arr == lang)
        run = {ids[i]: {h.doc_id: float(h.score) for h in hits[i]} for i in rows}
        result = evaluate(f"mlirkit/xquad-r/{lang}", {"run": run}, ["ndcg@20"], significance=None)
        out[lang] = round(float(result.table.loc["run", "ndcg@20"]), 4)
    out["macro"] = round(float(np.mean([out[la] for la in XQUAD_LANGS])), 4)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--transform", required=True, help="a transform fitted with --fit-langid")
    parser.add_argument("--work", required=True, help="where the encoded questions and sentences are cached")
    parser.add_argument("--output", required=True)
    parser.add_argument("--seed-questions", help="an .npy of the 9,520 questions (read_topics order) encoded "
                        "earlier by the same encoder, checked on a sample and then used")
    parser.add_argument("--timing-sample", type=int, default=400)
    parser.add_argument("--e2e-thresholds", type=float, nargs="+", default=[0.0, 0.5, 0.9])
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    from mlirkit.base.langs import canonical
    from mlirkit.search import Searcher
    from mlirkit.search.langid import decide_languages

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    searcher = Searcher(args.index, query_shift="cosine", transform=args.transform)
    candidates = searcher.candidate_langs()
    ids, questions, question_langs = _questions()
    tatoeba, tatoeba_langs = _tatoeba([_canonical(c) for c in candidates])
    q_vectors = _cached_vectors(searcher, work / "xquad-r-questions.npy", questions, args.seed_questions)
    t_vectors = _cached_vectors(searcher, work / "tatoeba-heldout.npy", tatoeba)

    report: dict[str, Any] = {"index": Path(args.index).name, "transform": Path(args.transform).name, "candidates": candidates,
                              "n_questions": len(questions), "n_tatoeba": len(tatoeba), "identifiers": {}}
    detections = {}
    for name, identifier in _identifiers(searcher).items():
        start = time.perf_counter()
        found_q = identifier.identify(questions, q_vectors)
        batch_seconds = time.perf_counter() - start
        found_t = identifier.identify(tatoeba, t_vectors)
        detections[name] = found_q
        report["identifiers"][name] = {
            "xquad_r": _accuracy(found_q, question_langs), "tatoeba": _accuracy(found_t, tatoeba_langs),
            "ms_per_query_single": _time_per_query(identifier, questions, q_vectors, args.timing_sample),
            "ms_per_query_batch": round(batch_seconds / len(questions) * 1000, 4)}
        logger.info("%s: xquad-r %.4f, tatoeba %.4f", name, report["identifiers"][name]["xquad_r"]["accuracy"],
                    report["identifiers"][name]["tatoeba"]["accuracy"])

    pivot, has_vector = searcher.shift.pivot, searcher.shift.has_vector
    e2e: dict[str, Any] = {"given": _ndcg(searcher, q_vectors, ids, question_langs, question_langs),
                           "pivot": _ndcg(searcher, q_vectors, ids, question_langs, [pivot] * len(ids))}
    for name, found in detections.items():
        for threshold in args.e2e_thresholds:
            found_canonical = [(canonical(c) or c, p) for c, p in found]
            decided = decide_languages([None] * len(ids), found_canonical, threshold=threshold, pivot=pivot,
                                       has_vector=has_vector)
            entry = _ndcg(searcher, q_vectors, ids, question_langs, [d.lang for d in decided])
            entry["pivot_share"] = round(float(np.mean([d.how == "pivot" for d in decided])), 4)
            e2e[f"{name}@{threshold}"] = entry
            logger.info("%s@%s: macro nDCG@20 %.4f (given %.4f)", name, threshold, entry["macro"],
                        e2e["given"]["macro"])
    report["ndcg@20"] = e2e
    import os
    report["load_average"] = [round(x, 2) for x in os.getloadavg()]
    Path(args.output).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
