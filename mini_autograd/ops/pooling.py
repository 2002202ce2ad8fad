"""Pooling, recorded as PyTorch records it: max_pool2d (MaxPool2DWithIndicesBackward0, which
keeps the argmax of every window), avg_pool2d (AvgPool2DBackward0), adaptive_avg_pool2d
(AdaptiveAvgPool2DBackward0, or a mean for a 1 x 1 output), and their 1-D forms, which PyTorch
computes as the 2-D ones on a height of 1.

The windows are an `as_strided` view of the padded input (N, C, kh, kw, oh, ow), as in
convolution.py. Each backward is itself a recorded operation (its node's name ends in
BackwardBackward0), linear in the gradient, whose backward is the forward pooling again (or a
gather of the argmax), so create_graph=True works.
"""

import itertools

import numpy as np

from ..core.node import Node
from ..core.tensor import Tensor
from .convolution import _windows
from .recording import record
from .reductions import mean
from .shape import normalize_dim, squeeze, unsqueeze


# --- sizes and checks -----------------------------------------------------------------------------
def _pair(value):
    """An int as the list PyTorch's argument parser makes of it for a 2-D pooling: (v, v)."""
    return (value, value) if isinstance(value, (int, np.integer)) else tuple(value)


def _two(values, op, name):
    """(height, width) of a setting given as 1 or 2 values; a stride may also be omitted (())."""
    if len(values) in (1, 2):
        return (values[0], values[-1])
    if name == "stride":
        wanted = "must either be omitted, a single int, or a tuple of two ints"
    elif name == "dilation":
        wanted = "must be either a single int, or a tuple of two ints"
    else:
        wanted = "must either be a single int, or a tuple of two ints"
    raise RuntimeError(f"{op}: {name} {wanted}")


def pooling_output_size(size, kernel, pad, stride, dilation, ceil_mode):
    """floor (or ceil) of (size + 2 pad - dilation (kernel - 1) - 1) / stride, + 1; in ceil mode
    the last window must start inside the input or its left padding."""
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > ((kernel - 1) * dilation + 1) // 2:
        raise RuntimeError(
            f"pad should be at most half of effective kernel size, but got pad={pad}, "
            f"kernel_size={kernel} and dilation={dilation}"
        )
    span = size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = span // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _output_shape(x, kernel, stride, padding, dilation, ceil_mode):
    """(oh, ow), with PyTorch's checks of pool2d_shape_check."""
    size = pooling_output_size
    out = tuple(
        size(*args, ceil_mode) for args in zip(x.shape[-2:], kernel, padding, stride, dilation)
    )
    if min(kernel) <= 0:
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kH: {kernel[0]} kW: {kernel[1]}"
        )
    if min(stride) <= 0:
        raise RuntimeError(
            f"stride should be greater than zero, but got dH: {stride[0]} dW: {stride[1]}"
        )
    if min(dilation) <= 0:
        raise RuntimeError(
            "dilation should be greater than zero, but got dilationH: "
            f"{dilation[0]} dilationW: {dilation[1]}"
        )
    if min(out) < 1:
        planes, (h, w) = x.shape[-3], x.shape[-2:]
        raise RuntimeError(
            f"Given input size: ({planes}x{h}x{w}). Calculated output size: "
            f"({planes}x{out[0]}x{out[1]}). Output size is too small"
        )
    return out


def _padded(x, padding, kernel, stride, dilation, out_size, fill):
    """x as (N, C, H, W) padded with `fill`: `padding` on the left, and on the right as much as
    the last window needs (more than `padding` in ceil mode); (N, C, kh, kw, oh, ow) windows."""
    x4 = x if x.ndim == 4 else x[None]
    widths = [(0, 0), (0, 0)]
    for n, p, k, s, d, o in zip(x.shape[-2:], padding, kernel, stride, dilation, out_size):
        widths.append((p, max((o - 1) * s + (k - 1) * d + 1 - n - p, 0)))
    padded = np.pad(x4, widths, constant_values=fill) if any(map(any, widths)) else x4
    return _windows(padded, kernel, stride, dilation, out_size)


def _add_windows_back(per_window, x_shape, kernel, stride, dilation, padding, out_size):
    """The gradient of the windows view: each window's values added back where they were read."""
    lead = (int(np.prod(x_shape[:-2])),)
    size = [
        max(n + p, (o - 1) * s + (k - 1) * d + 1)
        for n, p, k, s, d, o in zip(x_shape[-2:], padding, kernel, stride, dilation, out_size)
    ]
    padded = np.zeros((*lead, *size), per_window.dtype)
    per_window = per_window.reshape(*lead, *kernel, *out_size)
    for i, j in itertools.product(range(kernel[0]), range(kernel[1])):
        rows = slice(
            i * dilation[0], i * dilation[0] + stride[0] * (out_size[0] - 1) + 1, stride[0]
        )
        cols = slice(
            j * dilation[1], j * dilation[1] + stride[1] * (out_size[1] - 1) + 1, stride[1]
        )
        padded[:, rows, cols] += per_window[:, i, j]
    (ph, pw), (h, w) = padding, x_shape[-2:]
    return np.ascontiguousarray(padded[:, ph : ph + h, pw : pw + w]).reshape(x_shape)


