"""The operation catalogue: each operation computes its result with numpy and, when a gradient
is wanted, records a backward node (named as in PyTorch) that saves exactly what PyTorch saves.
The backward formulas of the elementary operations are a table (derivatives.py), run on numpy
arrays, or on Tensors under `create_graph=True`, which records them too.

Every operation is a function of the tensor first: methods.py makes them Tensor methods
(`x.exp()`), and `__all__` below lists those that torch also offers as functions (`torch.exp(x)`).
Each of those is the method as `function_form` wraps it: it also takes its first argument by
name (`torch.sum(input=x)`) and `out=`, by the rules of the tables below.
"""

from ..core.tensor import Tensor
from .activations import selu
from .arithmetic import add, div, mul, neg, pow, sub
from .comparison import (
    LOGICAL,
    PREDICATES,
    allclose,
    bitwise_not,
    eq,
    equal,
    ge,
    gt,
    isclose,
    isin,
    le,
    lt,
    ne,
    signbit,
)
from .compositions import FUNCTIONS as COMPOSITIONS
from .convolution import conv1d, conv2d
from .derivatives import OPERATIONS
from .diagonal import diagonal
from .einsum import einsum
from .elementwise import atan2, ceil, clone, floor, round, square, threshold
from .function_form import function_form
from .histogram import histogram
from .indexing import flip, gather, index_add, index_select, masked_select, roll, scatter
from .inplace import fill_, zero_
from .inplace_elementwise import (
    TABLE_FORMS,
    ceil_,
    clamp_,
    clamp_max_,
    clamp_min_,
    floor_,
    neg_,
    round_,
    square_,
    threshold_,
)
from .inplace_shape import as_strided_, resize_as_
from .linalg import addmm, bmm, diag, dot, matmul, mm, mv, outer, trace, tril, triu
from .median import median, nanmedian
from .piecewise import clamp, clamp_max, clamp_min, clip, masked_fill, maximum, minimum, where
from .pooling import avg_pool1d, max_pool1d, max_pool2d
from .reductions import (
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    argsort,
    count_nonzero,
    cumprod,
    cumsum,
    kthvalue,
    logsumexp,
    max,
    mean,
    min,
    norm,
    prod,
    sort,
    std,
    std_mean,
    sum,
    topk,
    var,
    var_mean,
)
from .scatter_reduce import index_reduce, scatter_reduce
from .searchsorted import bucketize, searchsorted
from .setitem import index_put, index_put_
from .shape import (
    as_strided,
    cat,
    chunk,
    flatten,
    meshgrid,
    narrow,
    permute,
    reshape,
    select,
    split,
    split_with_sizes,
    squeeze,
    stack,
    t,
    transpose,
    unbind,
    unsqueeze,
)
from .softmax import log_softmax
from .unique import unique, unique_consecutive
from .unsafe_split import unsafe_chunk, unsafe_split, unsafe_split_with_sizes

# torch.softmax is not exported from here: `softmax` is the name of the submodule ops.softmax
# (nn.functional imports it), so the package takes softmax from ops.softmax itself.

# torch.numel(x) and the like, for the methods the Tensor class defines itself
detach, detach_, numel = Tensor.detach, Tensor.detach_, Tensor.numel
is_floating_point = Tensor.is_floating_point
# the table's elementwise operations and their in-place forms (derivatives.py): exp, exp_...
TABLE = {**OPERATIONS, **TABLE_FORMS}
del TABLE["sign_"]  # a method only: torch has no torch.sign_
globals().update(TABLE)
globals().update(PREDICATES, **LOGICAL)  # isnan, isinf, isfinite..., logical_and...
globals().update(COMPOSITIONS)  # hstack, tile, diff, nonzero... (compositions.py)
# torch's other names for some of them
arccos, arcsin, arctan = OPERATIONS["acos"], OPERATIONS["asin"], OPERATIONS["atan"]
arctan2, clip_ = atan2, clamp_

