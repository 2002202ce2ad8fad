"""diagonal: a view of the elements self[..., i, ..., i + offset, ...] of two dimensions, which
become one, the last."""

import numpy as np

from ..core.node import Node
from ..core.tensor import Tensor
from .shape import _view_of, normalize_dim


class DiagonalBackward0(Node):
    """out = self.diagonal(offset, dim1, dim2):  d self = zeros with g on that diagonal."""

    __slots__ = ()

    def apply(self, g):
        s = self._saved
        grad = Tensor._make(np.zeros(s["self_sym_sizes"], g._data.dtype))
        diagonal(grad, s["offset"], s["dim1"], s["dim2"]).copy_(g)  # (recorded under create_graph)
        return (grad,)


def diagonal(self, offset=0, dim1=0, dim2=1):
    """The diagonal of dims dim1 and dim2 (offset > 0: above it), as the last dim of a view."""
    x = self._data
    d1, d2 = normalize_dim(dim1, x.ndim), normalize_dim(dim2, x.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n1, n2 = x.shape[d1], x.shape[d2]
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    rest = [k for k in range(x.ndim) if k not in (d1, d2)]
    shape = [x.shape[k] for k in rest] + [length]
    strides = [x.strides[k] for k in rest] + [x.strides[d1] + x.strides[d2]]
    corner = [slice(None)] * x.ndim  # a view that starts at the diagonal's first element
    corner[d1], corner[d2] = slice(max(-offset, 0), None), slice(max(offset, 0), None)
    data = np.lib.stride_tricks.as_strided(x[tuple(corner)], shape, strides)
    saved = {"dim1": dim1, "dim2": dim2, "offset": offset, "self_sym_sizes": x.shape}
    return _view_of(self, data, DiagonalBackward0, saved)
