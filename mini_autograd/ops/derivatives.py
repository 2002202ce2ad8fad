"""The backward formulas of the elementary operations, as data: mini_autograd's derivatives.yaml.

Each entry is one node: PyTorch's name, what the operation computes, and the gradient of each
input written once, as an expression over `grad` (the gradient of the output), the values the
node saved and the helpers below. `exp: grad * result` reads: the gradient for exp's input is
grad times exp's result, as PyTorch's derivatives.yaml writes it. A node saves what its formulas
name: ExpBackward0 keeps `result`, SinBackward0 `self`. formulas.py makes each entry a node
class, whose docstring is the entry (`print(ExpBackward0.__doc__)`), and runs the formulas on
numpy arrays, or on Tensors under create_graph=True, recorded with PyTorch's names.

- UNARY: an elementwise operation of one tensor. numpy's function of its values, its gradient,
  what it computes. The node (its name capitalized + Backward0), the function `exp`, the method
  `x.exp()`, the in-place form `exp_` and `torch.exp` are all made from the line.
- FUNCTIONS: operations that backward formulas call, each with a node of its own so that
  create_graph records PyTorch's graph (tanh_backward, mul.Scalar...): the numpy expression of
  its value, its node, and the gradients of its inputs.
- NODES: nodes whose operation is written out elsewhere (arithmetic.py's mul works out a dtype
  and saves conditionally), with their gradients here.
"""

import math
import re

import numpy as np

from ..core.tensor import Tensor
from .broadcasting import sum_to
from .formulas import ARRAYS, TENSORS, formula_node
from .promotion import float_values
from .recording import record

_erf = np.frompyfunc(math.erf, 1, 1)  # numpy has no erf: math.erf, element by element


def _sigmoid(x):
    # Written with exp of a non-positive number only, so it never overflows: 1 / (1 + e) where
    # x >= 0, e / (1 + e) elsewhere (one division, of the numerator picked first).
    e = np.exp(-np.abs(x))
    numerator = np.where(x >= 0, 1, e)
    return np.divide(numerator, 1 + e, out=numerator).astype(x.dtype, copy=False)


# name: (numpy's function of the values, the gradient for self, what it computes)
UNARY = {
    "exp": (np.exp, "grad * result", "e ** self"),
    "expm1": (np.expm1, "grad * add_scalar(result, 1)", "e ** self - 1, accurate near 0"),
    "log": (np.log, "grad / self", "the natural logarithm"),
    "log1p": (np.log1p, "grad / add_scalar(self, 1)", "log(1 + self), accurate near 0"),
    "exp2": (np.exp2, "mul_scalar(grad * result, LN2)", "2 ** self"),
    "log2": (np.log2, "grad / mul_scalar(self, LN2)", "the logarithm to base 2"),
    "log10": (np.log10, "grad / mul_scalar(self, LN10)", "the logarithm to base 10"),
    "erf": (
        lambda x: np.asarray(_erf(x), dtype=x.dtype),
        "mul_scalar(exp(-(self**2)), TWO_OVER_SQRT_PI) * grad",
        "the error function, 2 / sqrt(pi) * integral of exp(-t**2) from 0 to self",
    ),
    "erfc": (
        lambda x: np.asarray(np.frompyfunc(math.erfc, 1, 1)(x), dtype=x.dtype),
        "mul_scalar(exp(-(self**2)), -TWO_OVER_SQRT_PI) * grad",
        "1 - erf(self), accurate where erf(self) is near 1",
    ),
    "sin": (np.sin, "grad * cos(self)", "sin(self)"),
    "cos": (np.cos, "grad * -sin(self)", "cos(self)"),
    "tan": (np.tan, "grad * add_scalar(result**2, 1)", "tan(self)"),
    "asin": (
        np.arcsin,
        "grad * rsqrt(add_scalar(-self * self, 1))",
        "the angle whose sine is self (NaN outside [-1, 1])",
    ),
    "acos": (
        np.arccos,
        "grad * -rsqrt(add_scalar(-self * self, 1))",
        "the angle whose cosine is self (NaN outside [-1, 1])",
    ),
    "atan": (np.arctan, "grad / add_scalar(self * self, 1)", "the angle whose tangent is self"),
    "sinh": (np.sinh, "grad * cosh(self)", "the hyperbolic sine, (e**self - e**-self) / 2"),
    "cosh": (np.cosh, "grad * sinh(self)", "the hyperbolic cosine, (e**self + e**-self) / 2"),
    "tanh": (np.tanh, "tanh_backward(grad, result)", "the hyperbolic tangent"),
    "sigmoid": (_sigmoid, "sigmoid_backward(grad, result)", "1 / (1 + e ** -self)"),
    "relu": (lambda x: np.maximum(x, 0), "threshold_backward(grad, result, 0)", "max(self, 0)"),
    "sqrt": (np.sqrt, "grad / (result * 2)", "the square root"),
    "rsqrt": (lambda x: 1 / np.sqrt(x), "mul_scalar(grad, -0.5) * result**3", "1 / sqrt(self)"),
    "reciprocal": (lambda x: 1 / x, "-grad * (result * result)", "1 / self"),
    "abs": (np.abs, "grad * sgn(self)", "the absolute value"),
    "sign": (np.sign, "zeros_like(grad)", "-1, 0 or 1 for each element"),
}
KEEPS_DTYPE = {"relu", "abs", "sign"}  # the others make integers and bools the default float

