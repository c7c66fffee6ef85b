"""The defaults of every language transform, in one place: the same for Python, every CLI, a single-process,
sharded (``--num-shards``) or Ray encode, post-hoc apply and the query-time shift.

- :data:`DEFAULT_ALPHA`: the strength of the correction, 1.0 = the published formula of every method
  (the label-free alpha and the measured best lie close to it: docs/results.md).
- :data:`DEFAULT_MISSING`: the corpus languages a SHIFT transform has no vector for are filled from the corpus
  (``"corpus"``; ``"keep"`` leaves them unshifted): measured better on XQuAD-R (docs/results.md, "Languages
  without vectors"). The definition of a filled vector: :mod:`mlirkit.transforms.hybrid`.
- :data:`DEFAULT_MIN_DOCS`: the fewest documents a language mean is estimated from (corpus-fitted vectors).
"""
from __future__ import annotations

DEFAULT_ALPHA = 1.0
#: what to do with the corpus languages a transform has no vector for
MISSING_POLICIES = ("corpus", "keep")
DEFAULT_MISSING = "corpus"
DEFAULT_MIN_DOCS = 20
