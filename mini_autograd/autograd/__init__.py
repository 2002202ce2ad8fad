"""The autograd API, as in torch.autograd: backward, grad, Function, gradcheck, functional, graph,
profiler, anomaly detection and the legacy Variable."""

import sys

from ..core.backward_calls import backward, grad
from . import _functions, anomaly_mode, function, functional, graph, profiler  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .function import Function
from .grad_mode import is_multithreading_enabled, set_multithreading_enabled
from .gradcheck import gradcheck, gradgradcheck  # the function, as torch.autograd.gradcheck
from .graph import SavedTensor
from .profiler import _profiler_enabled, kineto_available  # noqa: F401 (torch.autograd's)
from .variable import Variable

__all__ = [
    "Function",
    "SavedTensor",
    "Variable",
    "anomaly_mode",
    "backward",
    "detect_anomaly",
    "function",
    "functional",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "is_multithreading_enabled",
    "graph",
    "kineto_available",
    "profiler",
    "set_detect_anomaly",
    "set_multithreading_enabled",
]


def __getattr__(name):
    if name == "torch":  # torch.autograd.torch is the package itself, as in PyTorch
        return sys.modules[__name__.rpartition(".")[0]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