__all__ = [
    "add",
    "addmm",
    "all",
    "allclose",
    "amax",
    "amin",
    "any",
    "arccos",
    "arcsin",
    "arctan",
    "arctan2",
    "argmax",
    "argmin",
    "argsort",
    "as_strided",
    "as_strided_",
    "atan2",
    "avg_pool1d",
    "bmm",
    "bucketize",
    "cat",
    "ceil",
    "ceil_",
    "chunk",
    "clamp",
    "clamp_",
    "clamp_max",
    "clamp_max_",
    "clamp_min",
    "clamp_min_",
    "clip",
    "clip_",
    "clone",
    "conv1d",
    "conv2d",
    "count_nonzero",
    "cumprod",
    "cumsum",
    "detach",
    "detach_",
    "diag",
    "diagonal",
    "div",
    "dot",
    "einsum",
    "eq",
    "equal",
    "fill_",
    "flatten",
    "flip",
    "masked_select",
    "floor",
    "floor_",
    "gather",
    "ge",
    "gt",
    "histogram",
    "index_add",
    "index_put",
    "index_put_",
    "index_reduce",
    "index_select",
    "is_floating_point",
    "isin",
    "isclose",
    "kthvalue",
    "le",
    "log_softmax",
    "logsumexp",
    "lt",
    "masked_fill",
    "matmul",
    "max",
    "max_pool1d",
    "max_pool2d",
    "maximum",
    "mean",
    "median",
    "meshgrid",
    "min",
    "minimum",
    "mm",
    "mul",
    "mv",
    "nanmedian",
    "narrow",
    "ne",
    "neg",
    "neg_",
    "norm",
    "numel",
    "outer",
    "permute",
    "pow",
    "prod",
    "reshape",
    "resize_as_",
    "roll",
    "round",
    "round_",
    "scatter_reduce",
    "searchsorted",
    "selu",
    "signbit",
    "bitwise_not",
    "sort",
    "split",
    "split_with_sizes",
    "square",
    "square_",
    "squeeze",
    "stack",
    "std",
    "std_mean",
    "scatter",
    "select",
    "sub",
    "sum",
    "t",
    "topk",
    "threshold",
    "threshold_",
    "trace",
    "transpose",
    "tril",
    "triu",
    "unbind",
    "unique",
    "unique_consecutive",
    "unsafe_chunk",
    "unsafe_split",
    "unsafe_split_with_sizes",
    "unsqueeze",
    "var",
    "var_mean",
    "where",
    "zero_",
    *TABLE,
    *PREDICATES,
    *LOGICAL,
    *COMPOSITIONS,
]

# --- out=: how each function writes its result into a given tensor ----------------------------
# Most cast the result into out's dtype, as in-place operations do ("result type Float can't be
# cast to the desired output type Long" where they cannot); these compute in out's dtype:
OUT_IN_ITS_DTYPE = {"cumprod", "cumsum", "sum"}
# these want out to have the result's dtype exactly, each with its own error for another:
OUT_OF_THE_SAME_DTYPE = {
    "Expected out tensor to have dtype {result_c}, but got {out_c} instead": {
        *("addmm", "argmax", "argmin", "bmm", "diag", "gather", "log_softmax", "matmul", "mm"),
        *("mv", "norm", "softmax", "tril", "triu"),
    },
    "Found dtype {out} but expected {result}": {
        *("abs", "ceil", "clamp", "clamp_max", "clamp_min", "clip", "floor", "neg", "round"),
        "sign",
    },
    "{name} only supports bool tensor for result, got: {out}": {"all", "any"},
    "{name} does not support non-boolean outputs.": {"isposinf", "isneginf"},
    "Expected the dtype for input and out to match, but got {result} for input's dtype and {out} "
    "for out's dtype.": {"amax", "amin"},
    "result dtype {out} does not match input dtype {result}": {"dot"},
    "index_select(): self and result must have the same scalar type": {"index_select"},
    "Expected out type to be {result} but got {out}": {"where"},
}
# and these have no out= at all (nor do the in-place forms, whose names end in _):
NO_OUT = {
    *("avg_pool1d", "conv1d", "conv2d", "max_pool1d", "max_pool2d"),
    *("as_strided", "histogram", "index_put", "meshgrid"),
    *("allclose", "chunk", "clone", "count_nonzero", "detach", "equal", "flatten", "flip"),
    *("is_floating_point", "isclose", "masked_fill", "narrow", "numel", "permute", "relu"),
    *("isfinite", "isinf", "isnan", "isreal"),
    *("atleast_1d", "atleast_2d", "atleast_3d", "broadcast_tensors", "diff", "fliplr", "flipud"),
    *("movedim", "moveaxis", "repeat_interleave", "swapaxes", "swapdims", "tile", "unflatten"),
    "argwhere",
    *("reshape", "selu", "split", "squeeze", "t", "trace", "transpose", "unbind", "unsqueeze"),
    *("select", "split_with_sizes", "std_mean", "var_mean"),
    *("argsort", "diagonal", "einsum", "unique", "unique_consecutive"),
    *("unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes"),
}
# the name of the first argument, where it is not `input`
FIRST_ARGUMENT = {
    **{"cat": "tensors", "stack": "tensors", "where": "condition"},
    **{"isin": "elements", "searchsorted": "sorted_sequence"},
    **dict.fromkeys(("hstack", "vstack", "row_stack", "dstack", "column_stack"), "tensors"),
}


def _out_rule(name):
    if name in NO_OUT or name.endswith("_"):
        return None
    if name in OUT_IN_ITS_DTYPE:
        return "dtype"
    return next((m for m, names in OUT_OF_THE_SAME_DTYPE.items() if name in names), "cast")


for _name in __all__:
    globals()[_name] = function_form(
        globals()[_name], _name, _out_rule(_name), FIRST_ARGUMENT.get(_name, "input")
    )