# signature: (the numpy expression of its value, its node, {input: gradient})
FUNCTIONS = {
    # The .Scalar overloads: a number operand, as backward formulas write it (mul.Scalar records
    # MulBackward1, not MulBackward0).
    "mul_scalar(self, other)": (
        "self * other",
        "MulBackward1",
        {"self": "mul_scalar(grad, other)"},
    ),
    "div_scalar(self, other)": (
        "self / other",
        "DivBackward1",
        {"self": "div_scalar(grad, other)"},
    ),
    "add_scalar(self, other)": ("self + other", "AddBackward1", {"self": "grad"}),
    "sub_scalar(self, other)": ("self - other", "SubBackward1", {"self": "grad"}),
    # PyTorch's backward functions: one operation each, with its own double-backward node
    "tanh_backward(grad_output, output)": (
        "grad_output * fused_one_minus_square(output)",
        "TanhBackwardBackward0",
        {
            "grad_output": "tanh_backward(grad, output)",
            "output": "grad * (mul_scalar(output, -2) * grad_output)",
        },
    ),
    "sigmoid_backward(grad_output, output)": (
        "grad_output * (1 - output) * output",
        "SigmoidBackwardBackward0",
        {
            "grad_output": "sigmoid_backward(grad, output)",
            "output": "grad * grad_output * add_scalar(mul_scalar(output, -2), 1)",
        },
    ),
    # (NaN is not <= threshold: its gradient passes, as in PyTorch)
    "threshold_backward(grad_output, self, threshold)": (
        "where(self <= threshold, 0, grad_output)",
        "ThresholdBackwardBackward0",
        {"grad_output": "threshold_backward(grad, self, threshold)", "self": "zeros_like(grad)"},
    ),
    "leaky_relu_backward(grad_output, self, negative_slope)": (
        "where(self > 0, grad_output, grad_output * negative_slope)",
        "LeakyReluBackwardBackward0",
        {
            "grad_output": "leaky_relu_backward(grad, self, negative_slope)",
            "self": "zeros_like(grad)",
        },
    ),
    "softplus_backward(grad_output, self, beta, threshold)": (
        "where(self * beta > threshold, grad_output, grad_output * sigmoid(self * beta))",
        "SoftplusBackwardBackward0",
        {
            "grad_output": "softplus_backward(grad, self, beta, threshold)",
            "self": "mul_scalar(sigmoid_backward(grad * grad_output, sigmoid(bx := mul_scalar(self, beta)))"
            " * below(bx, threshold), beta)",
        },
    ),
    "hardtanh_backward(grad_output, self, min_val, max_val)": (
        "where((self > min_val) & (self < max_val), grad_output, 0)",
        "HardtanhBackwardBackward0",
        {
            "grad_output": "hardtanh_backward(grad, self, min_val, max_val)",
            "self": "zeros_like(grad)",
        },
    ),
    # logsigmoid's backward from self and buffer = exp(-|self|), what PyTorch's kernel keeps
    "log_sigmoid_backward(grad_output, self, buffer)": (
        "grad_output * where(self < 0, 1 / (1 + buffer), buffer / (1 + buffer))",
        "LogSigmoidBackwardBackward0",
        {
            "grad_output": "log_sigmoid_backward(grad, self, buffer)",
            "self": "grad * grad_output * sub_scalar(s := sigmoid(self), 1) * s",
        },
    ),
    "softmax_backward_data(grad_output, output, dim)": (
        "output * (grad_output - sum_keepdim(grad_output * output, dim))",
        "SoftmaxBackwardDataBackward0",
        {
            "grad_output": "softmax_backward_data(grad, output, dim)",
            "output": "grad_output * grad - sum_keepdim(output * grad_output, dim) * grad"
            " - grad_output * sum_keepdim(output * grad, dim)",
        },
    ),
    "log_softmax_backward_data(grad_output, output, dim)": (
        "grad_output - exp(output) * sum_keepdim(grad_output, dim)",
        "LogSoftmaxBackwardDataBackward0",
        {
            "grad_output": "grad - sum_keepdim(grad * exp(output), dim)",
            "output": "-sum_keepdim(grad_output, dim) * exp(output) * grad",
        },
    ),
}

