"""Convolution (conv1d, conv2d), recorded as PyTorch records it on the CPU: one `convolution`
node, ConvolutionBackward0, with PyTorch's saved settings.

The forward is im2col: the input's windows are an `as_strided` view (no copy), laid out as one
matrix per group, each row a window; one matrix product with the weight gives every output.
The backward, `convolution_backward`, reuses those matrices: grad_weight = rows^T @ g,
grad_input = (g @ weight) added back at the windows' places (col2im), grad_bias = g summed.
Under create_graph=True `convolution_backward` is recorded too, as one
ConvolutionBackwardBackward0 node whose own backward is made of `convolution` and
`convolution_backward`, so every order of derivative works.
"""

import itertools
import math

import numpy as np

from ..core.dtypes import TENSOR_TYPE_NAMES
from ..core.errors import CPP_TYPE_NAMES, warn_once
from ..core.node import Node, gradient_edge
from ..core.tensor import Tensor
from .recording import announce, record, save, wants_grad
from .shape import squeeze, unsqueeze

SAME_PADDING_WARNING = (
    "Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
    "copy of the input be created"
)


# --- the numpy kernels ----------------------------------------------------------------------------
def _output_size(size, kernel, stride, padding, dilation):
    """floor((size + 2 padding - dilation (kernel - 1) - 1) / stride) + 1, per spatial dim."""
    return tuple(
        (n + 2 * p - d * (k - 1) - 1) // s + 1
        for n, k, s, p, d in zip(size, kernel, stride, padding, dilation)
    )


def _windows(padded, kernel, stride, dilation, out_size):
    """A view (N, C, *kernel, *out_size): windows[n, c, *k, *o] = padded[n, c, *(o stride + k dilation)]."""
    spatial = padded.strides[2:]
    strides = (
        padded.strides[:2]
        + tuple(st * d for st, d in zip(spatial, dilation))
        + tuple(st * s for st, s in zip(spatial, stride))
    )
    shape = padded.shape[:2] + tuple(kernel) + tuple(out_size)
    return np.lib.stride_tricks.as_strided(padded, shape, strides, writeable=False)


def _zero_padded(x, padding):
    """x with `padding` zeros on both sides of each spatial dim."""
    if not any(padding):
        return x
    return np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])


