"""XQuAD-R questions through the search service: macro nDCG@20 with languages given against detected.

Starts ``python -m mlirkit.serve`` on a free loopback port, sends the 9,520 XQuAD-R questions (8 languages,
1,190 each) to ``POST /v1/search/batch`` (k=20, the query-time shift on) twice: as plain text without
languages, and with each question's language given. Reported: macro nDCG@20 over the 8 question languages
(per-language figures from :func:`mlirkit.evaluate`, rounded and averaged as experiments/query_langid.py does,
so the figures compare), the per-language accuracy of the service's language (``language.lang`` of each
answer against the question's language) and how each was decided (``language.how``: given, detected,
pivot, ...)::

    OMP_NUM_THREADS=1 python -m experiments.serve_xquad --index indexes/xquad-e5 \\
        --transform vectors/e5-tatoeba.shift --output experiments/results/serve_xquad.json

(the index and the transform as in README's Quick start). The service stops at the end, also on error.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterator, Sequence

from experiments.query_langid import XQUAD_LANGS
from experiments.query_langid import _questions as questions  # the 9,520 questions in read_topics order

logger = logging.getLogger(__name__)

K = 20


def batch_bodies(texts: Sequence[str], langs: Sequence[str] | None, batch: int, k: int = K) -> Iterator[dict]:
    """Request bodies of ``/v1/search/batch``: at most ``batch`` queries each, ``lang`` null when not given."""
    for start in range(0, len(texts), batch):
        stop = min(start + batch, len(texts))
        yield {"queries": [{"query": texts[i], "lang": None if langs is None else langs[i]}
                           for i in range(start, stop)], "k": k, "shift": True}


def runs_per_lang(ids: Sequence[str], truth: Sequence[str],
                  answers: Sequence[dict]) -> dict[str, dict[str, dict[str, float]]]:
    """``{lang: {qid: {doc_id: score}}}`` from the service's answers, one per question in order; one run per
    question language, since the translations of a question share its id."""
    if len(ids) != len(answers) or len(truth) != len(answers):
        raise ValueError(f"{len(answers)} answers for {len(ids)} questions")
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for qid, lang, answer in zip(ids, truth, answers):
        runs.setdefault(lang, {})[qid] = {h["doc_id"]: float(h["score"]) for h in answer["hits"]}
    return runs


def macro_ndcg(per_lang: dict[str, float]) -> float:
    """Mean of the per-language nDCG@20 (each rounded to 4 places, as experiments/query_langid.py)."""
    return round(sum(per_lang[la] for la in XQUAD_LANGS) / len(XQUAD_LANGS), 4)


def language_report(answers: Sequence[dict], truth: Sequence[str]) -> dict[str, Any]:
    """Per-language accuracy of each answer's ``language.lang`` against ``truth`` and the count per ``how``."""
    right: dict[str, list[bool]] = {}
    for a, la in zip(answers, truth):
        found = a["language"]["lang"].split("-")[0].lower()
        right.setdefault(la, []).append(found == la)
    flat = [r for rows in right.values() for r in rows]
    return {"accuracy": round(sum(flat) / len(flat), 4),
            "per_lang": {la: round(sum(rows) / len(rows), 4) for la, rows in sorted(right.items())},
            "how": dict(Counter(a["language"]["how"] for a in answers))}


def ndcg_per_lang(runs: dict[str, dict[str, dict[str, float]]]) -> dict[str, float]:
    """nDCG@20 per question language from :func:`mlirkit.evaluate` (qrels ``mlirkit/xquad-r/<lang>``)."""
    from mlirkit import evaluate

    out = {}
    for lang in XQUAD_LANGS:
        result = evaluate(f"mlirkit/xquad-r/{lang}", {"run": runs[lang]}, ["ndcg@20"], significance=None)
        out[lang] = round(float(result.table.loc["run", "ndcg@20"]), 4)
    return out


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_ready(client: Any, server: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the service exited with status {server.returncode} before it was ready")
        try:
            if client.get("/ready").status_code == 200:
                return
        except Exception:  # not listening yet
            pass
        time.sleep(0.5)
    raise SystemExit(f"the service was not ready within {timeout:.0f} s")


def _send(client: Any, texts: Sequence[str], langs: Sequence[str] | None, batch: int) -> list[dict]:
    answers: list[dict] = []
    for body in batch_bodies(texts, langs, batch):
        response = client.post("/v1/search/batch", json=body)
        response.raise_for_status()
        answers += response.json()["results"]
    return answers


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--transform", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--ready-timeout", type=float, default=600.0, help="seconds to wait for GET /ready")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise

    import httpx

    from mlirkit.serve.schemas import MAX_BATCH

    ids, texts, truth = questions()
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "mlirkit.serve", "--index", args.index, "--transform",
                               args.transform, "--host", "127.0.0.1", "--port", str(port)])
    report: dict[str, Any] = {"index": Path(args.index).name, "transform": Path(args.transform).name,
                              "n_questions": len(ids), "k": K, "batch": MAX_BATCH, "variants": {}}
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600.0, trust_env=False) as client:
            _wait_ready(client, server, args.ready_timeout)
            for name, langs in (("detected", None), ("given", truth)):
                start = time.perf_counter()
                answers = _send(client, texts, langs, MAX_BATCH)
                seconds = time.perf_counter() - start
                per_lang = ndcg_per_lang(runs_per_lang(ids, truth, answers))
                report["variants"][name] = {"ndcg@20": {**per_lang, "macro": macro_ndcg(per_lang)},
                                            "language": language_report(answers, truth),
                                            "seconds": round(seconds, 1)}
                logger.info("%s: macro nDCG@20 %.4f in %.0f s", name, report["variants"][name]["ndcg@20"]["macro"],
                            seconds)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
    given, detected = report["variants"]["given"], report["variants"]["detected"]
    report["gap"] = round(given["ndcg@20"]["macro"] - detected["ndcg@20"]["macro"], 4)
    report["load_average"] = [round(x, 2) for x in os.getloadavg()]
    Path(args.output).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")

    print("| languages | " + " | ".join(XQUAD_LANGS) + " | macro nDCG@20 | language right | to the pivot |")
    print("|---|" + "---:|" * (len(XQUAD_LANGS) + 3))
    for name in ("given", "detected"):
        v = report["variants"][name]
        print(f"| {name} | " + " | ".join(f"{v['ndcg@20'][la]:.4f}" for la in XQUAD_LANGS)
              + f" | {v['ndcg@20']['macro']:.4f} | {v['language']['accuracy']:.4f} | {v['language']['how'].get('pivot', 0)} |")


if __name__ == "__main__":
    main()