# node: (what its operation computes, {input: gradient})
NODES = {
    "AddBackward0": (
        "self + alpha * other",
        {"self": "grad", "other": "grad if alpha == 1 else mul_scalar(grad, alpha)"},
    ),
    "SubBackward0": (
        "self - alpha * other",
        {"self": "grad", "other": "-grad if alpha == 1 else mul_scalar(-grad, alpha)"},
    ),
    "RsubBackward1": (
        "other - alpha * self, other a number",
        {"self": "-grad if alpha == 1 else mul_scalar(-grad, alpha)"},
    ),
    "MulBackward0": ("self * other", {"self": "grad * other", "other": "grad * self"}),
    "DivBackward0": (
        "self / other",
        {"self": "grad / other", "other": "-grad * ((self / other) / other)"},
    ),
    "NegBackward0": ("-self", {"self": "-grad"}),
    # The exponent counts as a float (2 gives self ** 1.0 and a MulBackward1 by 2.0); exponent 0
    # gives zeros, outside the graph.
    "PowBackward0": (
        "self ** exponent, exponent a number",
        {
            "self": "zeros_like(self) if exponent == 0 else "
            "grad * mul_scalar(self ** (float(exponent) - 1), float(exponent))"
        },
    ),
    "SgnBackward0": ("the sign of each element, -1, 0 or 1", {"self": "grad * 0"}),
    "ThresholdBackward0": (
        "self if self > threshold else value",
        {"self": "threshold_backward(grad, self, threshold)"},
    ),
    "ThresholdBackward1": (
        "self = threshold(self, threshold, value) in place (self: a clone taken before)",
        {"self": "threshold_backward(grad, self, threshold)"},
    ),
    "LeakyReluBackward0": (
        "self if self > 0 else negative_slope * self",
        {"self": "leaky_relu_backward(grad, self, negative_slope)"},
    ),
    "FloorBackward0": ("floor(self)", {"self": "zeros_like(grad)"}),
    "CeilBackward0": ("ceil(self)", {"self": "zeros_like(grad)"}),
    "RoundBackward0": ("round(self), halves to even", {"self": "zeros_like(grad)"}),
    "RoundBackward1": ("round(self, decimals)", {"self": "zeros_like(grad)"}),
    "CloneBackward0": ("a copy of self", {"self": "grad"}),
    # The views: the gradient is viewed back as the input was.
    "ViewBackward0": ("self viewed with another shape", {"self": "reshape(grad, self_sym_sizes)"}),
    "ReshapeAliasBackward0": (
        "self viewed with another shape, its strides kept (reshape of a non-contiguous tensor)",
        {"self": "reshape(grad, self_sym_sizes)"},
    ),
    "UnsafeViewBackward0": (
        "a copy of self viewed with another shape (reshape of a non-viewable tensor)",
        {"self": "reshape(grad, self_sym_sizes)"},
    ),
    "TransposeBackward0": (
        "self with dim0 and dim1 swapped",
        {"self": "transpose(grad, dim0, dim1)"},
    ),
    "TBackward0": ("self.t()", {"self": "t(grad)"}),
    "PermuteBackward0": (
        "self with its dims in the order args",
        {"self": "permute_back(grad, args)"},
    ),
    "UnsqueezeBackward0": ("self with a new size-1 dim, args", {"self": "squeeze(grad, args)"}),
    "SqueezeBackward0": ("self without its size-1 dims", {"self": "reshape(grad, self_sym_sizes)"}),
    "SqueezeBackward1": (
        "self without size-1 dim `dim`",
        {"self": "reshape(grad, self_sym_sizes)"},
    ),
    "SqueezeBackward4": (
        "the squeeze inside `vector @ matrix` (PyTorch's dims variant)",
        {"self": "reshape(grad, self_sym_sizes)"},
    ),
    "ExpandBackward0": (
        "self broadcast to a larger shape",
        {"self": "sum_to(grad, self_sym_sizes)"},
    ),
    "AliasBackward0": ("self[...], the same tensor", {"self": "grad"}),
    "ToCopyBackward0": ("self cast to another dtype", {"self": "cast(grad, args)"}),
    # A reduction's gradient goes back to every element it reduced. dtype= changed the result's
    # dtype: the gradient is cast back, to_dtype(g, args), as PyTorch's engine casts it.
    "SumBackward0": (
        "sum(self)",
        {"self": "to_dtype(expand_back(grad, None, False, self_sym_sizes), args)"},
    ),
    "SumBackward1": (
        "sum(self, dim), args = (the dims, as indices; self's dtype if dtype= changed it)",
        {"self": "to_dtype(expand_back(grad, args[0], keepdim, self_sym_sizes), args[1])"},
    ),
    "MeanBackward0": (
        "mean(self)",
        {
            "self": "to_dtype(div_scalar(expand_back(grad, None, False, self_sym_sizes), "
            "self_sym_numel), args)"
        },
    ),
    "MeanBackward1": (
        "mean(self, dim), args as sum's",
        {
            "self": "to_dtype(div_scalar(expand_back(grad, args[0], keepdim, self_sym_sizes), "
            "self_sym_numel // (numel(grad) or 1)), args[1])"
        },
    ),
    "TraceBackward0": (
        "the sum of the diagonal of self",
        {"self": "grad * eye(self_sym_sizes, grad)"},
    ),
    "TrilBackward0": ("self, 0 above the diagonal `diagonal`", {"self": "tril(grad, diagonal)"}),
    "TriuBackward0": ("self, 0 below the diagonal `diagonal`", {"self": "triu(grad, diagonal)"}),
    "FlipBackward0": ("self reversed along dims", {"self": "flip(grad, dims)"}),
    "ZeroBackward0": ("self.zero_()", {"self": "grad * 0"}),
    "FillBackward2": ("self.fill_(value), value a number", {"self": "grad * 0"}),
    "FillBackward3": (
        "self.fill_(value), value a 0-d tensor",
        {"self": "zeros_like(grad)", "value": "grad.sum()"},
    ),
    # Sampling: the samples do not vary smoothly with the parameters, so their gradient is 0
    "BernoulliBackward0": (
        "bernoulli(self), 1 with probability self",
        {"self": "zeros_like(grad)"},
    ),
    "BernoulliBackward1": (
        "self.bernoulli_(p), p a tensor of probabilities",
        {"self": "zeros_like(grad)", "p": "zeros(args, grad)"},
    ),
    "NormalBackward1": ("normal(mean, std), std a number", {"mean": "zeros(mean_sym_sizes, grad)"}),
    "NormalBackward2": ("normal(mean, std), mean a number", {"std": "zeros(std_sym_sizes, grad)"}),
    "NormalBackward3": (
        "normal(mean, std)",
        {"mean": "zeros(mean_sym_sizes, grad)", "std": "zeros(std_sym_sizes, grad)"},
    ),
    "WhereBackward0": (
        "where(condition, self, other)",
        {"self": "where(condition, grad, 0)", "other": "where(condition, 0, grad)"},
    ),
    "MaskedFillBackward0": (
        "self, value (a number) where mask",
        {"self": "masked_fill(grad, mask, 0)"},
    ),
    "MaskedFillBackward1": (
        "self, value (a 0-d tensor) where mask",
        {"self": "masked_fill(grad, mask, 0)", "value": "where(mask, grad, 0).sum()"},
    ),
    # the larger (smaller) one gets grad; where they tie, each gets half
    "MaximumBackward0": (
        "maximum(self, other)",
        {
            "self": "masked_fill(where(self == other, div_scalar(grad, 2), grad), self < other, 0)",
            "other": "masked_fill(where(self == other, div_scalar(grad, 2), grad), self > other, 0)",
        },
    ),
    "MinimumBackward0": (
        "minimum(self, other)",
        {
            "self": "masked_fill(where(self == other, div_scalar(grad, 2), grad), self > other, 0)",
            "other": "masked_fill(where(self == other, div_scalar(grad, 2), grad), self < other, 0)",
        },
    ),
    "ClampBackward1": (
        "min(max(self, min), max), bounds numbers or None",
        {"self": "where(inside(self, min, max), grad, 0)"},
    ),
    "ClampMinBackward0": ("max(self, min), min a number", {"self": "where(self >= min, grad, 0)"}),
    "ClampMinBackward1": (
        "max(self, min), min a tensor",
        {"self": "where(self >= min, grad, 0)", "min": "where(self < min, grad, 0)"},
    ),
    "ClampMaxBackward0": ("min(self, max), max a number", {"self": "where(self <= max, grad, 0)"}),
    "ClampMaxBackward1": (
        "min(self, max), max a tensor",
        {"self": "where(self <= max, grad, 0)", "max": "where(self > max, grad, 0)"},
    ),
    # A matrix that was a transposed view (column-major) gets its gradient as one too, as in
    # PyTorch (its mm_mat1_backward, mm_mat2_backward): mm of the transposes, transposed.
    "MmBackward0": (
        "self @ mat2",
        {
            "self": "t(mm(mat2, t(grad))) if column_major(self_sym_sizes, self_sym_strides) "
            "else mm(grad, t(mat2))",
            "mat2": "t(mm(t(grad), self)) if column_major(mat2_sym_sizes, mat2_sym_strides) "
            "else mm(t(self), grad)",
        },
    ),
    "AddmmBackward0": (
        "beta * self + alpha * (mat1 @ mat2), self broadcast",
        {
            "self": "maybe_multiply(grad, beta)",
            "mat1": "maybe_multiply(t(mm(mat2, t(grad))) if column_major(mat1_sym_sizes, "
            "mat1_sym_strides) else mm(grad, t(mat2)), alpha)",
            "mat2": "maybe_multiply(t(mm(t(grad), mat1)) if column_major(mat2_sym_sizes, "
            "mat2_sym_strides) else mm(t(mat1), grad), alpha)",
        },
    ),
    "BmmBackward0": (
        "self @ mat2, batch by batch",
        {"self": "bmm(grad, transpose(mat2, 1, 2))", "mat2": "bmm(transpose(self, 1, 2), grad)"},
    ),
    "MvBackward0": ("self @ vec", {"self": "unsqueeze(grad, 1) * vec", "vec": "mv(t(self), grad)"}),
    "DotBackward0": ("self . tensor", {"self": "grad * tensor", "tensor": "grad * self"}),
    "SoftmaxBackward0": (
        "softmax(self, dim)",
        {"self": "softmax_backward_data(grad, result, dim)"},
    ),
    "LogSoftmaxBackward0": (
        "self - log(sum(exp(self), dim))",
        {"self": "log_softmax_backward_data(grad, result, dim)"},
    ),
    "SoftplusBackward0": (
        "log(1 + exp(beta * self)) / beta, and self where beta * self > threshold",
        {"self": "softplus_backward(grad, self, beta, threshold)"},
    ),
    "HardtanhBackward0": (
        "clamp(self, min_val, max_val)",
        {"self": "hardtanh_backward(grad, self, min_val, max_val)"},
    ),
    "LogSigmoidBackward0": (
        "log(sigmoid(self))",
        {"self": "log_sigmoid_backward(grad, self, buffer)"},
    ),
    # silu and mish differentiate their backward as the elementary operations it is made of
    "SiluBackward0": (
        "self * sigmoid(self)",
        {"self": "grad * (s := sigmoid(self)) * add_scalar(self * one_minus(s), 1)"},
    ),
    "MishBackward0": (
        "self * tanh(softplus(self))",
        {
            "self": "grad * ((t := tanh(log1p(exp(self)))) + self * sigmoid(self) * one_minus(t * t))"
        },
    ),
}