def _zeros_like_input(node):
    """The gradient a pooling's backward gives its input: zero (it is linear in the gradient)."""
    shape, dtype = node.args
    return Tensor._make(np.zeros(shape, dtype))


# --- max pooling ----------------------------------------------------------------------------------
class MaxPool2DWithIndicesBackward0(Node):
    """out = max over each window of self:  d self = g added at each window's argmax (result1)."""

    __slots__ = ()

    def apply(self, g):
        x, indices = self.saved("self"), self.saved("result1")
        return (max_pool2d_with_indices_backward(g, x, indices),)


class MaxPool2DWithIndicesBackwardBackward0(Node):
    """out = zeros with grad_output added at indices:  d grad_output = g at the indices (a gather),
    d self = 0."""

    __slots__ = ()

    def apply(self, g):
        indices = self.saved("indices")
        plane_shape = (*indices.shape[:-2], -1)
        picked = g.contiguous().view(*plane_shape).gather(-1, indices.view(*plane_shape))
        return (
            picked.view(*indices.shape) if self.needs_input_grad(0) else None,
            _zeros_like_input(self) if self.needs_input_grad(1) else None,
        )


def max_pool2d_with_indices_backward(grad_output, input, indices):
    """zeros like input, with grad_output[n, c, i, j] added at input's argmax indices[n, c, i, j]."""
    h, w = input.shape[-2:]
    planes = indices._data.reshape(-1, indices.shape[-2] * indices.shape[-1])
    flat = planes + (np.arange(planes.shape[0]) * (h * w))[:, None]
    g = grad_output._data
    summed = np.bincount(flat.ravel(), weights=g.ravel(), minlength=input._data.size)
    data = summed.astype(g.dtype, copy=False).reshape(input.shape)
    args = (input._data.shape, input._data.dtype)
    node_type = MaxPool2DWithIndicesBackwardBackward0
    return record(node_type, data, (grad_output, input), {"indices": indices}, args=args)


def _lowest(dtype):
    """The padding of a max pooling: -inf, or the smallest integer."""
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def max_pool2d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """out[n, c, i, j] = max over k, l of input[n, c, i sh + k dh - ph, j sw + l dw - pw] (padding: -inf);
    with return_indices, also where each max is, as h * W + w."""
    kernel_given, stride_given = _pair(kernel_size), () if stride is None else _pair(stride)
    padding_given, dilation_given = _pair(padding), _pair(dilation)
    kernel = _two(kernel_given, "max_pool2d", "kernel_size")
    stride = _two(stride_given, "max_pool2d", "stride") if stride_given else kernel
    padding = _two(padding_given, "max_pool2d", "padding")
    dilation = _two(dilation_given, "max_pool2d", "dilation")
    if input.ndim not in (3, 4) or 0 in input.shape[-3:]:
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    out_size = _output_shape(input, kernel, stride, padding, dilation, ceil_mode)
    x = input._data
    windows = _padded(x, padding, kernel, stride, dilation, out_size, _lowest(x.dtype))
    windows = windows.reshape(*windows.shape[:2], -1, *out_size)  # (N, C, kh * kw, oh, ow)
    which = windows.argmax(axis=2)
    data = np.take_along_axis(windows, which[:, :, None], axis=2)[:, :, 0].reshape(
        *x.shape[:-2], *out_size
    )
    # where the max is: the window's corner plus the chosen offset, divmod(which, kw)
    down, right = np.divmod(which, kernel[1])
    h = np.arange(out_size[0])[:, None] * stride[0] - padding[0] + down * dilation[0]
    w = np.arange(out_size[1]) * stride[1] - padding[1] + right * dilation[1]
    indices = Tensor._make((h * x.shape[-1] + w).reshape(data.shape))
    saved = {
        "ceil_mode": ceil_mode,
        "dilation": dilation_given,
        "kernel_size": kernel_given,
        "padding": padding_given,
        "result1": indices,
        "self": input,
        "stride": stride_given,
    }
    out = record(MaxPool2DWithIndicesBackward0, data, (input,), saved)
    return (out, indices) if return_indices else out


