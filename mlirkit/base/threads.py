"""Thread counts: process-wide for a CLI's ``--threads`` (:func:`set_threads`), scoped for library code
(:func:`faiss_threads`, :func:`torch_threads`). Library code never changes the process-wide count."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator


def set_threads(threads: int | None) -> None:
    """``--threads N``: cap FAISS's OpenMP threads for the whole process (None or 0: leave the default).

    Called once, by a CLI. (Encoders take their own ``threads`` option for torch.)
    """
    if threads:
        import faiss

        faiss.omp_set_num_threads(int(threads))


@contextmanager
def faiss_threads(threads: int | None) -> Iterator[None]:
    """Cap FAISS's OpenMP threads inside the ``with`` block, then restore the previous count (None or 0: no-op)."""
    if not threads:
        yield
        return
    import faiss

    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(int(threads))
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Cap torch's intra-op threads inside the ``with`` block, then restore the previous count (None: no-op)."""
    if not threads:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(int(threads))
    try:
        yield
    finally:
        torch.set_num_threads(before)
