"""The defaults of every language transform, in one place: the same for Python, every CLI, a single-process,
sharded (``--num-shards``) or Ray encode, post-hoc apply and the query-time shift.

- :data:`DEFAULT_ALPHA`: the strength of the correction, 1.0 = the published formula of every method
  (the label-free alpha and the measured best lie close to it: docs/results.md).
- :data:`DEFAULT_MISSING`: the corpus languages a SHIFT transform has no vector for are filled from the corpus
  (``"corpus"``; ``"keep"`` leaves them unshifted): measured better on XQuAD-R (docs/results.md, "Languages
  without vectors"). The definition of a filled vector: :mod:`mlirkit.transforms.hybrid`.
- :data:`DEFAULT_MIN_DOCS`: the fewest documents a language mean is estimated from (corpus-fitted vectors).
- :data:`STATISTICS`: what SHIFT vectors are estimated from (:mod:`mlirkit.transforms.shift_transform`), and
  :data:`DEFAULT_INDEX_STATISTICS`, those of a fit on an index's own documents.
"""
from __future__ import annotations

DEFAULT_ALPHA = 1.0
#: what to do with the corpus languages a transform has no vector for
MISSING_POLICIES = ("corpus", "keep")
DEFAULT_MISSING = "corpus"
DEFAULT_MIN_DOCS = 20
#: the statistics SHIFT vectors are estimated from, name -> one-line description
STATISTICS = {
    "pairs": "V_l = mean over translation pairs of f(D^l) - f(D^src)",
    "corpus": "V_l = mean(l documents) - mean(source documents)",
    "mined": "V_l = mean(x - y) over union-kNN pairs mined in the corpus (centred, iterated), out of the topic "
             "subspace where topic leaks into the corpus vectors",
}
#: the statistics of a fit on an index's own documents (``shift fit --from-index``)
DEFAULT_INDEX_STATISTICS = "mined"

__all__ = ["DEFAULT_ALPHA", "DEFAULT_INDEX_STATISTICS", "DEFAULT_MIN_DOCS", "DEFAULT_MISSING", "MISSING_POLICIES",
           "STATISTICS"]