# The helpers formulas call besides the operations above, in their two forms: numpy's, Tensors'
for _name, _value in {"LN2": math.log(2), "LN10": math.log(10)}.items():
    ARRAYS[_name] = TENSORS[_name] = _value
ARRAYS["TWO_OVER_SQRT_PI"] = TENSORS["TWO_OVER_SQRT_PI"] = 2 / math.sqrt(math.pi)


def zeros_like(like):
    """Zeros shaped as `like`, outside the graph (PyTorch's zeros_like in a backward formula)."""
    return Tensor._make(np.zeros_like(like._data))


def zero_like(like):
    """A 0-d zero in like's dtype, outside the graph (PyTorch's at::zeros({}, grad.options()))."""
    return Tensor._make(np.zeros((), like._data.dtype))


ARRAYS["zeros_like"], TENSORS["zeros_like"] = np.zeros_like, zeros_like
ARRAYS["zeros"] = lambda sizes, like: np.zeros(sizes, like.dtype)
TENSORS["zeros"] = lambda sizes, like: Tensor._make(np.zeros(sizes, like._data.dtype))
ARRAYS["sum_keepdim"] = lambda x, dim: x.sum(axis=dim, keepdims=True)
TENSORS["sum_keepdim"] = lambda x, dim: x.sum(dim, keepdim=True)


