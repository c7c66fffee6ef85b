"""Language centering (Libovicky et al., 2020, "On the Language Neutrality of Pre-trained Multilingual
Representations"): subtract the language's mean embedding, ``x' = x - alpha * mu_l`` (alpha = 1 is the
published method), ``mu_l`` the mean of language l's embeddings over the parallel passages.
Applied to documents by document language and to queries by query language (the source language too).
"""
from __future__ import annotations

from mlirkit.transforms.transform import TRANSFORMS, OffsetTransform


class CenteringTransform(OffsetTransform):
    method = "centering"
    sides = ("doc", "query")
    tensor_prefix = "mean"
    transforms_source = True


TRANSFORMS.register("centering", CenteringTransform)
