"""The autograd API, as in torch.autograd: backward, grad, Function, gradcheck, functional, graph."""

from ..engine import backward, grad
from . import function, functional, graph
from .function import Function
from .gradcheck import gradcheck, gradgradcheck  # the function, as torch.autograd.gradcheck

__all__ = [
    "Function",
    "backward",
    "function",
    "functional",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "graph",
]