def where(condition, input, other):
    """where(condition, input, other) for tensors, as a formula calls it (input: a tensor or a
    number): piecewise.where, through the method of a tensor (piecewise.py imports this module)."""
    if not isinstance(input, Tensor):
        input = Tensor._make(np.asarray(input, other._data.dtype))
    return input.where(condition, other)


_UNSIGNED = {2: np.uint16, 4: np.uint32, 8: np.uint64}  # the integer of a float's bits


def where_arrays(condition, input, other):
    """np.where(condition, input, other). A large float array against the number 0 is selected
    with a bit mask instead: numpy's where branches on every element, which on a random mask
    (relu's backward) is ten times slower; the bits of the result are the same."""
    zero_first = type(input) is int and input == 0
    values = other if zero_first else input
    if not (
        (zero_first or (type(other) is int and other == 0))
        and type(values) is np.ndarray
        and type(condition) is np.ndarray
        and condition.dtype == np.bool_
        and values.dtype.kind == "f"
        and values.size >= 4096
        and values.shape == condition.shape
        and values.flags.c_contiguous
        and condition.flags.c_contiguous
    ):
        return np.where(condition, input, other)
    result = np.empty_like(values)
    mask = result.view(_UNSIGNED[values.itemsize])  # the result's bits, as an integer array
    np.copyto(mask, condition)  # 1 where true, else 0
    if zero_first:
        np.subtract(mask, 1, out=mask)  # all bits set where false: keep `other` there
    else:
        np.negative(mask, out=mask)  # all bits set where true: keep `input` there
    np.bitwise_and(mask, values.view(mask.dtype), out=mask)
    return result


