"""The autograd API, as in torch.autograd: backward, grad, Function, graph."""

from ..engine import backward, grad
from . import graph
from .function import Function

__all__ = ["Function", "backward", "grad", "graph"]
