"""Do a text's vectors depend on what it is batched with? ``python -m experiments.batch_invariance``

The same DDTP documents encoded three ways, as the three paths batch them: one call over all of them
(``mlirkit.encode``: length-sorted batches), calls of 32 in corpus order (Pyserini's encode pipeline), one
text per call (a query alone); the table gives the largest per-element difference between the three, for
the encoder's arithmetic (``--precision``) with the batching the encoder uses and with padded batches (the
batching before equal-length batches), and splits the cause: the same text padded to more tokens, alone,
versus the same text in a batch of 16 at its own length.

    python -m experiments.batch_invariance --docs 200 --precision bf16   # needs a CPU with native bf16
    python -m experiments.batch_invariance --docs 200 --precision fp32
    python -m experiments.batch_invariance --docs 1000 --precision bf16 --speed   # docs/s, both batchings

``--speed`` times ``encode_docs`` over all documents (one thread), padded and equal-length batches
alternately, twice each (the same process, so a busy machine slows both alike).
"""
from __future__ import annotations

import argparse
import itertools

import numpy as np


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.batch_invariance", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--docs", type=int, default=200)
    p.add_argument("--precision", default="auto", choices=["auto", "fp32", "bf16"])
    p.add_argument("--encoder", default="multilingual-e5-small-q4")
    p.add_argument("--speed", action="store_true", help="time the two batchings instead")
    args = p.parse_args(argv)

    from mlirkit.encoders import load_encoder
    from mlirkit.io.corpus import read_corpus

    docs = list(itertools.islice(read_corpus("mlirkit/ddtp/en"), args.docs))
    texts, langs = [d.text for d in docs], [d.lang for d in docs]
    enc = load_encoder(args.encoder, precision=args.precision, threads=1)
    print(f"{args.encoder}, backend {enc.backend}, precision {enc.precision}, {len(texts)} DDTP documents\n")
    if args.speed:
        return _speed(enc, texts, langs)
    print("| batching | max abs diff, one call vs batches of 32 | one call vs one text per call |")
    print("|---|---|---|")
    own = enc.equal_length_batches
    for equal in ([own, False] if own else [False]):
        enc.equal_length_batches = equal
        a = enc.encode_docs(texts, langs)
        b = np.concatenate([enc.encode_docs(texts[i:i + 32], langs[i:i + 32]) for i in range(0, len(texts), 32)])
        c = np.concatenate([enc.encode_docs([t], [la]) for t, la in zip(texts, langs)])
        name = "equal-length batches (the encoder's)" if equal else "padded batches"
        print(f"| {name} | {np.abs(a - b).max():.3g} | {np.abs(a - c).max():.3g} |")
    enc.equal_length_batches = own
    padding, rows = _cause(enc, texts[:20])
    print(f"\ncause: the same text padded by 1, 8 or 37 tokens, alone: max {padding:.3g}; "
          f"the same text in a batch of 16 at its own length: max {rows:.3g}")
    return 0


def _speed(enc, texts, langs) -> int:
    import time

    own = enc.equal_length_batches
    enc.encode_docs(texts[:32], langs[:32])  # warm-up
    for equal in (False, True, False, True):
        enc.equal_length_batches = equal
        start = time.perf_counter()
        enc.encode_docs(texts, langs)
        print(f"{'equal-length' if equal else 'padded'} batches: {len(texts) / (time.perf_counter() - start):.1f} docs/s")
    enc.equal_length_batches = own
    return 0


def _cause(enc, texts) -> tuple[float, float]:
    import torch

    from mlirkit.encoders.hf import pool

    ids = enc.tokenizer.encode([enc.doc_prefix + t for t in texts], enc.max_length)

    def run(rows, width):
        x = torch.full((len(rows), width), enc._pad_id, dtype=torch.long)
        m = torch.zeros_like(x)
        for r, t in enumerate(rows):
            x[r, :len(t)] = torch.as_tensor(t)
            m[r, :len(t)] = 1
        with torch.inference_mode():
            return torch.nn.functional.normalize(pool(enc._runner(x, m).float(), m, enc.pooling), dim=-1).numpy()

    padding = rows = 0.0
    for t in ids:
        alone = run([t], len(t))[0]
        padding = max(padding, *(float(np.abs(run([t], len(t) + k)[0] - alone).max()) for k in (1, 8, 37)))
        same_length = [o for o in ids if len(o) <= len(t)][:15]
        rows = max(rows, float(np.abs(run([t] + same_length, len(t))[0] - alone).max()))
    return padding, rows


if __name__ == "__main__":
    raise SystemExit(main())