ARRAYS["where"], TENSORS["where"] = where_arrays, where
ARRAYS["masked_fill"] = lambda t, mask, value: where_arrays(mask, value, t)
TENSORS["masked_fill"] = lambda t, mask, value: t.masked_fill(mask, value)


def one_minus(t):
    """1 - t as PyTorch's backward formulas write it: a tensor subtraction (SubBackward0)."""
    return t._make_plain(np.asarray(1, t._data.dtype)).sub(t)


ARRAYS["one_minus"], TENSORS["one_minus"] = lambda t: 1 - t, one_minus


def fused_one_minus_square(x):
    """1 - x * x rounded once, as PyTorch's float32 tanh_backward kernel (a fused multiply-add)
    gives it: in float64, where the product of two float32 numbers is exact."""
    if x.dtype == np.float32:
        return (1 - x.astype(np.float64) * x).astype(np.float32)
    return 1 - x * x


ARRAYS["fused_one_minus_square"] = fused_one_minus_square
ARRAYS["reshape"], TENSORS["reshape"] = np.reshape, lambda t, shape: t.reshape(shape)
ARRAYS["squeeze"], TENSORS["squeeze"] = np.squeeze, lambda t, dim: t.squeeze(dim)
ARRAYS["permute_back"] = lambda t, dims: np.transpose(t, np.argsort(dims))
TENSORS["permute_back"] = lambda t, dims: t.permute(*np.argsort(dims).tolist())
ARRAYS["sum_to"] = TENSORS["sum_to"] = sum_to
ARRAYS["tril"], TENSORS["tril"] = np.tril, lambda t, diagonal: t.tril(diagonal)
ARRAYS["triu"], TENSORS["triu"] = np.triu, lambda t, diagonal: t.triu(diagonal)
ARRAYS["flip"], TENSORS["flip"] = np.flip, lambda t, dims: t.flip(*dims)
ARRAYS["eye"] = lambda sizes, like: np.eye(*sizes, dtype=like.dtype)
TENSORS["eye"] = lambda sizes, like: Tensor._make(np.eye(*sizes, dtype=like._data.dtype))
ARRAYS["numel"], TENSORS["numel"] = np.size, lambda t: t._data.size
ARRAYS["below"] = lambda x, threshold: (x < threshold).astype(x.dtype)  # 1 or 0
TENSORS["below"] = lambda x, threshold: Tensor._make(ARRAYS["below"](x._data, threshold))
ARRAYS["column_major"] = TENSORS["column_major"] = lambda sizes, strides: (
    len(strides) == 2 and strides[0] == 1 and strides[1] == sizes[0]
)
ARRAYS["maybe_multiply"] = lambda t, number: t if number == 1 else t * number
TENSORS["maybe_multiply"] = lambda t, number: t if number == 1 else TENSORS["mul_scalar"](t, number)
ARRAYS["mm"] = ARRAYS["bmm"] = ARRAYS["mv"] = np.matmul
TENSORS["mm"], TENSORS["bmm"] = lambda a, b: a.mm(b), lambda a, b: a.bmm(b)
TENSORS["mv"], TENSORS["t"], ARRAYS["t"] = lambda a, b: a.mv(b), lambda a: a.t(), np.transpose
ARRAYS["transpose"], TENSORS["transpose"] = np.swapaxes, lambda t, a, b: t.transpose(a, b)
ARRAYS["unsqueeze"], TENSORS["unsqueeze"] = np.expand_dims, lambda t, dim: t.unsqueeze(dim)


