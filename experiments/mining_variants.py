"""The pair selections and mining knobs measured for the ``mined`` SHIFT vectors and not adopted, over the
product's mining loop (:func:`mlirkit.transforms.mining.mined_vectors`).

- ``mutual-margin`` (:func:`mine_pairs`): each ``x``'s best candidate among ``NN_k(x)`` and each ``y``'s among
  ``NN_k(y)`` under the ratio margin of Artetxe & Schwenk (2019), "Margin-based parallel corpus mining with
  multilingual sentence embeddings" (ACL)::

      margin(x, y) = cos(x, y) / ( sum_{z in NN_k(x)} cos(x, z) / 2k + sum_{z in NN_k(y)} cos(y, z) / 2k )

  kept when the two choices are mutual (every document in at most one pair) and the margin is at least
  ``threshold`` (1 means "no closer than the two neighbourhoods on average"; bitext mining of real
  translations uses 1.04-1.06, the pairs here are topic neighbours). Mutual pairs cover a third to two
  thirds of the documents: the noisier estimate (experiments/notes/language-vectors.md).
- ``union-knn``: the product's selection (:func:`mlirkit.transforms.mining.union_knn_pairs`).

:func:`fit_mined_shift` is the knob-for-knob fit the notes' commands use (``python -m experiments.cli fit
--mine-pairs ...``).
"""
from __future__ import annotations

from functools import partial
from typing import Any, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.registry import Registry
from mlirkit.transforms import ShiftTransform
from mlirkit.transforms.mining import (DEFAULT_CHUNK_ROWS, DEFAULT_K, DEFAULT_MAX_ROUNDS, DEFAULT_MIN_PAIRS,
                                       DEFAULT_TOL, MinedPairs, mined_vectors, neighbourhoods, union_knn_pairs)

DEFAULT_THRESHOLD = 1.0


def mine_pairs(tgt: np.ndarray, src: np.ndarray, *, k: int = DEFAULT_K, threshold: float = DEFAULT_THRESHOLD,
               chunk_rows: int = DEFAULT_CHUNK_ROWS) -> MinedPairs:
    """Mutual best ratio-margin pairs between the L2-normalised rows of ``tgt`` (n_t, d) and ``src``
    (n_s, d), kept when the margin is at least ``threshold`` (module docstring).

    ``k`` is capped at the smaller side's size. Ties in the best-margin choice go to the lower row.
    """
    if tgt.ndim != 2 or src.ndim != 2 or tgt.shape[1] != src.shape[1]:
        raise MlirkitError(f"need (n, d) arrays of equal d, got {tgt.shape} and {src.shape}")
    if len(tgt) == 0 or len(src) == 0:
        return MinedPairs(*(np.zeros(0, dtype=t) for t in (np.intp, np.intp, np.float64, np.float64)), mutual=0)
    k = max(1, min(int(k), len(tgt), len(src)))
    s_t, i_t, m_t, _, i_s, m_s = neighbourhoods(tgt, src, k, chunk_rows)
    best_t = i_t[np.arange(len(tgt)), np.argmax(m_t, axis=1)]  # (n_t,) best source row of each x
    best_s = i_s[np.arange(len(src)), np.argmax(m_s, axis=1)]  # (n_s,) best target row of each y
    rows = np.arange(len(tgt))
    mutual = best_s[best_t] == rows
    t_rows, s_rows = rows[mutual], best_t[mutual]
    j = np.argmax(m_t[t_rows], axis=1)
    margin = m_t[t_rows, j].astype(np.float64)
    cos = s_t[t_rows, j].astype(np.float64)
    keep = margin >= threshold
    return MinedPairs(t_rows[keep].astype(np.intp), s_rows[keep].astype(np.intp), margin[keep], cos[keep],
                      mutual=int(mutual.sum()))


#: how a round picks its pairs, by the name the notes use
SELECTIONS: Registry[Any] = Registry("pair selection")
SELECTIONS.register("mutual-margin", mine_pairs)
SELECTIONS.register("union-knn", union_knn_pairs)


def fit_mined_shift(embs: np.ndarray, langs: Sequence[str | None], source_lang: str, *, encoder: dict[str, Any],
                    initial: ShiftTransform | None = None, k: int = DEFAULT_K, threshold: float = DEFAULT_THRESHOLD,
                    min_pairs: int = DEFAULT_MIN_PAIRS, max_rounds: int = DEFAULT_MAX_ROUNDS, tol: float = DEFAULT_TOL,
                    center: bool = True, min_docs: int | None = None, only_langs: Sequence[str] | None = None,
                    origin: str | None = None, topic_rank: int | str | None = None,
                    topic_test_level: float | None = None, selection: str = "union-knn",
                    chunk_rows: int = DEFAULT_CHUNK_ROWS, meta: dict[str, Any] | None = None) -> ShiftTransform:
    """SHIFT vectors mined in ``embs`` with every knob of the investigation; ``selection`` names a pair selection
    of :data:`SELECTIONS` (``threshold`` applies to ``mutual-margin`` only)."""
    if float(threshold) <= 0 or not np.isfinite(threshold):
        raise MlirkitError(f"the margin threshold must be a positive number, got {threshold}")
    select = SELECTIONS.get(selection)
    if selection == "mutual-margin":
        select = partial(mine_pairs, threshold=float(threshold))
    kwargs = {} if min_docs is None else {"min_docs": min_docs}
    params, record = mined_vectors(embs, langs, source_lang, initial=None if initial is None else initial.params_,
                                   k=k, min_pairs=min_pairs, max_rounds=max_rounds, tol=tol, center=center,
                                   langs=only_langs, topic_rank=topic_rank, topic_test_level=topic_test_level,
                                   select=select, selection=selection, chunk_rows=chunk_rows, **kwargs)
    record["mining"]["threshold"] = float(threshold) if selection == "mutual-margin" else None
    record["mining"]["origin"] = origin
    return ShiftTransform.from_tensors(params, source_lang=source_lang, encoder=encoder,
                                       meta={**record, "source": origin, **(meta or {})})