def _rows(x, kernel, stride, padding, dilation, groups):
    """im2col: (groups, N * P, C/groups * K), row n * P + p holding window p of sample n."""
    n, c, dims = x.shape[0], x.shape[1], len(kernel)
    out_size = _output_size(x.shape[2:], kernel, stride, padding, dilation)
    windows = _windows(_zero_padded(x, padding), kernel, stride, dilation, out_size)
    windows = windows.reshape(n, groups, c // groups, *kernel, *out_size)
    # (N, G, C/G, *K, *P) -> (G, N, *P, C/G, *K)
    order = (1, 0, *range(3 + dims, 3 + 2 * dims), 2, *range(3, 3 + dims))
    rows = windows.transpose(order).reshape(groups, n * math.prod(out_size), -1)
    return rows, out_size


def _grad_rows(g, groups):
    """g (N, O, *P) as (groups, N * P, O/groups): the outputs in the rows' order."""
    n, o, out_size = g.shape[0], g.shape[1], g.shape[2:]
    g = g.reshape(n, groups, o // groups, math.prod(out_size))
    return g.transpose(1, 0, 3, 2).reshape(groups, -1, o // groups)


def conv_forward(x, w, b, stride, padding, dilation, groups):
    """out[n, o] = b[o] + sum over c, k of w[o, c, k] * padded_x[n, c, p stride + k dilation]."""
    n, out_channels, dims = x.shape[0], w.shape[0], w.ndim - 2
    rows, out_size = _rows(x, w.shape[2:], stride, padding, dilation, groups)
    weights = w.reshape(groups, out_channels // groups, -1)
    out = rows @ weights.transpose(0, 2, 1)  # (G, N * P, O/G)
    out = out.reshape(groups, n, *out_size, out_channels // groups)
    out = out.transpose(1, 0, 2 + dims, *range(2, 2 + dims))  # (N, G, O/G, *P)
    out = np.ascontiguousarray(out.reshape(n, out_channels, *out_size))
    if b is not None:
        out += b.reshape(-1, *[1] * dims)
    return out


def _col2im(grad_rows, x_shape, kernel, stride, padding, dilation, groups, out_size):
    """Add each window's gradient back at the place it was read from; the padding is dropped."""
    n, c, dims = x_shape[0], x_shape[1], len(kernel)
    grads = grad_rows.reshape(groups, n, *out_size, c // groups, *kernel)
    # (G, N, *P, C/G, *K) -> (N, G, C/G, *K, *P)
    order = (1, 0, 2 + dims, *range(3 + dims, 3 + 2 * dims), *range(2, 2 + dims))
    grads = grads.transpose(order).reshape(n, c, *kernel, *out_size)
    padded = np.zeros((n, c, *(s + 2 * p for s, p in zip(x_shape[2:], padding))), grads.dtype)
    for offset in itertools.product(*map(range, kernel)):
        region = tuple(
            slice(k * d, k * d + s * (o - 1) + 1, s)
            for k, d, s, o in zip(offset, dilation, stride, out_size)
        )
        padded[(..., *region)] += grads[(slice(None), slice(None), *offset)]
    inside = tuple(slice(p, p + s) for p, s in zip(padding, x_shape[2:]))
    return np.ascontiguousarray(padded[(..., *inside)])


def conv_transpose_forward(x, w, b, stride, padding, output_padding, dilation, groups):
    """The adjoint of conv_forward: each input value spread over its window, weighted by w
    (C_in, C_out/groups, *kernel), summed where windows overlap (col2im); + b."""
    n, dims = x.shape[0], w.ndim - 2
    out_size = tuple(
        (i - 1) * s - 2 * p + d * (k - 1) + op + 1
        for i, s, p, d, k, op in zip(
            x.shape[2:], stride, padding, dilation, w.shape[2:], output_padding
        )
    )
    out_shape = (n, w.shape[1] * groups, *out_size)
    weights = w.reshape(groups, w.shape[0] // groups, -1)
    out = _col2im(
        _grad_rows(x, groups) @ weights,
        out_shape,
        w.shape[2:],
        stride,
        padding,
        dilation,
        groups,
        x.shape[2:],
    )
    if b is not None:
        out += b.reshape(-1, *[1] * dims)
    return out


def conv_backward(g, x, w, stride, padding, dilation, groups, output_mask):
    """(grad_input, grad_weight, grad_bias), each only where output_mask says so:
    grad_weight = rows^T @ g,  grad_input = col2im(g @ weight),  grad_bias = g summed over all
    dims but the channels."""
    dims = w.ndim - 2
    g_rows = _grad_rows(g, groups)
    weights = w.reshape(groups, w.shape[0] // groups, -1)
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        out_size = g.shape[2:]
        grad_input = _col2im(
            g_rows @ weights, x.shape, w.shape[2:], stride, padding, dilation, groups, out_size
        )
    if output_mask[1]:
        rows, _ = _rows(x, w.shape[2:], stride, padding, dilation, groups)
        grad_weight = (g_rows.transpose(0, 2, 1) @ rows).reshape(w.shape)
    if output_mask[2]:
        grad_bias = g.sum(axis=(0, *range(2, 2 + dims)))
    return grad_input, grad_weight, grad_bias


def conv_transpose_backward(g, x, w, stride, padding, dilation, groups, output_mask):
    """(grad_input, grad_weight, grad_bias) of out = conv_transpose(x, w) + b:
    grad_input = conv(g, w),  grad_weight = the weight gradient of conv(g, w) for the gradient x,
    grad_bias = g summed over all dims but the channels."""
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        grad_input = conv_forward(g, w, None, stride, padding, dilation, groups)
    if output_mask[1]:
        mask = (False, True, False)
        grad_weight = conv_backward(x, g, w, stride, padding, dilation, groups, mask)[1]
    if output_mask[2]:
        grad_bias = g.sum(axis=(0, *range(2, g.ndim)))
    return grad_input, grad_weight, grad_bias


# --- the recorded operations ----------------------------------------------------------------------
_SETTINGS = ("stride", "padding", "dilation", "groups")


def _expand(value, name, dims):
    """A setting for every spatial dim: one value repeats, otherwise there must be `dims` of them."""
    if len(value) == 1:
        return tuple(value) * dims
    if len(value) != dims:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {dims} values to match "
            f"the convolution dimensions, but got {name}={list(value)}"
        )
    return tuple(value)


def _settings(node):
    """(stride, padding, dilation, groups) of a node, as the caller gave them."""
    return tuple(node._saved[name] for name in _SETTINGS)


class ConvolutionBackward0(Node):
    """out = conv(input, weight) + bias (or its transposed form):
    (d input, d weight, d bias) = convolution_backward(g)."""

    __slots__ = ()

    def apply(self, g):
        mask = tuple(self.needs_input_grad(i) for i in range(3))
        x, w = self.saved("input"), self.saved("weight")
        return convolution_backward(g, x, w, *_settings(self), mask, *_transposition(self))


def _transposition(node):
    """(transposed, output_padding) of a node."""
    return node._saved["transposed"], node._saved["output_padding"]


class ConvolutionBackwardBackward0(Node):
    """(gI, gW, gb) = convolution_backward(gO, input, weight), each linear in gO:
    d gO = conv(ggI, weight) + conv(input, ggW) + ggb,  d input = gI of conv(input, ggW) given gO,
    d weight = gW of conv(ggI, weight) given gO (conv: the transposed one for a transposed node)."""

    __slots__ = ()

    def apply(self, ggI=None, ggW=None, ggb=None):
        g, x, w = self.saved("grad_output"), self.saved("input"), self.saved("weight")
        settings, (transposed, output_padding) = _settings(self), _transposition(self)
        stride, padding, dilation, groups = settings

        def forward(a, b):
            if transposed:
                return convolution_transpose(
                    a, b, None, stride, padding, output_padding, dilation, groups
                )
            return convolution(a, b, None, *settings)

        grad_g = grad_x = grad_w = None
        if self.needs_input_grad(0):
            terms = []
            if ggI is not None:
                terms.append(forward(ggI, w))
            if ggW is not None:
                terms.append(forward(x, ggW))
            if ggb is not None:
                terms.append(ggb.view(1, -1, *[1] * (g.ndim - 2)).expand(*g.shape))
            for term in terms:
                grad_g = term if grad_g is None else grad_g + term
        kept = (transposed, output_padding)
        if self.needs_input_grad(1) and ggW is not None:
            grad_x = convolution_backward(g, x, ggW, *settings, (True, False, False), *kept)[0]
        if self.needs_input_grad(2) and ggI is not None:
            grad_w = convolution_backward(g, ggI, w, *settings, (False, True, False), *kept)[1]
        return grad_g, grad_x, grad_w


def _check_shapes(input, weight, bias, stride, padding, dilation, groups):
    """PyTorch's checks of a convolution's arguments, in its order, with its messages."""
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    w_shape = list(weight.shape)
    if weight.ndim != input.ndim:
        raise RuntimeError(
            f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
            f"{w_shape}, but got {input.ndim}-dimensional input of size {list(input.shape)} instead"
        )
    if w_shape[0] < groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but "
            f"got weight of size {w_shape} instead"
        )
    if w_shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{w_shape}] instead"
        )
    if input.shape[1] != w_shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {w_shape}, expected input{list(input.shape)} "
            f"to have {w_shape[1] * groups} channels, but got {input.shape[1]} channels instead"
        )
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != w_shape[0]):
        raise RuntimeError(
            f"Given weight of size {w_shape}, expected bias to be 1-dimensional with {w_shape[0]} "
            f"elements, but got bias of size {list(bias.shape)} instead"
        )
    padded = [n + 2 * p for n, p in zip(input.shape[2:], padding)]
    kernel = [d * (k - 1) + 1 for k, d in zip(w_shape[2:], dilation)]
    if any(n < k for n, k in zip(padded, kernel)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
            f"size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater than actual "
            "input size"
        )
    if input._data.dtype != weight._data.dtype:
        names = [TENSOR_TYPE_NAMES.get(t._data.dtype.name, "Tensor") for t in (input, weight)]
        raise RuntimeError(
            f"Input type (torch.{names[0]}) and weight type (torch.{names[1]}) should be the same "
            "or input should be a MKLDNN tensor and weight is a dense tensor"
        )


def convolution(input, weight, bias, stride, padding, dilation, groups):
    """out[n, o] = bias[o] + sum over c, k of weight[o, c, k] * input[n, c, p stride + k dilation - padding],
    input (N, C, *spatial), weight (O, C/groups, *kernel): torch.convolution, not transposed."""
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    dims = weight.ndim - 2
    expanded = [_expand(v, name, dims) for v, name in zip((stride, padding, dilation), _SETTINGS)]
    _check_shapes(input, weight, bias, *expanded, groups)
    b = None if bias is None else bias._data
    data = conv_forward(input._data, weight._data, b, *expanded, groups)
    saved = {
        "bias_sym_sizes_opt": (0,) if bias is None else bias._data.shape,
        "dilation": tuple(dilation),
        "groups": groups,
        "input": input,
        "output_padding": (0,) * len(padding),
        "padding": tuple(padding),
        "stride": tuple(stride),
        "transposed": False,
        "weight": weight,
    }
    return record(ConvolutionBackward0, data, (input, weight, bias), saved)


def _check_transposed(input, weight, bias, stride, output_padding, dilation, groups):
    """PyTorch's checks of a transposed convolution's arguments that differ from convolution's."""
    if weight.ndim != input.ndim:
        raise RuntimeError(
            f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
            f"{list(weight.shape)}, but got {input.ndim}-dimensional input of size "
            f"{list(input.shape)} instead"
        )
    if input.shape[1] != weight.shape[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected "
            f"input{list(input.shape)} to have {weight.shape[0]} channels, but got "
            f"{input.shape[1]} channels instead"
        )
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        # PyTorch computes a 1-d transposed convolution as a 2-d one of height 1
        two = [(0, 1, 1)] * (2 - len(stride)) + list(zip(output_padding, stride, dilation))
        (oph, sh, dh), (opw, sw, dw) = two
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"output_padding_height: {oph} output_padding_width: {opw} stride_height: {sh} "
            f"stride_width: {sw} dilation_height: {dh} dilation_width: {dw}"
        )
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[1] * groups):
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected bias to be "
            f"1-dimensional with {weight.shape[1] * groups} elements, but got bias of size "
            f"{list(bias.shape)} instead"
        )


