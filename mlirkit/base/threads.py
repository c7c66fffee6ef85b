"""Thread counts: process-wide for a CLI's ``--threads`` (:func:`set_threads`), scoped for library code
(:func:`faiss_threads`, :func:`torch_threads`). Library code never changes the process-wide count."""
from __future__ import annotations

from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Callable, Iterator


def set_threads(threads: int | None) -> None:
    """``--threads N``: cap FAISS's OpenMP threads for the whole process (None or 0: leave the default).

    Called once, by a CLI. (Encoders take their own ``threads`` option for torch.)
    """
    if threads:
        import faiss

        faiss.omp_set_num_threads(int(threads))


def faiss_threads(threads: int | None) -> AbstractContextManager[None]:
    """Cap FAISS's OpenMP threads inside the ``with`` block, then restore the previous count (None or 0: no-op)."""
    if not threads:
        return nullcontext()
    import faiss

    return _capped(int(threads), faiss.omp_get_max_threads, faiss.omp_set_num_threads)


def torch_threads(threads: int | None) -> AbstractContextManager[None]:
    """Cap torch's intra-op threads inside the ``with`` block, then restore the previous count (None or 0: no-op)."""
    if not threads:
        return nullcontext()
    import torch

    return _capped(int(threads), torch.get_num_threads, torch.set_num_threads)


@contextmanager
def _capped(threads: int, get: Callable[[], int], set_: Callable[[int], None]) -> Iterator[None]:
    before = get()
    set_(threads)
    try:
        yield
    finally:
        set_(before)


__all__ = ["faiss_threads", "set_threads", "torch_threads"]
