"""Embedding-geometry analysis of a DCL model (the DCL paper's Figure 3).

For texts x: the **base** component ``h = f(x)`` (the pooled backbone output), the **semantic**
component ``z_s = W_s h`` (what retrieval uses) and the **language** component ``z_l = W_l h`` (the
language head). :func:`plot_dcl_components` projects the three, coloured by language, with each
space's language silhouette (high = the space separates languages; the disentangler should put
language into ``z_l`` and take it out of ``z_s``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np


def dcl_components(model: Any, texts: Sequence[str], *, side: str = "doc", batch_size: int = 32,
                   max_length: int | None = None, cache: Any = None) -> dict[str, np.ndarray]:
    """``{"base": h (n, d), "semantic": W_s h (n, d'), "language": W_l h (n, d')}`` (float32).

    ``cache``: a :class:`~mlirkit.train.feature_cache.FeatureCache` holding the texts' states (the
    cached path); otherwise the model encodes the texts. Without the disentangler only ``base``.
    """
    import torch

    prefix = model.config.query_prefix if side == "query" else model.config.doc_prefix
    max_length = max_length or model.config.max_length
    out: dict[str, list[np.ndarray]] = {"base": [], "semantic": [], "language": []}
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            for s in range(0, len(texts), batch_size):
                chunk = list(texts[s:s + batch_size])
                if cache is not None:
                    from mlirkit.train.feature_cache import CachedForward, TextInput, pad_blocks

                    states, mask = pad_blocks([cache.get(TextInput(t, prefix, max_length)) for t in chunk],
                                              cache.hidden)
                    h = CachedForward(model, cache.layer)({"x": (states, mask)})["x"]["h"]
                else:
                    enc = model.tokenize(chunk, prefix, max_length)
                    h, _ = model.encode_hidden(enc["input_ids"], enc["attention_mask"])
                out["base"].append(h.float().numpy())
                if model.semantic is not None:
                    out["semantic"].append(model.semantic_rep(h).float().numpy())
                    out["language"].append(model.language_rep(h).float().numpy())
    finally:
        model.train(was_training)
    return {k: np.concatenate(v) for k, v in out.items() if v}


def plot_dcl_components(components: dict[str, np.ndarray], langs: Sequence[str], out_prefix: str | Path, *,
                        method: str = "pca", max_points: int = 3000, seed: int = 0,
                        extra: Sequence[tuple[str, np.ndarray]] = ()) -> list[Path]:
    """Figure 3: one panel per component (base, semantic, language head) plus ``extra`` panels."""
    from mlirkit.eval.plots import plot_projection_panels

    titles = {"base": "base h = f(x)", "semantic": "semantic W_s h", "language": "language head W_l h"}
    panels = list(extra) + [(titles[k], components[k]) for k in ("base", "semantic", "language") if k in components]
    return plot_projection_panels(panels, langs, out_prefix, method, max_points=max_points, seed=seed)


__all__ = ["dcl_components", "plot_dcl_components"]
