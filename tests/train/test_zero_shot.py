"""The smallest zero-shot DCL setting end to end on a planted bed: the cached, frozen-backbone mode (heads
only) trained from English triples and en-de parallel documents lowers the semantic head's same-language
share on held-out topics below the untrained model's, while the language head keeps the languages apart."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tests.helpers import WORDS  # noqa: E402
from mlirkit.encoders.dcl_model import DisentangledEncoder  # noqa: E402
from mlirkit.eval.api import evaluate  # noqa: E402
from mlirkit.train.config import TrainConfig  # noqa: E402
from mlirkit.train.trainer import Trainer  # noqa: E402

K = 10


TOPICS = list(itertools.combinations(sorted(WORDS), 2))  # 66 word pairs
DOC = {"en": "this is a short english text about {a} and {b} for the reader",
       "de": "dies ist ein kurzer deutscher Text über {a} und {b} für den Leser"}
QUERY = {"en": "which text is about {a} and {b}", "de": "welcher Text handelt von {a} und {b}"}


def words(lang: str, a: str, b: str) -> dict[str, str]:
    return {"a": a, "b": b} if lang == "en" else {"a": WORDS[a], "b": WORDS[b]}


def planted_bed():
    """Held-out topics (every third word pair), each as an English and a German document and query;
    relevant = both documents of the topic. Each language's documents share a template, so the untrained
    model ranks its own language first."""
    docs, queries, qrels = [], [], {}
    for t, (a, b) in enumerate(TOPICS[1::3]):
        for lang in ("en", "de"):
            docs.append((f"{lang}_{t}", DOC[lang].format(**words(lang, a, b)), lang))
            queries.append((f"{lang}_{t}", QUERY[lang].format(**words(lang, a, b)), lang))
            qrels[f"{lang}_{t}"] = {f"en_{t}": 1, f"de_{t}": 1}
    return docs, queries, qrels


def write_training_data(root):
    """The other topics: English triples only, en-de parallel documents (no test topic anywhere)."""
    train = [t for i, t in enumerate(TOPICS) if i % 3 != 1]
    root.mkdir(parents=True)
    with open(root / "triples.jsonl", "w", encoding="utf-8") as f:
        for i, (a, b) in enumerate(train):
            c, d = train[(i + 7) % len(train)]
            f.write(json.dumps({"query": QUERY["en"].format(a=a, b=b), "positive": DOC["en"].format(a=a, b=b),
                                "negatives": [DOC["en"].format(a=c, b=d)]}) + "\n")
    with open(root / "parallel.jsonl", "w", encoding="utf-8") as f:
        for i, (a, b) in enumerate(train):
            for lang in ("en", "de"):
                f.write(json.dumps({"id": f"p{i}", "lang": lang, "text": DOC[lang].format(**words(lang, a, b))}) + "\n")
    return str(root / "triples.jsonl"), str(root / "parallel.jsonl")


def samelang(model, bed) -> float:
    docs, queries, qrels = bed
    with torch.no_grad():
        d = model.embed([x[1] for x in docs], side="doc").numpy()
        q = model.embed([x[1] for x in queries], side="query").numpy()
    s = q @ d.T
    run = {qid: {docs[j][0]: float(s[i, j]) for j in np.argsort(-s[i])[:K]} for i, (qid, _, _) in enumerate(queries)}
    res = evaluate(qrels, {"run": run}, [f"samelang@{K}"], doc_langs={x[0]: x[2] for x in docs},
                   query_langs={x[0]: x[2] for x in queries}, significance=None)
    return res.value("run", f"samelang@{K}")


@pytest.mark.slow
def test_semantic_head_mixes_languages_after_zero_shot_training(tiny_model_dir, tmp_path):
    triples, parallel = write_training_data(tmp_path / "data")
    model = DisentangledEncoder.from_backbone(str(tiny_model_dir), head_dim=32, query_prefix="query: ",
                                              doc_prefix="passage: ", max_length=32, seed=0)
    bed = planted_bed()
    before = samelang(model, bed)
    assert before > 0.6  # the planted bias: the untrained model ranks its own language first
    cfg = TrainConfig(backbone="tiny", output_dir=str(tmp_path / "run"), head_dim=32, triples=triples,
                      parallel=[parallel], n_retrieval=8, n_parallel=8, n_monolingual=0, n_hard_negatives=1, max_length=32, lr=1e-2, head_lr=1e-2, max_steps=60,
                      warmup_steps=5, query_prefix="query: ", doc_prefix="passage: ", shuffle_buffer=64, seed=0,
                      train_top_layers=0, lambda_d=1.0, device="cpu")
    trainer = Trainer(cfg.validate(), model=model)
    final = trainer.train(overwrite=True, show_progress=False)
    log = [json.loads(x) for x in (tmp_path / "run" / "train_log.jsonl").read_text().splitlines()]
    assert len(log) == 60 and all(e["sent_p"] > 0 and e["ldcl"] >= 0 for e in log)
    trained = DisentangledEncoder.load(final)
    after = samelang(trained, bed)
    assert after < before - 0.1, (before, after)
    # the language head keeps the languages apart: a document's nearest neighbour under W_l is of its language
    from mlirkit.train.analysis import dcl_components

    lang_rep = dcl_components(trained, [x[1] for x in bed[0]])["language"]
    lang_rep /= np.linalg.norm(lang_rep, axis=1, keepdims=True)
    s = lang_rep @ lang_rep.T
    np.fill_diagonal(s, -np.inf)
    langs = np.array([x[2] for x in bed[0]])
    assert (langs[s.argmax(1)] == langs).mean() > 0.9
