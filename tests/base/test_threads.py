"""--threads: process-wide only through the CLI helper; library code caps FAISS threads in a with block."""
from __future__ import annotations

import faiss

from mlirkit.base.threads import faiss_threads, set_threads, torch_threads


def test_faiss_threads_is_scoped_and_set_threads_is_not():
    before = faiss.omp_get_max_threads()
    try:
        with faiss_threads(1):
            assert faiss.omp_get_max_threads() == 1
        assert faiss.omp_get_max_threads() == before
        with faiss_threads(None):
            assert faiss.omp_get_max_threads() == before
        set_threads(None)
        assert faiss.omp_get_max_threads() == before
        set_threads(1)
        assert faiss.omp_get_max_threads() == 1
    finally:
        faiss.omp_set_num_threads(before)


def test_torch_threads_is_scoped():
    torch = __import__("pytest").importorskip("torch")
    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def test_library_code_never_sets_process_wide_thread_counts():
    """Only mlirkit.base.threads sets FAISS's or torch's thread count (for the CLIs, or inside a with block)."""
    from pathlib import Path

    import mlirkit

    root = Path(mlirkit.__file__).parent
    offenders = [str(p.relative_to(root)) for p in root.rglob("*.py") if p.name != "threads.py"
                 and any(call in p.read_text(encoding="utf-8") for call in ("omp_set_num_threads", "set_num_threads("))]
    assert offenders == []
