"""Worker of tests/train/test_distributed.py: ``torchrun --nproc_per_node 2 ddp_worker.py MODEL_DIR OUT_DIR``.

Each process trains 2 steps on its share of a fixed global batch; rank 0 writes the parameters.
Also importable: :func:`run` with world size 1 on the concatenated batches is the reference.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script: make ``tests.helpers`` importable

from mlirkit.train.data import Batch, MonoSentence, ParallelPair, RetrievalExample  # noqa: E402

EN = ["apple", "house", "river", "green", "music", "window", "garden", "paper"]
DE = ["Apfel", "Haus", "Fluss", "grün", "Musik", "Fenster", "Garten", "Papier"]
LANGS = ["fr", "it", "fr", "it"]
STEPS = 2


def shard(step: int, rank: int, world: int) -> Batch:
    """The slice of the global batch of ``step`` that process ``rank`` (of 2) gets."""
    items = []
    for k in range(4):  # 4 items per stream and step in the global batch
        i = (step * 4 + k) % len(EN)
        items.append(i)
    mine = items[rank * 2:(rank + 1) * 2] if world == 2 else items
    return Batch(
        retrieval=[RetrievalExample(f"{EN[i]} {EN[i - 1]}", f"text about {EN[i]} and {EN[i - 1]}", (f"on {EN[i - 3]}",))
                   for i in mine],
        parallel=[ParallelPair(f"the {EN[i]}", f"das {DE[i]}", "en", "de") for i in mine],
        monolingual=[MonoSentence(f"{EN[i]} est là", LANGS[i % 4]) for i in mine],
    )


def run(model_dir: str, out_dir: str, world: int):
    import torch

    from tests.helpers import no_dropout
    from mlirkit.train.config import TrainConfig
    from mlirkit.encoders.dcl_model import DisentangledEncoder
    from mlirkit.train.trainer import Trainer

    torch.set_num_threads(1)
    cfg = TrainConfig(backbone=model_dir, output_dir=out_dir, head_dim=16, triples="x", parallel=["x"],
                      monolingual=["x"], n_retrieval=2, n_parallel=2, n_monolingual=2, max_length=16, lr=1e-3,
                      max_steps=STEPS, lambda_d=1.0, top_k=2, use_hsa_token=False, freeze_word_embeddings=True,
                      seed=0, device="cpu")
    model = DisentangledEncoder.from_backbone(model_dir, head_dim=16, max_length=16, seed=0)
    no_dropout(model)
    tr = Trainer(cfg, model=model)
    logs = []
    for step in range(STEPS):
        if world == 1:
            batch = Batch.concat([shard(step, 0, 2), shard(step, 1, 2)])
        else:
            batch = shard(step, tr.rank, 2)
        logs.append(tr.train_step([batch]))
    return tr, logs


def main(argv: list[str]) -> None:
    import json

    from safetensors.torch import save_file

    model_dir, out_dir = argv
    tr, logs = run(model_dir, out_dir, world=2)
    assert tr.world == 2, "expected 2 processes"
    if tr.rank == 0:
        state = {k: v.detach().contiguous() for k, v in tr.model.state_dict().items()}
        save_file(state, str(Path(out_dir) / "params.safetensors"))
        (Path(out_dir) / "logs.json").write_text(json.dumps(logs))


if __name__ == "__main__":
    main(sys.argv[1:])
