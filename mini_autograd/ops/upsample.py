"""Upsampling (F.interpolate's nearest, nearest-exact, linear and bilinear modes), recorded as
PyTorch records it: one node per call, UpsampleNearest2DBackward0, UpsampleBilinear2DBackward0...,
with PyTorch's saved sizes and scales.

Each mode is separable: along one spatial dim every output reads one input (nearest) or two
weighted inputs (linear), so the operation is a matrix per dim, (out, in), built from PyTorch's
index formulas in the input's float type: out = rows @ x @ cols.T for 2-D, x @ cols.T for 1-D
(which adds the weighted inputs in PyTorch's order). The backward is the transposed product,
itself a recorded node (its name ends in BackwardBackward0) whose backward is the forward again,
so create_graph=True works.
"""

import numpy as np

from ..core.node import Node
from .recording import record


# --- PyTorch's source indices (aten/src/ATen/native/UpSample.h) -----------------------------------
def _scale(in_size, out_size, scale, dtype):
    """in/out, or 1/scale when a scale factor was given (compute_scales_value)."""
    if scale is not None and scale > 0:
        return dtype.type(1.0 / scale)
    return dtype.type(in_size) / dtype.type(out_size)


def _nearest(in_size, out_size, scale, exact):
    """Row i reads input min(floor(i * s), in - 1), or floor((i + 0.5) s) for nearest-exact."""
    i = np.arange(out_size)
    if out_size == in_size:
        return i
    if out_size == 2 * in_size and not exact:
        return i >> 1
    s = np.float32(_scale(in_size, out_size, scale, np.dtype(np.float32)))
    position = (i.astype(np.float32) + np.float32(0.5 if exact else 0)) * s
    return np.minimum(np.floor(position).astype(np.int64), in_size - 1)


def _linear(in_size, out_size, scale, align_corners, dtype):
    """(i0, i1, lambda0, lambda1): row i is lambda0 x[i0] + lambda1 x[i1], at source position
    i * (in - 1) / (out - 1) with align_corners, else max((i + 0.5) s - 0.5, 0)."""
    i = np.arange(out_size)
    if out_size == in_size:
        return i, i, np.ones(out_size, dtype), np.zeros(out_size, dtype)
    t = dtype.type
    if align_corners:
        s = t(in_size - 1) / t(out_size - 1) if out_size > 1 else t(0)
        position = s * i.astype(dtype)
    else:
        s = _scale(in_size, out_size, scale, dtype)
        position = np.maximum(s * (i.astype(dtype) + t(0.5)) - t(0.5), t(0))
    i0 = np.minimum(np.floor(position).astype(np.int64), in_size - 1)
    lambda1 = np.clip(position - i0.astype(dtype), t(0), t(1))
    i1 = i0 + (i0 < in_size - 1)
    return i0, i1, t(1) - lambda1, lambda1


def _matrix(mode, in_size, out_size, scale, align_corners, dtype):
    """(out, in): output i along one dim as a weighted sum of the inputs."""
    m = np.zeros((out_size, in_size), dtype)
    rows = np.arange(out_size)
    if mode == "linear":
        i0, i1, lambda0, lambda1 = _linear(in_size, out_size, scale, align_corners, dtype)
        np.add.at(m, (rows, i0), lambda0)
        np.add.at(m, (rows, i1), lambda1)
    else:
        m[rows, _nearest(in_size, out_size, scale, mode == "nearest-exact")] = 1
    return m


def _matrices(node_type, in_sizes, out_sizes, scales, align_corners, dtype):
    """One matrix per spatial dim (height first)."""
    return [
        _matrix(node_type.mode, n, o, s, align_corners, dtype)
        for n, o, s in zip(in_sizes, out_sizes, scales)
    ]


def _apply(x, matrices):
    """x (..., *in_sizes) resampled: x @ cols.T, then rows @ that for 2-D."""
    out = x @ matrices[-1].T
    if len(matrices) == 2:
        out = matrices[0] @ out
    return out