def expand_back(g, dims, keepdim, shape):
    """A reduced gradient broadcast back to `shape`, the dims it reduced without keepdim put
    back first (ascending, so each lands where it was, as PyTorch unsqueezes them)."""
    if isinstance(g, Tensor):
        for d in dims if dims is not None and not keepdim else ():
            g = g.unsqueeze(d)
        return g.expand(*shape)
    return np.broadcast_to(g if dims is None or keepdim else np.expand_dims(g, dims), shape)


ARRAYS["expand_back"] = TENSORS["expand_back"] = expand_back


def cast(self, np_dtype):
    """self converted to another dtype (recorded as ToCopyBackward0; an integer or bool result
    is not recorded: it cannot require grad)."""
    data = self._data.astype(np_dtype)
    if data.dtype.kind != "f":
        return Tensor._make(data)
    return record(NODE_TYPES["ToCopyBackward0"], data, (self,), args=self._data.dtype)


ARRAYS["cast"], TENSORS["cast"] = lambda g, dtype: g.astype(dtype), cast
ARRAYS["to_dtype"] = lambda g, dtype: g if dtype is None or g.dtype == dtype else g.astype(dtype)
TENSORS["to_dtype"] = lambda g, dtype: g if dtype in (None, g._data.dtype) else cast(g, dtype)


def inside(x, low, high):
    """The bool array (or tensor, for tensors) `low <= x <= high`; a bound of None does not limit."""
    values = [getattr(v, "_data", v) for v in (x, low, high)]
    mask = np.ones(np.shape(values[0]), dtype=bool)
    if low is not None:
        mask = mask & (values[0] >= values[1])
    if high is not None:
        mask = mask & (values[0] <= values[2])
    return mask if x is values[0] else Tensor._make(mask)


