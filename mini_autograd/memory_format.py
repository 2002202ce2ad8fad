"""Memory formats, as torch.memory_format: the orders in which a tensor's elements can lie in
memory. contiguous_format is row by row; channels_last lays a 4-d (N, C, H, W) tensor out as
(N, H, W, C), channels_last_3d a 5-d one as (N, D, H, W, C); preserve_format keeps the input's.
"""

import numpy as np

from .core.tensor_data import is_dense


class memory_format:
    """A layout of a tensor's elements in memory (torch.channels_last...)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")

# the rank each format needs, and the order of the dims from the outermost in memory
_ORDERS = {channels_last: (4, (0, 2, 3, 1)), channels_last_3d: (5, (0, 2, 3, 4, 1))}


def _order(fmt, ndim):
    if fmt is contiguous_format:
        return tuple(range(ndim))
    rank, order = _ORDERS[fmt]
    if ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt.name} format")
    return order


def laid_out(array, fmt):
    """A copy of `array` whose elements lie in fmt's order (preserve_format: array's own
    order where its elements fill their memory without gaps, else row by row)."""
    if fmt is preserve_format:
        return array.copy(order="K" if is_dense(array) else "C")
    order = _order(fmt, array.ndim)
    return np.ascontiguousarray(array.transpose(order)).transpose(np.argsort(order))


def is_laid_out(array, fmt):
    """Whether array's elements lie in fmt's order (the stride of a size-1 dim does not count;
    preserve_format asks for row by row, as PyTorch's is_contiguous)."""
    if fmt is contiguous_format or fmt is preserve_format:
        return array.flags.c_contiguous
    rank, order = _ORDERS[fmt]
    if array.ndim != rank:
        return False
    step = array.itemsize
    for d in reversed(order):
        if array.shape[d] != 1 and array.strides[d] != step:
            return False
        step *= array.shape[d]
    return True
