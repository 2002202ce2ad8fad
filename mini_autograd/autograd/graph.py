"""Graph utilities, as in torch.autograd.graph."""

from ..node import Node
from ..saved import saved_tensors_hooks

__all__ = ["Node", "saved_tensors_hooks"]
