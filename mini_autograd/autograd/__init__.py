"""The autograd API, as in torch.autograd: backward, grad, Function, gradcheck, functional, graph,
profiler and the legacy Variable."""

from ..backward_calls import backward, grad
from . import function, functional, graph, profiler
from .function import Function
from .gradcheck import gradcheck, gradgradcheck  # the function, as torch.autograd.gradcheck
from .variable import Variable

__all__ = [
    "Function",
    "Variable",
    "backward",
    "function",
    "functional",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "graph",
    "profiler",
]