def max_pool1d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """out[n, c, i] = max over k of input[n, c, i stride + k dilation - padding]: max_pool2d on a height of 1."""
    if input.ndim not in (2, 3):
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
            f"input, but got:{list(input.shape)}"
        )
    (k,) = _single(kernel_size)
    (s,) = _single(kernel_size if stride is None else stride)
    (p,), (d,) = _single(padding), _single(dilation)
    result = max_pool2d(unsqueeze(input, -2), (1, k), (1, s), (0, p), (1, d), ceil_mode, True)
    out, indices = squeeze(result[0], -2), squeeze(result[1], -2)
    return (out, indices) if return_indices else out


def _single(value):
    """An int as a one-element tuple; a sequence as a tuple."""
    return (value,) if isinstance(value, (int, np.integer)) else tuple(value)


# --- average pooling ------------------------------------------------------------------------------
def _divisors(x_shape, kernel, stride, padding, out_size, count_include_pad, divisor_override):
    """What each window's sum is divided by: its size (clipped to the padded input), its number of
    input elements (count_include_pad=False), or divisor_override; shape (oh, ow)."""
    if divisor_override is not None:
        return np.full(out_size, divisor_override)
    counts = []
    for n, k, s, p, o in zip(x_shape[-2:], kernel, stride, padding, out_size):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, n)
        counts.append(end - start)
    return counts[0][:, None] * counts[1]


class AvgPool2DBackward0(Node):
    """out = mean over each window of self:  d self = g / divisor added back over each window."""

    __slots__ = ()

    def apply(self, g):
        return (avg_pool2d_backward(g, self.saved("self"), *_avg_settings(self)),)


class AvgPool2DBackwardBackward0(Node):
    """out = grad_output / divisor added back over each window:  d grad_output = avg_pool2d(g),
    d self = 0."""

    __slots__ = ()

    def apply(self, g):
        return (
            avg_pool2d(g, *_avg_settings(self)) if self.needs_input_grad(0) else None,
            _zeros_like_input(self) if self.needs_input_grad(1) else None,
        )


_AVG_SETTINGS = (
    "kernel_size",
    "stride",
    "padding",
    "ceil_mode",
    "count_include_pad",
    "divisor_override",
)


def _avg_settings(node):
    """(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override) as given."""
    return tuple(node._saved[name] for name in _AVG_SETTINGS)


def _avg_arguments(kernel_size, stride, padding, divisor_override):
    """(kernel, stride, padding) as (height, width), checked as PyTorch's avg_pool2d checks them."""
    kernel = _two(kernel_size, "avg_pool2d", "kernel_size")
    stride = _two(stride, "avg_pool2d", "stride") if stride else kernel
    padding = _two(padding, "avg_pool2d", "padding")
    if divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return kernel, stride, padding


def avg_pool2d_backward(
    grad_output, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
):
    """zeros like input, with grad_output[n, c, i, j] / divisor[i, j] added over window (i, j)."""
    kernel, steps, pads = _avg_arguments(kernel_size, stride, padding, divisor_override)
    out_size = grad_output.shape[-2:]
    g = grad_output._data
    divisors = _divisors(
        input.shape, kernel, steps, pads, out_size, count_include_pad, divisor_override
    )
    share = (g / divisors).astype(g.dtype, copy=False).reshape(-1, 1, 1, *out_size)
    per_window = np.broadcast_to(share, (share.shape[0], *kernel, *out_size))
    data = _add_windows_back(per_window, input.shape, kernel, steps, (1, 1), pads, out_size)
    saved = dict(zip(_AVG_SETTINGS, (kernel_size, stride, padding, ceil_mode, count_include_pad)))
    saved["divisor_override"] = divisor_override
    args = (input._data.shape, input._data.dtype)
    return record(AvgPool2DBackwardBackward0, data, (grad_output, input), saved, args=args)


def avg_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """out[n, c, i, j] = sum over k, l of input[n, c, i sh + k - ph, j sw + l - pw] / divisor[i, j]
    (padding: 0; divisor: the window's size, its input elements only, or divisor_override)."""
    kernel_given, stride_given = _pair(kernel_size), () if stride is None else _pair(stride)
    padding_given = _pair(padding)
    kernel, steps, pads = _avg_arguments(
        kernel_given, stride_given, padding_given, divisor_override
    )
    normalize_dim(-3, input.ndim)  # PyTorch's IndexError for an input of fewer dims
    out_size = _output_shape(input, kernel, steps, pads, (1, 1), ceil_mode)
    x = input._data
    windows = _padded(x, pads, kernel, steps, (1, 1), out_size, 0)
    sums = windows.sum(axis=(2, 3))
    divisors = _divisors(
        x.shape, kernel, steps, pads, out_size, count_include_pad, divisor_override
    )
    data = (sums / divisors).astype(sums.dtype, copy=False).reshape(*x.shape[:-2], *out_size)
    saved = {
        "ceil_mode": ceil_mode,
        "count_include_pad": count_include_pad,
        "divisor_override": divisor_override,
        "kernel_size": kernel_given,
        "padding": padding_given,
        "self": input,
        "stride": stride_given,
    }
    return record(AvgPool2DBackward0, data, (input,), saved)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """out[n, c, i] = mean over k of input[n, c, i stride + k - padding]: avg_pool2d on a height of 1."""
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
            "'self' (while checking arguments for avg_pool1d)"
        )
    (k,) = _single(kernel_size)
    (s,) = _single(kernel_size if stride is None else stride)
    (p,) = _single(padding)
    out = avg_pool2d(unsqueeze(input, -2), (1, k), (1, s), (0, p), ceil_mode, count_include_pad)
    return squeeze(out, -2)


