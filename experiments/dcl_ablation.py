"""A real, small zero-shot ablation of DCL on CPU (a benchmark script, not a test).

``python -m experiments.dcl_ablation --work DIR --shared-ddtp FILE [--steps N] [--variants ...] [--seeds ...]``

Starting from the offline multilingual-e5-small, each variant is trained for ``--steps`` steps on:

- English retrieval supervision: DDTP short description -> long description for the descriptions of
  the bundled *parallel* DDTP set (``mlirkit/parallel/ddtp``, disjoint from the benchmark by
  construction; checked here), short descriptions from the shared data (``--shared-ddtp``); one hard
  negative per query = the most TF-IDF-similar other long description;
- parallel data P: LibreOffice help, English paired with ``--parallel-langs``;
- monolingual data Q: gettext messages of ``--mono-langs`` (used as unpaired text only);

and evaluated zero-shot on the bundled DDTP benchmark (``mlirkit/ddtp``, test split, ``--eval-groups``
groups): (a) monolingual retrieval in each non-English language of ``--languages`` (that language's
queries against that language's documents), (b) the pooled multilingual bed (English queries, the
documents of every language of ``--languages``) with nDCG@20, MRR@10, TLR@20 and same-language@20.

Variants (the rows of the DCL paper's Table 3, as components added to the base fine-tune):
``base`` (retrieval loss only, no heads; with ``--top-layers 0`` W_s alone), ``disentangler`` (+ heads
W_s, W_l and L_orth), ``hsa`` (+ heads + HSA: sentence, token and consistency losses), ``ldcl`` (+ heads
+ L_LDCL), ``full`` (everything); beside them ``full_old_forms`` (full with the SupCon LDCL and the
all-pairs consistency loss). ``untrained`` is the starting model. The full model's Figure 3 (base /
semantic / language-head projections) goes to ``WORK/fig3-full.png``.

``--mode cached`` (default) trains the top ``--top-layers`` layers on cached backbone states
(:mod:`mlirkit.train.feature_cache`): the states of every training and evaluation text are computed
once (in ``WORK/feature-cache``) and reused by every variant and seed; evaluation embeds through the
cached states too. ``--mode full`` fine-tunes every layer (as before; for GPU machines). Every trained
variant is also evaluated with SHIFT fitted in its own retrieval space (``+shift``): SHIFT vectors
``V_l = mean(r(x_l) - r(x_en))`` over ``--shift-groups`` gettext groups, subtracted from the documents.
Results go to ``WORK/results.json`` (per seed, with per-query scores) and a markdown table on stdout:
mean +- sd over seeds and a paired Fisher randomization test of each variant (per-query scores
averaged over seeds) against ``base`` (``--reference`` picks another row; with every run already in
``WORK/results.json`` the script only prints the table).
"""
from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path
from typing import Any, Sequence

from mlirkit.base.cli import configure_logging, run_cli
from mlirkit.base.errors import MlirkitError

logger = logging.getLogger(__name__)