ARRAYS["inside"] = TENSORS["inside"] = inside


def node_name(operation):
    """PyTorch's node name for an operation: exp -> ExpBackward0, log1p -> Log1PBackward0."""
    camel = "".join(part[:1].upper() + part[1:] for part in operation.split("_"))
    return re.sub(r"(?<=\d)[a-z]", lambda m: m.group().upper(), camel) + "Backward0"


def _named(function, name, doc):
    """`function` under the operation's name (its own code object, so profiles and tracebacks
    name it) and docstring."""
    function.__code__ = function.__code__.replace(co_name=name)
    function.__name__ = function.__qualname__ = name
    function.__doc__, function.__module__ = doc, __name__
    return function


def _unary(name, numpy_function, node_type, keeps_dtype):
    """The operation `name`: numpy_function of self's values, recorded by node_type, which saves
    `self` or `result` when its formula names it."""
    keep = "result" if "result" in node_type.uses else "self" if "self" in node_type.uses else None

    def operation(self):
        data = numpy_function(self._data if keeps_dtype else float_values(self))
        if keep == "result":
            return record(node_type, data, (self,), {}, save_result_as="result")
        return record(node_type, data, (self,), {"self": self} if keep else {})

    return operation


def _function(signature, expression, node_type):
    """(numpy form, Tensor form) of a FUNCTIONS entry: the Tensor form records node_type, whose
    inputs are the parameters with a gradient and which saves those its formulas name."""
    name, params = re.fullmatch(r"(\w+)\((.*)\)", signature).groups()
    params = params.split(", ")
    on_arrays = eval(f"lambda {', '.join(params)}: {expression}", ARRAYS)
    inputs = [params.index(p) for p in node_type.inputs]
    saves = [params.index(p) for p in node_type.uses]

    def on_tensors(*args):
        data = on_arrays(*[a._data if isinstance(a, Tensor) else a for a in args])
        saved = {params[i]: args[i] for i in saves}
        return record(node_type, data, tuple([args[i] for i in inputs]), saved)

    doc = f"{signature} = {expression}, recorded as {node_type.__name__} (create_graph)."
    return _named(on_arrays, name, doc), _named(on_tensors, name, doc)


# The helpers' names first (a name a formula reads is a helper's, or else a saved value's) ...
for _signature in FUNCTIONS:
    ARRAYS[_signature.partition("(")[0]] = TENSORS[_signature.partition("(")[0]] = None
for _name in [*UNARY, "sgn"]:
    ARRAYS[_name] = TENSORS[_name] = None
# ... then the nodes, and the operations that record them.
NODE_TYPES = {
    name: formula_node(name, f"out = {doc}", grads, __name__)
    for name, (doc, grads) in NODES.items()
}
for _signature, (_expression, _node, _grads) in FUNCTIONS.items():
    NODE_TYPES[_node] = formula_node(_node, f"out = {_signature} = {_expression}", _grads, __name__)
    _name = _signature.partition("(")[0]
    ARRAYS[_name], TENSORS[_name] = _function(_signature, _expression, NODE_TYPES[_node])
OPERATIONS = {}  # the UNARY operations: {name: function}
for _name, (_numpy, _grad, _doc) in UNARY.items():
    _node = NODE_TYPES[node_name(_name)] = formula_node(
        node_name(_name), f"out = {_name}(self): {_doc}", {"self": _grad}, __name__
    )
    ARRAYS[_name] = _numpy
    TENSORS[_name] = OPERATIONS[_name] = _named(
        _unary(_name, _numpy, _node, _name in KEEPS_DTYPE), _name, f"{_doc}; backward: {_grad}."
    )
globals().update(NODE_TYPES)
globals().update(OPERATIONS)
globals().update({name: TENSORS[name] for name in (s.partition("(")[0] for s in FUNCTIONS)})


def sgn(self):
    """The sign of each element (-1, 0 or 1), as abs's backward uses it; backward: 0."""
    data = np.sign(self._data)
    return record(
        NODE_TYPES["SgnBackward0"], data, (self,), {"self": self}, save_result_as="result"
    )


ARRAYS["sgn"], TENSORS["sgn"] = np.sign, sgn