# --- adaptive average pooling ---------------------------------------------------------------------
def _pooling_matrix(size, out, dtype):
    """(out, size): row i is 1 on window i, [floor(i size / out), ceil((i + 1) size / out))."""
    i = np.arange(out)
    start, end = i * size // out, -(-(i + 1) * size // out)
    positions = np.arange(size)
    return ((positions >= start[:, None]) & (positions < end[:, None])).astype(dtype)


def _adaptive_matrices(size, out_size, dtype):
    """(rows, cols, counts): out = rows @ x @ cols.T / counts."""
    rows, cols = (_pooling_matrix(n, o, dtype) for n, o in zip(size, out_size))
    return rows, cols, rows.sum(1)[:, None] * cols.sum(1)


class AdaptiveAvgPool2DBackward0(Node):
    """out = mean over each adaptive window of self:  d self = g / count added back over each window."""

    __slots__ = ()

    def apply(self, g):
        return (adaptive_avg_pool2d_backward(g, self.saved("self")),)


class AdaptiveAvgPool2DBackwardBackward0(Node):
    """out = grad_output / count added back over each window:  d grad_output = adaptive_avg_pool2d(g),
    d self = 0."""

    __slots__ = ()

    def apply(self, g):
        s = self._saved
        out_size = (s["grad_output_sym_argsize_minus_2"], s["grad_output_sym_argsize_minus_1"])
        return (
            _adaptive_avg_pool2d(g, out_size) if self.needs_input_grad(0) else None,
            _zeros_like_input(self) if self.needs_input_grad(1) else None,
        )


def adaptive_avg_pool2d_backward(grad_output, input):
    """rows.T @ (grad_output / counts) @ cols: each output's gradient shared over its window."""
    g = grad_output._data
    rows, cols, counts = _adaptive_matrices(input.shape[-2:], g.shape[-2:], g.dtype)
    data = rows.T @ (g / counts).astype(g.dtype, copy=False) @ cols
    saved = {
        "grad_output_sym_argsize_minus_1": g.shape[-1],
        "grad_output_sym_argsize_minus_2": g.shape[-2],
    }
    args = (input._data.shape, input._data.dtype)
    return record(AdaptiveAvgPool2DBackwardBackward0, data, (grad_output, input), saved, args=args)


def _adaptive_avg_pool2d(input, output_size):
    """out[n, c, i, j] = mean of input[n, c] over rows [floor(i H / oh), ceil((i + 1) H / oh))
    and columns [floor(j W / ow), ceil((j + 1) W / ow))."""
    if input.ndim not in (3, 4):
        raise RuntimeError(
            f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(input.shape)}"
        )
    x = input._data
    if x.dtype.kind != "f":
        kind = {"int64": "Long", "int32": "Int", "bool": "Bool"}.get(x.dtype.name, x.dtype.name)
        raise NotImplementedError(f"\"adaptive_avg_pool2d\" not implemented for '{kind}'")
    rows, cols, counts = _adaptive_matrices(x.shape[-2:], output_size, x.dtype)
    data = (rows @ x @ cols.T / counts).astype(x.dtype, copy=False)
    return record(AdaptiveAvgPool2DBackward0, data, (input,), {"self": input})


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to output_size (oh, ow), windows as even as possible; a 1 x 1 output is
    input.mean((-1, -2), keepdim=True), as in PyTorch. None keeps that dim's size."""
    if not isinstance(output_size, (int, np.integer)):
        if input.ndim <= len(output_size):
            raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
        defaults = input.shape[-len(output_size) :]
        output_size = tuple(d if v is None else v for v, d in zip(output_size, defaults))
    output_size = _pair(output_size)
    if len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if min(output_size) < 0:
        raise RuntimeError(
            "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
            f"received {{{output_size[0]}, {output_size[1]}}}"
        )
    if output_size == (1, 1):
        return mean(input, (-1, -2), keepdim=True)
    return _adaptive_avg_pool2d(input, output_size)
