"""mini_autograd: a small autograd engine that behaves like PyTorch's, built on numpy.

import mini_autograd as ma
x = ma.tensor([1.0, 2.0], requires_grad=True)
(x ** 2).sum().backward()
x.grad  # tensor([2., 4.])
"""

from . import autograd, dtypes, nn, optim
from .creation import (
    arange,
    full,
    manual_seed,
    ones,
    ones_like,
    rand,
    randint,
    randn,
    randn_like,
    zeros,
    zeros_like,
)
from .diagnose import diagnosis_mode, set_diagnosis_mode
from .dtypes import bool_ as bool  # noqa: A001 (torch.bool)
from .dtypes import float16, float32, float64, int32, int64
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .ops.arithmetic import add, div, mul, neg, pow, sub
from .ops.elementwise import abs, exp, log, relu, sigmoid, sqrt, tanh
from .ops.linalg import bmm, dot, matmul, mm, mv
from .ops.methods import install as _install_methods
from .ops.reductions import max, mean, norm, sum
from .ops.shape import (
    cat,
    chunk,
    flatten,
    permute,
    reshape,
    squeeze,
    stack,
    transpose,
    unsqueeze,
)
from .ops.softmax import log_softmax, softmax
from .tensor import Tensor, tensor

_install_methods(Tensor)

__version__ = "0.1.0"
dtype = dtypes.dtype

__all__ = [
    "Tensor",
    "abs",
    "nn",
    "optim",
    "add",
    "arange",
    "autograd",
    "bmm",
    "bool",
    "cat",
    "chunk",
    "diagnosis_mode",
    "div",
    "dot",
    "dtype",
    "enable_grad",
    "exp",
    "flatten",
    "float16",
    "float32",
    "float64",
    "full",
    "int32",
    "int64",
    "is_grad_enabled",
    "log",
    "log_softmax",
    "manual_seed",
    "matmul",
    "max",
    "mean",
    "mm",
    "mul",
    "mv",
    "neg",
    "norm",
    "no_grad",
    "ones",
    "ones_like",
    "permute",
    "pow",
    "rand",
    "randint",
    "randn",
    "randn_like",
    "relu",
    "reshape",
    "set_diagnosis_mode",
    "set_grad_enabled",
    "sigmoid",
    "softmax",
    "sqrt",
    "squeeze",
    "stack",
    "sub",
    "sum",
    "tanh",
    "tensor",
    "transpose",
    "unsqueeze",
    "zeros",
    "zeros_like",
]