def build_triples(out: Path, shared_ddtp: Path, benchmark_ids: set[str]) -> int:
    """English (short -> long, hard negative) triples from the parallel DDTP ids."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

    from mlirkit.datasets import parallel_rows
    from mlirkit.io.files import open_text

    longs = {gid: text for gid, lang, text in parallel_rows("mlirkit/parallel/ddtp") if lang == "en"}
    leak = sorted(set(longs) & benchmark_ids)
    if leak:
        raise MlirkitError(f"parallel DDTP ids overlap the benchmark: {leak[:3]}")
    shorts: dict[str, str] = {}
    with open_text(shared_ddtp) as f:
        for line in f:
            rec = json.loads(line)
            if rec["lang"] == "en" and rec["id"] in longs:
                shorts[rec["id"]] = rec["short"]
    ids = sorted(i for i in longs if i in shorts and shorts[i].strip() and longs[i].strip())
    texts = [longs[i] for i in ids]
    tfidf = TfidfVectorizer(min_df=2, sublinear_tf=True).fit_transform(texts)
    sim = (tfidf @ tfidf.T).toarray()
    np.fill_diagonal(sim, -1.0)
    with open(out, "w", encoding="utf-8") as f:
        for k, i in enumerate(ids):
            neg = texts[int(sim[k].argmax())]
            f.write(json.dumps({"query": shorts[i], "positive": texts[k], "negatives": [neg]}, ensure_ascii=False) + "\n")
    return len(ids)


def build_monolingual(out: Path, langs: Sequence[str]) -> int:
    from mlirkit.datasets import parallel_rows

    n = 0
    with open(out, "w", encoding="utf-8") as f:
        for _, lang, text in parallel_rows("mlirkit/parallel/gettext"):
            if lang in langs and len(text) >= 20:
                f.write(json.dumps({"text": text, "lang": lang}, ensure_ascii=False) + "\n")
                n += 1
    return n


#: Table 3 rows -> config overrides (components added to the base fine-tune)
_OFF_HSA = {"use_hsa_sentence": False, "use_hsa_token": False, "use_consistency": False}
TABLE3: dict[str, dict[str, Any]] = {
    "base": {"use_disentangler": False, **_OFF_HSA, "use_ldcl": False, "use_orth": False},
    "disentangler": {**_OFF_HSA, "use_ldcl": False},
    "hsa": {"use_ldcl": False},
    "ldcl": dict(_OFF_HSA),
    "full": {},
}
#: beside Table 3: the full model with the earlier loss forms (SupCon LDCL, all-pairs consistency)
EXTRA: dict[str, dict[str, Any]] = {"full_old_forms": {"ldcl_negatives": "all", "consistency_pairing": "all_pairs"}}
ALL_VARIANTS = ("untrained", *TABLE3, *EXTRA, "no_disentangler", "no_hsa", "no_ldcl")
POOLED = ("ndcg@20", "mrr@10", "tlr@20", "samelang@20")
MONO = ("ndcg@20", "mrr@10")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m experiments.dcl_ablation", description=__doc__.splitlines()[0])
    p.add_argument("--work", required=True, help="working directory (data, models, results)")
    p.add_argument("--variants", nargs="+", default=["untrained", *TABLE3], choices=ALL_VARIANTS)
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--mode", choices=("cached", "full"), default="cached")
    p.add_argument("--top-layers", type=int, default=1, help="cached mode: trained top layers (0 = heads only)")
    p.add_argument("--cache-dtype", default="float16", choices=("float16", "bfloat16", "float32"))
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--batch", type=int, default=8, help="retrieval examples, parallel pairs, monolingual sentences per step")
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--head-lr", type=float, default=1e-4)
    p.add_argument("--freeze-layers", type=int, default=0, help="full mode: freeze the bottom N of the 12 layers")
    p.add_argument("--lambda-d", type=float, default=0.1)
    p.add_argument("--max-length", type=int, default=64)
    p.add_argument("--doc-max-length", type=int, default=128)
    p.add_argument("--eval-max-length", type=int, default=256)
    p.add_argument("--eval-groups", type=int, default=300, help="benchmark groups (dev + test) kept in the pool")
    p.add_argument("--languages", nargs="+", default=["en", "de", "fr", "it", "ja", "ru", "uk", "pl"])
    p.add_argument("--parallel-langs", nargs="+", default=["de", "fr", "it", "ja"])
    p.add_argument("--max-triples", type=int, default=0, help="English training triples used (0 = all)")
    p.add_argument("--parallel-groups", type=int, default=0, help="LibreOffice help groups used (0 = all)")
    p.add_argument("--mono-langs", nargs="+", default=["ru", "uk", "pl"])
    p.add_argument("--mono-per-lang", type=int, default=0, help="monolingual sentences per language (0 = all)")
    p.add_argument("--shift-groups", type=int, default=300, help="gettext groups to fit SHIFT on (0 = no SHIFT)")
    p.add_argument("--shared-ddtp", required=True, type=Path,
                   help="ddtp/descriptions.jsonl.gz of the shared data set (for the English short descriptions)")
    p.add_argument("--threads", type=int, default=0,
                   help="torch threads (0 = torch's default); 1 is fastest for the frozen mode on a loaded machine")
    p.add_argument("--reference", default="base", choices=ALL_VARIANTS,
                   help="the variant the p-values of the printed table compare against (default: base)")
    p.add_argument("--seed", type=int, default=None, help=argparse.SUPPRESS)  # old single-seed flag
    args = p.parse_args(argv)
    if args.seed is not None:
        args.seeds = [args.seed]
    return args


def prepare_data(args: argparse.Namespace) -> dict[str, str]:
    """Training files in WORK (built once): triples, parallel subset, monolingual subset."""
    from mlirkit.benchmark.data import load_benchmark
    from mlirkit.datasets import parallel_rows

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    data = {"triples": str(work / "triples.jsonl"), "mono": str(work / "mono.jsonl"),
            "parallel": str(work / "parallel.jsonl")}
    if not Path(data["triples"]).is_file():
        full_bench = load_benchmark("mlirkit/ddtp", ["en"])
        bench_ids = {d.doc_id.split("/")[0] for d in full_bench.docs}
        n = build_triples(Path(data["triples"]), args.shared_ddtp, bench_ids)
        if args.max_triples and n > args.max_triples:
            lines = Path(data["triples"]).read_text(encoding="utf-8").splitlines(keepends=True)
            Path(data["triples"]).write_text("".join(lines[: args.max_triples]), encoding="utf-8")
        logger.info("triples: %d of %d", min(n, args.max_triples or n), n)
    if not Path(data["mono"]).is_file():
        n = build_monolingual(Path(data["mono"]) .with_suffix(".all.jsonl"), args.mono_langs)
        kept: dict[str, int] = {}
        with open(Path(data["mono"]).with_suffix(".all.jsonl"), encoding="utf-8") as f, \
                open(data["mono"], "w", encoding="utf-8") as out:
            for line in f:
                lang = json.loads(line)["lang"]
                if not args.mono_per_lang or kept.get(lang, 0) < args.mono_per_lang:
                    kept[lang] = kept.get(lang, 0) + 1
                    out.write(line)
        logger.info("monolingual sentences: %d of %d", sum(kept.values()), n)
    if not Path(data["parallel"]).is_file():
        wanted = {"en", *args.parallel_langs}
        groups: list[str] = []
        with open(data["parallel"], "w", encoding="utf-8") as f:
            for gid, lang, text in parallel_rows("mlirkit/parallel/libreoffice-help"):
                if not groups or groups[-1] != gid:
                    if args.parallel_groups and len(groups) >= args.parallel_groups:
                        break
                    groups.append(gid)
                if lang in wanted:
                    f.write(json.dumps({"id": gid, "lang": lang, "text": text}, ensure_ascii=False) + "\n")
        logger.info("parallel groups: %d", len(groups))
    return data


def train_config(args: argparse.Namespace, variant: str, data: dict[str, str], seed: int = 0) -> "Any":
    from mlirkit.train.config import ABLATIONS, TrainConfig

    cfg = TrainConfig(
        backbone="multilingual-e5-small-q4", output_dir=str(Path(args.work) / "runs" / f"{variant}-s{seed}"),
        query_prefix="query: ", doc_prefix="passage: ", max_length=args.max_length,
        doc_max_length=args.doc_max_length, triples=data["triples"], parallel=[data["parallel"]],
        monolingual=[data["mono"]], n_retrieval=args.batch,
        n_parallel=args.batch, n_monolingual=args.batch, n_hard_negatives=1, lr=args.lr, head_lr=args.head_lr,
        warmup_steps=max(1, args.steps // 10), max_steps=args.steps, freeze_word_embeddings=True,
        freeze_layers=args.freeze_layers if args.mode == "full" else 0, seed=seed,
        lambda_d=args.lambda_d, save_every=0, log_every=1, device="cpu",
        train_top_layers=args.top_layers if args.mode == "cached" else None,
        feature_cache_dir=str(Path(args.work) / "feature-cache"), feature_cache_dtype=args.cache_dtype)
    overrides = TABLE3.get(variant) if variant in TABLE3 else EXTRA.get(variant) or ABLATIONS.get(variant)
    if variant == "base" and args.mode == "cached" and args.top_layers == 0:
        # a frozen backbone leaves only the heads to train: the base fine-tune trains W_s with the
        # retrieval loss alone (W_l exists but no loss reaches it)
        overrides = {**_OFF_HSA, "use_ldcl": False, "use_orth": False}
    return cfg.with_updates(**overrides).validate()


class ModelFactory:
    """The starting model of every run from one loaded backbone (a copy each time; the heads are
    initialised as :meth:`DisentangledEncoder.from_backbone` does for the run's seed)."""

    def __init__(self) -> None:
        from mlirkit.encoders.dcl_model import DisentangledEncoder
        from mlirkit.train.trainer import resolve_backbone

        self.proto = DisentangledEncoder.from_backbone(resolve_backbone("multilingual-e5-small-q4"),
                                                       use_disentangler=False)

    def make(self, cfg: Any) -> Any:
        import copy

        import torch

        from mlirkit.encoders.dcl_model import DCLModelConfig, DisentangledEncoder

        hidden = self.proto.config.hidden_dim
        conf = DCLModelConfig(hidden_dim=hidden, head_dim=cfg.head_dim or hidden, use_disentangler=cfg.use_disentangler,
                              pooling=cfg.pooling, query_prefix=cfg.query_prefix, doc_prefix=cfg.doc_prefix,
                              max_length=cfg.max_length, backbone_name=self.proto.config.backbone_name)
        torch.manual_seed(cfg.seed)
        model = DisentangledEncoder(copy.deepcopy(self.proto.backbone), self.proto.tokenizer, conf)
        if cfg.use_disentangler and cfg.head_init == "identity":
            with torch.no_grad():
                model.semantic.weight.copy_(torch.eye(conf.head_dim, hidden))
        return model


# ----------------------------------------------------------------------------- evaluation
class EvalBed:
    """The evaluation beds: (b) pooled (English queries) and (a) one monolingual bed per language."""

    def __init__(self, args: argparse.Namespace) -> None:
        from mlirkit.benchmark.data import load_benchmark
        from mlirkit.datasets import parallel_rows

        self.pooled = load_benchmark("mlirkit/ddtp", ["en"], langs=args.languages, quick_groups=args.eval_groups)
        self.mono = {lang: load_benchmark("mlirkit/ddtp", [lang], langs=[lang], quick_groups=args.eval_groups)
                     for lang in args.languages if lang != "en"}
        self.shift_groups: dict[str, dict[str, str]] = {}
        if args.shift_groups:
            for gid, lang, text in parallel_rows("mlirkit/parallel/gettext"):
                if lang in args.languages:
                    if gid not in self.shift_groups and len(self.shift_groups) >= args.shift_groups:
                        break
                    self.shift_groups.setdefault(gid, {})[lang] = text
            self.shift_groups = {g: t for g, t in self.shift_groups.items() if "en" in t}
        self.doc_texts = sorted({d.text for b in [self.pooled, *self.mono.values()] for d in b.docs}
                                | {t for g in self.shift_groups.values() for t in g.values()})
        self.query_texts = sorted({q.text for b in [self.pooled, *self.mono.values()] for q in b.splits["test"].queries})


def _run(bench: Any, q: Any, d: Any, k: int = 100) -> dict[str, dict[str, float]]:
    import numpy as np

    scores = q @ d.T
    run = {}
    for i, query in enumerate(bench.splits["test"].queries):
        top = np.argsort(-scores[i], kind="stable")[:k]
        run[query.query_id] = {bench.docs[j].doc_id: float(scores[i, j]) for j in top}
    return run


def _score(bench: Any, run: dict, metrics: Sequence[str]) -> dict[str, Any]:
    from mlirkit.eval.api import evaluate

    split = bench.splits["test"]
    res = evaluate(split.qrels, {"run": run}, list(metrics), doc_langs=bench.doc_langs,
                   query_langs=split.query_langs, significance=None)
    return {"metrics": {m: res.value("run", m) for m in metrics}, "per_query": res.per_query["run"]}


def fit_shift_vectors(embed_docs, bed: EvalBed) -> dict[str, Any]:
    """SHIFT vectors ``V_l = mean_g (r(x_g^l) - r(x_g^en))`` in the given retrieval space."""
    import numpy as np

    groups = list(bed.shift_groups.values())
    langs = sorted({lang for g in groups for lang in g} - {"en"})
    en = embed_docs([g["en"] for g in groups])
    vecs = {}
    for lang in langs:
        idx = [i for i, g in enumerate(groups) if lang in g]
        tgt = embed_docs([groups[i][lang] for i in idx])
        vecs[lang] = (tgt - en[idx]).mean(0)
    return {lang: np.asarray(v, dtype=np.float32) for lang, v in vecs.items()}


def evaluate_space(embed_docs, embed_queries, bed: EvalBed, shift: bool) -> dict[str, Any]:
    """(b) pooled and (a) monolingual results of one model; with ``shift`` also the pooled bed after SHIFT."""
    from mlirkit.base.vectors import l2_normalize

    out: dict[str, Any] = {}
    b = bed.pooled
    d = embed_docs([x.text for x in b.docs])
    q = embed_queries([x.text for x in b.splits["test"].queries])
    out["pooled"] = _score(b, _run(b, q, d), POOLED)
    if shift and bed.shift_groups:
        vecs = fit_shift_vectors(embed_docs, bed)
        import numpy as np

        shifted = d - np.stack([vecs.get(x.lang, np.zeros(d.shape[1], dtype=np.float32)) for x in b.docs])
        out["pooled+shift"] = _score(b, _run(b, q, l2_normalize(shifted)), POOLED)
    for lang, mb in bed.mono.items():
        dm = embed_docs([x.text for x in mb.docs])
        qm = embed_queries([x.text for x in mb.splits["test"].queries])
        out[f"mono/{lang}"] = _score(mb, _run(mb, qm, dm), MONO)
    return out


def cached_embedders(model: Any, cache: Any, max_length: int):
    from mlirkit.train.feature_cache import embed_cached

    return (lambda texts: embed_cached(model, cache, texts, side="doc", max_length=max_length),
            lambda texts: embed_cached(model, cache, texts, side="query", max_length=max_length))


def evaluate_encoder(encoder: Any, bench: Any, batch_size: int) -> dict[str, Any]:
    """Pooled-bed metrics of a loaded mlirkit encoder (full mode)."""
    split = bench.splits["test"]
    d = encoder.encode_docs([x.text for x in bench.docs], [x.lang for x in bench.docs], batch_size=batch_size)
    q = encoder.encode_queries([x.text for x in split.queries], [x.lang for x in split.queries], batch_size=batch_size)
    return _score(bench, _run(bench, q, d), POOLED)["metrics"] | {"queries": len(split.queries), "docs": len(bench.docs)}


# ----------------------------------------------------------------------------- aggregation
def _mean_sd(values: Sequence[float]) -> tuple[float, float]:
    import numpy as np

    v = np.asarray([x for x in values if x is not None], dtype=np.float64)
    if not len(v):
        return float("nan"), float("nan")
    return float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0


def _seed_mean_per_query(runs: Sequence[dict], bed: str, metric: str) -> dict[str, float]:
    import numpy as np

    qids = set.intersection(*[set(r[bed]["per_query"].get(metric, {})) for r in runs]) if runs else set()
    return {q: float(np.mean([r[bed]["per_query"][metric][q] for r in runs])) for q in qids}


def _p_text(formatted: str) -> str:
    """``=0.038`` or ``<0.001`` (a p never printed as 0)."""
    return formatted.replace(" ", "") if formatted.startswith("<") else f"={formatted}"


def summarise(results: dict[str, dict[str, Any]], mono_langs: Sequence[str], reference: str = "base") -> str:
    """Markdown: mean +- sd over seeds; p = Fisher randomization test vs ``reference`` (per-query seed means)."""
    import numpy as np

    from mlirkit.eval.significance import format_p, randomization_test, unit_means

    def cell(variant: str, bed: str, metric: str) -> str:
        runs = list(results[variant].values())
        vals = [r[bed]["metrics"][metric] for r in runs if bed in r]
        if not vals:
            return "-"
        m, sd = _mean_sd(vals)
        text = f"{m:.4f} ± {sd:.4f}" if len(vals) > 1 else f"{m:.4f}"
        if variant != reference and reference in results and bed in next(iter(results[reference].values())):
            a = _seed_mean_per_query([r for r in runs if bed in r], bed, metric)
            b = _seed_mean_per_query(list(results[reference].values()), bed, metric)
            common = sorted(set(a) & set(b))
            if common:
                d = unit_means(np.array([a[q] for q in common]) - np.array([b[q] for q in common]))
                p = randomization_test(d, n_permutations=10000)
                text += f" (p{_p_text(format_p(p.p, p.resolution))})"
        return text

    def mono_mean(variant: str, seed_run: dict) -> float:
        return float(np.mean([seed_run[f"mono/{lang}"]["metrics"]["ndcg@20"] for lang in mono_langs]))

    lines = ["| variant | seeds | pooled nDCG@20 | pooled TLR@20 | pooled same-lang@20 | pooled nDCG@20 +SHIFT "
             "| pooled TLR@20 +SHIFT | mono nDCG@20 (mean of languages) |", "|---|---|---|---|---|---|---|---|"]
    for v, runs in results.items():
        mono_vals = [mono_mean(v, r) for r in runs.values()]
        m, sd = _mean_sd(mono_vals)
        lines.append(f"| {v} | {len(runs)} | {cell(v, 'pooled', 'ndcg@20')} | {cell(v, 'pooled', 'tlr@20')} | "
                     f"{cell(v, 'pooled', 'samelang@20')} | {cell(v, 'pooled+shift', 'ndcg@20')} | "
                     f"{cell(v, 'pooled+shift', 'tlr@20')} | {m:.4f} ± {sd:.4f} |")
    lines += ["", "| variant | " + " | ".join(f"{lang} nDCG@20" for lang in mono_langs) + " |",
              "|---|" + "---|" * len(mono_langs)]
    for v in results:
        lines.append(f"| {v} | " + " | ".join(cell(v, f"mono/{lang}", "ndcg@20") for lang in mono_langs) + " |")
    return "\n".join(lines)


def figure3(model: Any, cache: Any, bed: EvalBed, args: argparse.Namespace, work: Path, variant: str) -> None:
    """The DCL paper's Figure 3 on the pooled documents: base / semantic / language-head components
    (``WORK/fig3-full.png``); for the untrained model its embeddings are kept as an extra panel."""
    import numpy as np

    from mlirkit.train.analysis import dcl_components, plot_dcl_components

    docs = bed.pooled.docs
    comps = dcl_components(model, [d.text for d in docs], cache=cache, max_length=args.eval_max_length)
    if variant == "untrained":
        np.save(work / "fig3-untrained.npy", comps["base"])
        return
    extra = []
    if (work / "fig3-untrained.npy").is_file():
        extra = [("untrained e5-small", np.load(work / "fig3-untrained.npy"))]
    for path in plot_dcl_components(comps, [d.lang for d in docs], work / "fig3-full", extra=extra, max_points=2000,
                                    overwrite=True):
        logger.info("wrote %s", path)


# ----------------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    configure_logging()
    import shutil

    import torch

    from mlirkit.encoders.dcl_model import DisentangledEncoder
    from mlirkit.train.feature_cache import TextInput, build_feature_cache
    from mlirkit.train.trainer import FINAL_DIR, Trainer

    if args.threads:
        torch.set_num_threads(args.threads)
    work = Path(args.work)
    data = prepare_data(args)
    bed = EvalBed(args)
    mono_langs = sorted(bed.mono)
    results_path = work / "results.json"
    results: dict[str, dict[str, Any]] = json.loads(results_path.read_text()) if results_path.is_file() else {}
    eval_cache = None
    factory = None

    def eval_cache_for(model: Any) -> Any:
        # one cache of every evaluation text (built once; the key checks that the frozen part is the same)
        inputs = [TextInput(t, model.config.doc_prefix, args.eval_max_length) for t in bed.doc_texts]
        inputs += [TextInput(t, model.config.query_prefix, args.eval_max_length) for t in bed.query_texts]
        first = len(model.backbone.encoder.layer) - args.top_layers
        return build_feature_cache(model, inputs, work / "feature-cache", layer=first, dtype=args.cache_dtype,
                                   show_progress=True)

    for variant in args.variants:
        for seed in ([0] if variant == "untrained" else args.seeds):
            if str(seed) in results.get(variant, {}):
                continue
            t0 = time.time()
            factory = factory or ModelFactory()
            if variant == "untrained":
                cfg = train_config(args, "base", data, 0).with_updates(use_disentangler=False)
                model = factory.make(cfg)
                train_s, final = 0.0, None
            else:
                cfg = train_config(args, variant, data, seed)
                tr = Trainer(cfg, model=factory.make(cfg))
                final = tr.train(overwrite=True, show_progress=False)
                model = tr.model
                train_s = time.time() - t0
            t1 = time.time()
            if args.mode == "cached":
                eval_cache = eval_cache if eval_cache is not None else eval_cache_for(model)
                with torch.no_grad():
                    res = evaluate_space(*cached_embedders(model, eval_cache, args.eval_max_length), bed, shift=True)
            else:
                enc = DisentangledEncoder.load(final) if final else model

                def embed(side):
                    return lambda texts: enc.embed(texts, side=side, max_length=args.eval_max_length).numpy()
                res = evaluate_space(embed("doc"), embed("query"), bed, shift=True)
            if args.mode == "cached" and variant in ("untrained", "full") and seed == (0 if variant == "untrained" else args.seeds[0]):
                figure3(model, eval_cache, bed, args, work, variant)
            res["train_seconds"] = round(train_s, 1)
            res["eval_seconds"] = round(time.time() - t1, 1)
            res["steps"] = 0 if variant == "untrained" else args.steps
            results.setdefault(variant, {})[str(seed)] = res
            logger.info("%s seed %d: pooled %s | train %.0f s, eval %.0f s", variant, seed, res["pooled"]["metrics"],
                     train_s, res["eval_seconds"])
            results_path.write_text(json.dumps(results) + "\n")
            if final is not None and args.mode == "cached":
                shutil.rmtree(Path(final).parent / FINAL_DIR, ignore_errors=True)  # 470 MB each; results are kept
    print(summarise({v: results[v] for v in ALL_VARIANTS if v in results}, mono_langs, args.reference))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(run_cli(main))