def _apply_transposed(g, matrices):
    """The backward of _apply: g @ cols, then rows.T @ that for 2-D."""
    out = g @ matrices[-1]
    if len(matrices) == 2:
        out = matrices[0].T @ out
    return out


# --- the nodes ------------------------------------------------------------------------------------
class _Upsample(Node):
    """out = x resampled along its spatial dims:  d x = g resampled back (the transposed matrices)."""

    __slots__ = ()
    mode = None  # "nearest", "nearest-exact" or "linear"
    backward_node = None  # the node that records this node's backward

    def apply(self, g):
        in_sizes, out_sizes, scales, align_corners = _settings(self)
        grad = upsample_backward(type(self), g, in_sizes, out_sizes, scales, align_corners)
        return (grad,)


class _UpsampleBackward(Node):
    """out = g resampled back:  d g = gg resampled forward (the operation is linear in g)."""

    __slots__ = ()
    forward_node = None

    def apply(self, gg):
        in_sizes, out_sizes, scales, align_corners = self.args
        return (upsample(self.forward_node, gg, out_sizes, scales, align_corners),)


def _settings(node):
    """(input sizes, output sizes, scales, align_corners) of a forward node."""
    s = node._saved
    scales = (s["scales"],) if "scales" in s else (s["scales_h"], s["scales_w"])
    in_sizes = s["self_sym_sizes"][2:]
    return in_sizes, s["output_size"], scales, s.get("align_corners")


def _declare(name, mode):
    """The forward node `name` and its backward's node, `name` with BackwardBackward0."""
    backward = type(f"{name}BackwardBackward0", (_UpsampleBackward,), {"__slots__": ()})
    forward = type(
        f"{name}Backward0",
        (_Upsample,),
        {"__slots__": (), "mode": mode, "backward_node": backward},
    )
    backward.forward_node = forward
    return forward


NODES = {
    ("nearest", 1): _declare("UpsampleNearest1D", "nearest"),
    ("nearest", 2): _declare("UpsampleNearest2D", "nearest"),
    ("nearest-exact", 1): _declare("UpsampleNearestExact1D", "nearest-exact"),
    ("nearest-exact", 2): _declare("UpsampleNearestExact2D", "nearest-exact"),
    ("linear", 1): _declare("UpsampleLinear1D", "linear"),
    ("bilinear", 2): _declare("UpsampleBilinear2D", "linear"),
}


def _saved_scales(scales):
    """PyTorch's saved names for the scales: `scales` for 1-D, `scales_h` and `scales_w` for 2-D."""
    if len(scales) == 1:
        return {"scales": scales[0]}
    return {"scales_h": scales[0], "scales_w": scales[1]}


def upsample(node_type, input, output_size, scales, align_corners=None):
    """input (N, C, *in_sizes) resampled to (N, C, *output_size) as `node_type`'s mode says;
    scales are the given scale factors (None each where the size was given)."""
    x = input._data
    matrices = _matrices(node_type, x.shape[2:], output_size, scales, align_corners, x.dtype)
    data = _apply(x, matrices).astype(x.dtype, copy=False)
    saved = {"output_size": tuple(output_size), **_saved_scales(scales)}
    if node_type.mode == "linear":
        saved["align_corners"] = align_corners
    saved["self_sym_sizes"] = x.shape
    return record(node_type, data, (input,), saved)


def upsample_backward(node_type, grad_output, in_sizes, out_sizes, scales, align_corners):
    """grad_output added back at the inputs it was read from, with the same weights."""
    g = grad_output._data
    matrices = _matrices(node_type, in_sizes, out_sizes, scales, align_corners, g.dtype)
    data = _apply_transposed(g, matrices).astype(g.dtype, copy=False)
    saved = {"output_size": tuple(out_sizes), **_saved_scales(scales)}
    if node_type.mode == "linear":
        saved["align_corners"] = align_corners
    args = (in_sizes, out_sizes, scales, align_corners)
    return record(node_type.backward_node, data, (grad_output,), saved, args=args)