def convolution_transpose(input, weight, bias, stride, padding, output_padding, dilation, groups):
    """out = the adjoint of convolution applied to input (each input value spread over its
    window), weight (C_in, C_out/groups, *kernel): torch.convolution with transposed=True."""
    dims = weight.ndim - 2
    settings = (stride, padding, dilation)
    stride, padding, dilation = [_expand(v, n, dims) for v, n in zip(settings, _SETTINGS)]
    output_padding = _expand(output_padding, "output_padding", dims)
    _check_transposed(input, weight, bias, stride, output_padding, dilation, groups)
    b = None if bias is None else bias._data
    data = conv_transpose_forward(
        input._data, weight._data, b, stride, padding, output_padding, dilation, groups
    )
    saved = {
        "bias_sym_sizes_opt": (0,) if bias is None else bias._data.shape,
        "dilation": dilation,
        "groups": groups,
        "input": input,
        "output_padding": output_padding,
        "padding": padding,
        "stride": stride,
        "transposed": True,
        "weight": weight,
    }
    return record(ConvolutionBackward0, data, (input, weight, bias), saved)


def convolution_backward(
    grad_output,
    input,
    weight,
    stride,
    padding,
    dilation,
    groups,
    output_mask,
    transposed=False,
    output_padding=None,
):
    """(grad_input, grad_weight, grad_bias) of convolution (or of its transposed form), None where
    output_mask is False; recorded as one ConvolutionBackwardBackward0 node (three outputs) when a
    gradient is wanted."""
    dims = weight.ndim - 2
    expanded = [_expand(v, name, dims) for v, name in zip((stride, padding, dilation), _SETTINGS)]
    g, x, w = grad_output._data, input._data, weight._data
    if transposed:
        arrays = conv_transpose_backward(g, x, w, *expanded, groups, output_mask)
    else:
        arrays = conv_backward(g, x, w, *expanded, groups, output_mask)
    if not wants_grad(grad_output, input, weight):  # several outputs: the node is made here
        return tuple(None if a is None else Tensor._make(a) for a in arrays)
    saved = {
        "dilation": tuple(dilation),
        "grad_output": save(grad_output),
        "groups": groups,
        "input": save(input),
        "output_padding": tuple(output_padding) if transposed else (0,) * len(padding),
        "padding": tuple(padding),
        "stride": tuple(stride),
        "transposed": transposed,
        "weight": save(weight),
    }
    node = ConvolutionBackwardBackward0(
        tuple(gradient_edge(t) for t in (grad_output, input, weight)), saved
    )
    outs = tuple(
        None if a is None else Tensor._make(a, True, node, nr) for nr, a in enumerate(arrays)
    )
    announce(node, next(out for out in outs if out is not None))
    return outs


