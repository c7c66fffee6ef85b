"""Cost of one DCL optimiser step: today's full step vs the cached modes, measured side by side.

``python -m perf.dcl_step_speed --work DIR --shared-ddtp FILE [--threads 2] [--rounds 3]``

The batches are those of ``experiments/dcl_ablation.py`` (DDTP English triples, LibreOffice help
parallel pairs, gettext monolingual sentences; 8 of each per step, max length 64 / documents 128,
multilingual-e5-small). Modes, all in one process with ``torch.set_num_threads(--threads)``:

- ``full``: today's step (every layer trained, word embeddings frozen, as the ablation script ran it);
- ``top2`` / ``top1``: cached states after layer 10 / 11, the top 2 / 1 layers and the heads trained;
- ``frozen``: cached last-layer states, heads only.

The rounds interleave the modes (one full step, then ``--cached-steps`` steps of each cached mode),
so a change of machine load hits every mode alike; the reported figure is the median per mode and
the ratio full / mode. Building the caches of the batches' texts is a one-time cost, reported apart.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Sequence

from mlirkit.base.cli import configure_logging, run_cli

MODES = {"full": None, "top2": 2, "top1": 1, "frozen": 0}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m perf.dcl_step_speed", description=__doc__.splitlines()[0])
    p.add_argument("--work", required=True, type=Path)
    p.add_argument("--shared-ddtp", required=True, type=Path)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--cached-steps", type=int, default=3)
    p.add_argument("--batch", type=int, default=8)
    args = p.parse_args(argv)
    configure_logging()
    import copy
    import itertools

    import torch

    from experiments import dcl_ablation as ab
    from mlirkit.encoders.dcl_model import DisentangledEncoder
    from mlirkit.train.feature_cache import TextInput
    from mlirkit.train.trainer import Trainer, resolve_backbone

    torch.set_num_threads(args.threads)
    ns = ab.parse_args(["--work", str(args.work), "--shared-ddtp", str(args.shared_ddtp), "--batch", str(args.batch)])
    data = ab.prepare_data(ns)
    cfg0 = ab.train_config(ns, "full", data, seed=0)
    base = DisentangledEncoder.from_backbone(
        resolve_backbone(cfg0.backbone), head_dim=cfg0.head_dim, query_prefix=cfg0.query_prefix,
        doc_prefix=cfg0.doc_prefix, max_length=cfg0.max_length, seed=0)
    n_batches = args.rounds * (1 + args.cached_steps) + 1
    trainers, build_s = {}, {}
    for mode, top in MODES.items():
        cfg = cfg0.with_updates(output_dir=str(args.work / f"speed-{mode}"), train_top_layers=top,
                                feature_cache_dir=str(args.work / "speed-cache"), freeze_layers=0)
        tr = Trainer(cfg, model=copy.deepcopy(base))
        batches = list(itertools.islice(tr.make_batches(), n_batches))
        if top is not None:
            sp, ml, dl = cfg.effective_sentence_prefix, cfg.max_length, cfg.doc_max_length or cfg.max_length
            items, pairs = [], []
            for b in batches:
                items += [TextInput(e.query, cfg.query_prefix, ml) for e in b.retrieval]
                items += [TextInput(t, cfg.doc_prefix, dl) for e in b.retrieval for t in (e.positive, *e.negatives)]
                pp = [(TextInput(x.src, sp, ml), TextInput(x.tgt, sp, ml)) for x in b.parallel]
                pairs += pp
                items += [t for x in pp for t in x] + [TextInput(m.text, sp, ml) for m in b.monolingual]
            t0 = time.perf_counter()
            tr.prepare_features(items, pairs)
            build_s[mode] = time.perf_counter() - t0
        trainers[mode] = (tr, batches)
    times: dict[str, list[float]] = {m: [] for m in MODES}
    cursor = {m: 0 for m in MODES}

    def step(mode: str) -> None:
        tr, batches = trainers[mode]
        b = batches[cursor[mode]]
        cursor[mode] += 1
        t0 = time.perf_counter()
        tr.train_step([b])
        times[mode].append(time.perf_counter() - t0)

    for mode in MODES:  # warm-up step of each mode, not timed
        step(mode)
        times[mode].clear()
    for _ in range(args.rounds):
        step("full")
        for mode in MODES:
            if mode != "full":
                for _ in range(args.cached_steps):
                    step(mode)
    med = {m: statistics.median(v) for m, v in times.items()}
    out = {"threads": args.threads, "rounds": args.rounds, "batch": args.batch,
           "median_step_s": med, "ratio_full_over_mode": {m: med["full"] / med[m] for m in MODES},
           "steps_timed": {m: len(v) for m, v in times.items()}, "cache_build_s": build_s,
           "cache_texts": len(trainers["frozen"][0].features)}
    (args.work / "step_speed.json").write_text(json.dumps(out, indent=2) + "\n")
    print("| mode | trained part | median step (s) | full / mode |")
    print("|---|---|---|---|")
    what = {"full": "all 12 layers + heads", "top2": "layers 11-12 + heads", "top1": "layer 12 + heads",
            "frozen": "heads only"}
    for m in MODES:
        print(f"| {m} | {what[m]} | {med[m]:.3f} | {med['full'] / med[m]:.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
