"""The operation catalogue: each operation computes its result with numpy and, when a gradient
is wanted, records a backward node (named as in PyTorch) that saves exactly what PyTorch saves.
Backward formulas are written with Tensor operations, so `create_graph=True` records them too.

Every operation is a function of the tensor first: methods.py makes them Tensor methods
(`x.exp()`), and `__all__` below lists those that torch also offers as functions (`torch.exp(x)`).
"""

from ..tensor import Tensor
from .arithmetic import add, div, mul, neg, pow, reciprocal, sub
from .compare import allclose, eq, equal, ge, gt, isclose, le, lt, ne
from .elementwise import (
    abs,
    ceil,
    clone,
    cos,
    exp,
    expm1,
    floor,
    log,
    log1p,
    relu,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    tanh,
)
from .indexing import flip, gather, index_select
from .inplace import fill_, zero_
from .linalg import bmm, dot, matmul, mm, mv
from .piecewise import clamp, clamp_max, clamp_min, clip, masked_fill, maximum, minimum, where
from .reductions import (
    all,
    any,
    argmax,
    argmin,
    logsumexp,
    max,
    mean,
    min,
    norm,
    prod,
    std,
    sum,
    var,
)
from .shape import (
    cat,
    chunk,
    flatten,
    narrow,
    permute,
    reshape,
    split,
    squeeze,
    stack,
    t,
    transpose,
    unbind,
    unsqueeze,
)
from .softmax import log_softmax

# torch.softmax is not exported from here: `softmax` is the name of the submodule ops.softmax
# (nn.functional imports it), so the package takes softmax from ops.softmax itself.

# torch.numel(x) and the like, for the methods the Tensor class defines itself
detach, detach_, numel = Tensor.detach, Tensor.detach_, Tensor.numel
is_floating_point = Tensor.is_floating_point

__all__ = [
    "abs",
    "add",
    "all",
    "allclose",
    "any",
    "argmax",
    "argmin",
    "bmm",
    "cat",
    "ceil",
    "chunk",
    "clamp",
    "clamp_max",
    "clamp_min",
    "clip",
    "clone",
    "cos",
    "detach",
    "detach_",
    "div",
    "dot",
    "eq",
    "equal",
    "exp",
    "expm1",
    "fill_",
    "flatten",
    "flip",
    "floor",
    "gather",
    "ge",
    "gt",
    "index_select",
    "is_floating_point",
    "isclose",
    "le",
    "log",
    "log1p",
    "log_softmax",
    "logsumexp",
    "lt",
    "masked_fill",
    "matmul",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "mm",
    "mul",
    "mv",
    "narrow",
    "ne",
    "neg",
    "norm",
    "numel",
    "permute",
    "pow",
    "prod",
    "reciprocal",
    "relu",
    "reshape",
    "round",
    "rsqrt",
    "sigmoid",
    "sign",
    "sin",
    "split",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "std",
    "sub",
    "sum",
    "t",
    "tanh",
    "transpose",
    "unbind",
    "unsqueeze",
    "var",
    "where",
    "zero_",
]
