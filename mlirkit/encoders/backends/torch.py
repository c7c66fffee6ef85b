"""``torch`` backend: the Hugging Face model itself (float32/bfloat16/float16 weights, optional int8)."""
from __future__ import annotations

from typing import Any


def load_runner(*, model: Any = None, load_model: Any = None, **_: Any):
    """``(input_ids, attention_mask) -> last_hidden_state`` (B, L, d) of the torch model."""
    model = model if model is not None else load_model()

    def run(input_ids, attention_mask):
        return model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    return run


__all__ = ["load_runner"]
