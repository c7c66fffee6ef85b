"""Language-preserving fusion: the fused ranking keeps, rank by rank, the document languages of an anchor run.

A dense run whose language bias was removed (SHIFT) and a BM25 run, which ranks the query's own language
first almost by construction, fused by RRF or a weighted sum give back much of the bias: documents in
the query's language collect lexical evidence, the others hardly any. Here lexical evidence may reorder
documents *within* a language, never trade one language for another:

    for rank i = 1 .. |A_q|:   out_q[i] = the best document, by the fused score F_q, of language lang(A_q[i])
                               that is not placed yet

where ``A_q`` is the anchor's ranking of query q (the debiased dense run) and ``F_q`` any fusion of the runs
(:func:`mlirkit.fuse.fusion.fuse`); the documents of ``F_q`` not placed then follow in ``F_q``'s order. Every
language has at least as many fused candidates as anchor slots (``F_q`` holds the anchor's documents), so the
language at every rank, hence the same-language share of every top k with k <= |A_q|, is the anchor's
exactly, whatever the other runs are. Scores of the output are its ranks turned around (n, n-1, ..., 1).
"""
from __future__ import annotations

from collections import defaultdict, deque
from typing import Any, Mapping

from mlirkit.base.errors import MlirkitError
from mlirkit.eval.inputs import as_run


def _ranking(docs: Mapping[str, float]) -> list[str]:
    return [d for d, _ in sorted(docs.items(), key=lambda item: (-item[1], item[0]))]


def keep_languages(fused: Any, anchor: Any, doc_langs: Mapping[str, str], *, anchor_name: str = "anchor run",
                   name: str = "language-slots"):
    """``fused`` re-ordered so that every rank holds a document of the anchor's language at that rank (see
    the module docstring); returns a ``ranx.Run`` named ``name``. A document without a language in
    ``doc_langs`` is an error."""
    from mlirkit.fuse.fusion import to_ranx

    fused_d, anchor_d = as_run(fused), as_run(anchor)
    out: dict[str, dict[str, float]] = {}
    for qid, docs in fused_d.items():
        order = _ranking(docs)
        queues: dict[str, deque[str]] = defaultdict(deque)
        for d in order:
            queues[_lang(doc_langs, d, "fused run")].append(d)
        placed: list[str] = []
        taken: set[str] = set()
        for d in _ranking(anchor_d.get(qid, {})):
            queue = queues[_lang(doc_langs, d, anchor_name)]
            while queue and queue[0] in taken:
                queue.popleft()
            if not queue:  # only when the fused run lacks some of the anchor's documents
                raise MlirkitError(f"query {qid!r}: the fused run has fewer documents in language "
                                   f"{doc_langs[d]!r} than {anchor_name} (fuse the anchor with the other runs)")
            best = queue.popleft()
            placed.append(best)
            taken.add(best)
        placed += [d for d in order if d not in taken]
        n = len(placed)
        out[qid] = {d: float(n - i) for i, d in enumerate(placed)}
    return to_ranx(out, name)


def _lang(doc_langs: Mapping[str, str], doc_id: str, where: str) -> str:
    try:
        return doc_langs[doc_id]
    except KeyError:
        raise MlirkitError(f"document {doc_id!r} of the {where} has no language in the doc-langs") from None


__all__ = ["keep_languages"]