# --- padding, for padding='same' with an even kernel ----------------------------------------------
class ConstantPadNdBackward0(Node):
    """out = self padded with zeros (pad: before, after per dim, from the last dim):  d self = g with the pad cut off."""

    __slots__ = ()

    def apply(self, g):
        return (constant_pad_nd(g, tuple(-p for p in self._saved["pad"])),)


def constant_pad_nd(input, pad, value=0):
    """input with pad[2i] values before and pad[2i + 1] after its i-th last dim (negative: cut off)."""
    data, dims = input._data, len(pad) // 2
    widths = [(0, 0)] * (data.ndim - dims) + [
        (max(pad[2 * i], 0), max(pad[2 * i + 1], 0)) for i in reversed(range(dims))
    ]
    cuts = [slice(None)] * (data.ndim - dims) + [
        slice(max(-pad[2 * i], 0), data.shape[-1 - i] - max(-pad[2 * i + 1], 0))
        for i in reversed(range(dims))
    ]
    data = np.pad(data[tuple(cuts)], widths, constant_values=value)
    return record(ConstantPadNdBackward0, data, (input,), {"pad": tuple(pad)})


# --- conv1d, conv2d ------------------------------------------------------------------------------
def _as_tuple(value, dims):
    """An int given for every spatial dim, as PyTorch's argument parser turns it into a list."""
    return (value,) * dims if isinstance(value, (int, np.integer)) else tuple(value)


