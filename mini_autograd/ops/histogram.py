"""torch.histogram: how many values (or how much weight) fall in each bin.

It has no derivative: PyTorch records it, when its input requires grad, with a node whose
backward raises (torch::autograd::NotImplemented), and so does this module.
"""

import math

import numpy as np

from .. import creation, return_types
from ..core.errors import CPP_TYPE_NAMES, SCALAR_TYPE_NAMES
from ..core.tensor import Tensor
from .recording import NotImplementedBackward, record


def histogram(input, bins=100, *, range=None, weight=None, density=False):  # noqa: A002
    """(hist, bin_edges): `bins` equal bins over `range` (default: from the smallest value to
    the largest), or the given edges (a 1-D tensor); each value is counted (or its `weight`
    added) in the bin where edge[i] <= value < edge[i + 1], the last bin including its right
    edge; values outside are left out. density=True divides by the total and the bin widths.
    """
    x = input._data
    if x.dtype.kind != "f":
        name = SCALAR_TYPE_NAMES[x.dtype.name]
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{name}'")
    edges = _edges(input, bins, range)
    if weight is not None:
        _check_weight(input, weight)
    values = x.reshape(-1)
    inside = (values >= edges[0]) & (values <= edges[-1])  # (NaN is never inside)
    where = np.searchsorted(edges, values[inside], side="right") - 1
    where = np.minimum(where, edges.size - 2)  # the last bin holds its right edge
    hist = np.zeros(edges.size - 1, x.dtype)
    np.add.at(hist, where, 1 if weight is None else weight._data.reshape(-1)[inside])
    if density:
        hist = hist / hist.sum() / np.diff(edges)
    hist = record(NotImplementedBackward, hist, (input,), args="histogram")
    bin_edges = Tensor._make(edges)
    if hist.grad_fn is not None:  # the node's second output
        bin_edges = Tensor._make(edges, True, hist.grad_fn, 1)
    return return_types.histogram(hist, bin_edges)


def _edges(input, bins, range):  # noqa: A002
    """The bin edges, in input's dtype: the given ones, or bins + 1 equally spaced."""
    x = input._data
    if isinstance(bins, Tensor):
        if range is not None:
            raise TypeError("histogram(): bins given as edges take no range")
        if bins._data.ndim != 1:
            raise RuntimeError(
                "torch.histogramdd: bins tensor should have one dimension, but got "
                f"{bins._data.ndim} dimensions in the bins tensor for dimension 0"
            )
        if bins._data.dtype != x.dtype:
            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                f"but got input with dtype {CPP_TYPE_NAMES[x.dtype.name]} and bins for dimension 0 "
                f"with dtype {CPP_TYPE_NAMES[bins._data.dtype.name]}"
            )
        return bins._data.copy()
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if range is not None:
        low, high = float(range[0]), float(range[1])
    elif x.size:
        low, high = float(x.min()), float(x.max())
    else:
        low, high = 0.0, 1.0
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(
            f"torch.histogramdd: dimension 0's range [{low:g}, {high:g}] is not finite"
        )
    if low > high:
        raise RuntimeError(
            f"torch.histogramdd: min should not exceed max, but got min {low:g} max {high:g} "
            "for dimension 0"
        )
    if low == high:  # an empty range is widened, as numpy does
        low, high = low - 0.5, high + 0.5
    dtype = input.dtype
    return creation.linspace(low, high, bins + 1, dtype=dtype)._data


def _check_weight(input, weight):
    """PyTorch's errors for a weight of another shape or dtype than the input."""
    if weight.shape != input.shape:
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as "
            "the input tensor excluding its innermost dimension, but got input with shape "
            f"{[input._data.size, 1]} and weight with shape {list(weight.shape)}"
        )
    if weight._data.dtype != input._data.dtype:
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
            f"should have the same dtype, but got input({CPP_TYPE_NAMES[input._data.dtype.name]}), "
            f"and weight({CPP_TYPE_NAMES[weight._data.dtype.name]})"
        )
