"""The topic-subspace knobs measured and not adopted as such: a given rank and the projection of any SHIFT vectors
(the product's ``mined`` statistics use the subspace at the noise-edge rank, ``mlirkit.transforms.mining``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.transforms import ShiftTransform
from mlirkit.transforms.topic_subspace import AUTO, TopicSubspace, skew_test


def parse_topic_rank(value: str) -> int | str:
    """``"auto"`` (any case) or a whole number >= 0 (``--topic-rank``)."""
    if value.strip().lower() == AUTO:
        return AUTO
    try:
        r = int(value)
    except ValueError:
        raise MlirkitError(f"--topic-rank must be a whole number >= 0 or {AUTO!r}, got {value!r}") from None
    if r < 0:
        raise MlirkitError(f"--topic-rank must be >= 0, got {r}")
    return r


def remove_topic(transform: ShiftTransform, subspace: TopicSubspace, *,
                 test_level: float | None = None) -> ShiftTransform:
    """``transform`` with every vector projected out of ``subspace`` (``V_l' = (I - U_r U_r^T) V_l``); the
    metadata gains ``topic_robust`` (the subspace's record and per language the share of energy removed).
    With ``test_level``, only when the skew test says the vectors carry topic (else they are kept as they
    are, ``topic_robust.applied`` False)."""
    if not isinstance(transform, ShiftTransform):
        raise MlirkitError(f"topic removal is for shift vectors relative to the source language, not {transform.method}")
    removed = {l: round(subspace.energy_in(v), 6) for l, v in transform.params_.items()}
    record: dict[str, Any] = {**subspace.as_dict(), "energy_removed": removed, "applied": True}
    if test_level is not None:
        test = skew_test(subspace, list(transform.params_.values()), test_level)
        record.update(skew_test=test, applied=test["skewed"])
    if record["applied"]:
        params = {l: subspace.project_out(v).astype(np.float32) for l, v in transform.params_.items()}
    else:
        params = dict(transform.params_)
        record["energy_removed"] = {l: 0.0 for l in removed}
        record["energy_in_subspace"] = removed
    meta = {**transform.meta, "topic_robust": record}
    return ShiftTransform.from_tensors(params, encoder=transform.encoder, source_lang=transform.source_lang, meta=meta)
