"""What the OpenVINO and ONNX conversions trace: the model's last hidden states from two inputs."""
from __future__ import annotations

from typing import Any


def hidden_states_module(model: Any):
    """``torch.nn.Module`` with ``forward(input_ids, attention_mask) -> last_hidden_state`` (B, L, d)."""
    import torch

    class HiddenStates(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    return HiddenStates(model).eval()


def example_inputs(pad_id: int):
    """A padded (2, 8) batch: tracing must see a mask with zeros, else a model may drop the mask path."""
    import torch

    ids = torch.tensor([[0, 100, 200, 300, 400, 500, 600, 2], [0, 700, 800, 2] + [pad_id] * 4], dtype=torch.long)
    mask = torch.tensor([[1] * 8, [1] * 4 + [0] * 4], dtype=torch.long)
    return ids, mask


__all__ = ["example_inputs", "hidden_states_module"]