def _same_padding(input, weight, stride, dilation):
    """padding='same': the symmetric padding, after padding the input on the right where the
    total, dilation * (kernel - 1), is odd."""
    dims = weight.ndim - 2
    if weight.ndim != input.ndim:
        raise RuntimeError(
            f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight"
            f"{list(weight.shape)}, but got {input.ndim}-dimensional input of size "
            f"{list(input.shape)} instead"
        )
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    dilation = _expand(dilation, "dilation", dims)
    totals = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
    left = [total // 2 for total in totals]
    extra = [total - 2 * half for total, half in zip(totals, left)]
    if any(extra):
        warn_once(SAME_PADDING_WARNING, stacklevel=3)
        pad = []
        for e in reversed(extra):  # F.pad's order: the last dim first
            pad += [0, e]
        input = constant_pad_nd(input, pad)
    return input, tuple(left)


def _conv(name, dims, input, weight, bias, stride, padding, dilation, groups):
    """conv1d / conv2d: an unbatched input gets a batch dim for the convolution, as in PyTorch."""
    if bias is not None and bias._data.dtype != input._data.dtype:
        i, b = (CPP_TYPE_NAMES[t._data.dtype.name] for t in (input, bias))
        raise RuntimeError(f"Input type ({i}) and bias type ({b}) should be the same")
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to {name}, but got "
            f"input of size: {list(input.shape)}"
        )
    batched = input.ndim == dims + 2
    if not batched:
        input = unsqueeze(input, 0)
    stride, dilation = _as_tuple(stride, dims), _as_tuple(dilation, dims)
    if padding == "valid":
        padding = (0,)
    elif padding == "same":
        input, padding = _same_padding(input, weight, stride, dilation)
    elif isinstance(padding, str):
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _as_tuple(padding, dims)
    out = convolution(input, weight, bias, stride, padding, dilation, groups)
    return out if batched else squeeze(out, 0)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """out[n, o, l] = bias[o] + sum over c, k of weight[o, c, k] * input[n, c, l stride + k dilation - padding]."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """out[n, o, i, j] = bias[o] + sum over c, k, l of weight[o, c, k, l] * input[n, c, i sh + k dh - ph, j sw + l dw - pw]."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(
    name, dims, input, weight, bias, stride, padding, output_padding, groups, dilation
):
    """conv_transpose1d / conv_transpose2d: an unbatched input gets a batch dim, as in PyTorch."""
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to {name}, but got "
            f"input of size: {list(input.shape)}"
        )
    batched = input.ndim == dims + 2
    if not batched:
        input = unsqueeze(input, 0)
    settings = (stride, padding, output_padding, dilation)
    stride, padding, output_padding, dilation = (_as_tuple(v, dims) for v in settings)
    out = convolution_transpose(
        input, weight, bias, stride, padding, output_padding, dilation, groups
    )
    return out if batched else squeeze(out, 0)


def conv_transpose1d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """out[n, o, i stride + k dilation - padding] += weight[c, o, k] * input[n, c, i], + bias[o]."""
    return _conv_transpose(
        "conv_transpose1d",
        1,
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )


def conv_transpose2d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """out[n, o, i sh + k dh - ph, j sw + l dw - pw] += weight[c, o, k, l] * input[n, c, i, j], + bias[o]."""
    return _conv_transpose(
        "conv_transpose2d",
        2,
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )
