"""Operations that torch itself writes as other operations: their graphs are those operations'
nodes (torch.hstack records a CatBackward0, torch.tile a RepeatBackward0...), so they are
written here the same way, with the same steps, and record what torch records.

Also nonzero and argwhere (integer results, outside the graph) and torch's other names for
some operations (true_divide, absolute, swapaxes...).
"""

import numpy as np

from ..core.tensor import Tensor
from .recording import check_tensor


# --- reshaping to at least n dimensions, and stacking ----------------------------------------
def atleast_1d(*tensors):
    """Each tensor with at least 1 dimension (a 0-d one as shape (1,)); one tensor or a tuple."""
    return _each(tensors, _at_least_1d)


def atleast_2d(*tensors):
    """Each tensor with at least 2 dimensions: (1, 1) for a 0-d one, (1, n) for a 1-d one."""
    return _each(tensors, _at_least_2d)


def atleast_3d(*tensors):
    """Each tensor with at least 3 dimensions: (1, n, 1) for a 1-d one, (m, n, 1) for a 2-d one."""
    return _each(tensors, _at_least_3d)


def _each(tensors, fn):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(fn(t) for t in tensors[0])
    results = tuple(fn(t) for t in tensors)
    return results[0] if len(results) == 1 else results


def _at_least_1d(t):
    return t.reshape(1) if t.dim() == 0 else t


def _at_least_2d(t):
    if t.dim() == 0:
        return t.reshape(1, 1)
    return t.unsqueeze(0) if t.dim() == 1 else t


def _at_least_3d(t):
    if t.dim() == 0:
        return t.reshape(1, 1, 1)
    if t.dim() == 1:
        return t.unsqueeze(0).unsqueeze(-1)
    return t.unsqueeze(-1) if t.dim() == 2 else t


def hstack(tensors):
    """The tensors side by side: concatenated along dim 0 if they are 1-d, else along dim 1."""
    tensors = atleast_1d(tuple(tensors))
    return _cat(tensors, 0 if tensors and tensors[0].dim() == 1 else 1)


def vstack(tensors):
    """The tensors one below the other: each made at least 2-d, concatenated along dim 0."""
    return _cat(atleast_2d(tuple(tensors)), 0)


def dstack(tensors):
    """The tensors stacked depthwise: each made at least 3-d, concatenated along dim 2."""
    return _cat(atleast_3d(tuple(tensors)), 2)


def column_stack(tensors):
    """The tensors as columns: a 0-d or 1-d one as a column (n, 1), concatenated along dim 1."""
    columns = tuple(t.reshape(t.numel(), 1) if t.dim() <= 1 else t for t in tensors)
    return _cat(columns, 1)


def _cat(tensors, dim):
    from .shape import cat

    return cat(tensors, dim)


# --- repeating -------------------------------------------------------------------------------
def tile(self, dims):
    """The tensor repeated dims[i] times along each dim (dims padded with leading 1s)."""
    dims = tuple(dims)
    return self.repeat(*((1,) * (self.dim() - len(dims)) + dims))


def repeat_interleave(self, repeats, dim=None, *, output_size=None):
    """Each element repeated `repeats` times (a number, or a tensor: one count per element)
    along dim (of the flattened tensor if dim is None)."""
    if dim is None:
        self, dim = self.flatten(), 0
    dim = dim % max(self.dim(), 1)
    if isinstance(repeats, Tensor) and repeats.numel() != 1:
        index = np.repeat(np.arange(self.shape[dim]), repeats._data)
        return self.index_select(dim, Tensor._make(index))
    count = int(repeats)
    sizes = list(self.shape)
    expanded = self.unsqueeze(dim + 1).expand(*sizes[: dim + 1], count, *sizes[dim + 1 :])
    sizes[dim] *= count
    return expanded.clone().view(*sizes)


# --- dims moved, flipped, split up ------------------------------------------------------------
def swapaxes(self, axis0, axis1):
    """transpose(axis0, axis1), numpy's name."""
    return self.transpose(axis0, axis1)


def movedim(self, source, destination):
    """The dims `source` (an int or a tuple) moved to the places `destination`; the others keep
    their order."""
    source = [source] if isinstance(source, int) else list(source)
    destination = [destination] if isinstance(destination, int) else list(destination)
    n = self.dim()
    source, destination = [d % n for d in source], [d % n for d in destination]
    rest = iter(d for d in range(n) if d not in source)
    placed = dict(zip(destination, source))
    return self.permute(*[placed[i] if i in placed else next(rest) for i in range(n)])


def flipud(self):
    """The rows in reverse order (flip along dim 0)."""
    return self.flip(0)


def fliplr(self):
    """The columns in reverse order (flip along dim 1)."""
    return self.flip(1)


def unflatten(self, dim, sizes):
    """Dim `dim` viewed as several of the given sizes (one of them may be -1)."""
    dim = dim % self.dim()
    shape = list(self.shape)
    return self.view(*shape[:dim], *sizes, *shape[dim + 1 :])


# --- differences, broadcasting ---------------------------------------------------------------
def diff(self, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along dim: x[i + 1] - x[i] (prepend/append joined first)."""
    from .shape import cat

    if prepend is not None or append is not None:
        parts = [t for t in (prepend, self, append) if t is not None]
        self = cat(parts, dim)
    for _ in range(n):
        length = self.shape[dim]
        self = self.narrow(dim, 1, length - 1) - self.narrow(dim, 0, length - 1)
    return self


def broadcast_tensors(*tensors):
    """The tensors expanded to their common broadcast shape (those already of it as they are)."""
    from .broadcasting import broadcast_shape

    shape = tuple(broadcast_shape(*tensors))
    return tuple(t if tuple(t.shape) == shape else t.expand(*shape) for t in tensors)


# --- where the non-zero elements are ---------------------------------------------------------
def nonzero(self, *, as_tuple=False):
    """The indices of the non-zero elements: an (n, dims) int64 tensor, or one per dim."""
    check_tensor(self, "nonzero", "input", 1)
    data = self._data
    indices = np.nonzero(data.reshape(1) if data.ndim == 0 else data)  # a 0-d one as 1-d
    if as_tuple:
        return tuple(Tensor._make(i.astype(np.int64)) for i in indices)
    rows = np.stack(indices, axis=1).astype(np.int64)
    return Tensor._make(rows[:, : data.ndim])  # a 0-d one: (count, 0)


def argwhere(self):
    """nonzero(self): the indices of the non-zero elements, one row each."""
    return nonzero(self)


# torch's other names for operations
def true_divide(self, other):
    """self / other (div)."""
    return self.div(other)


def absolute(self):
    """abs(self)."""
    return self.abs()


METHODS = {
    "tile": tile,
    "repeat_interleave": repeat_interleave,
    "swapaxes": swapaxes,
    "swapdims": swapaxes,
    "movedim": movedim,
    "moveaxis": movedim,
    "flipud": flipud,
    "fliplr": fliplr,
    "unflatten": unflatten,
    "diff": diff,
    "nonzero": nonzero,
    "argwhere": argwhere,
    "true_divide": true_divide,
    "absolute": absolute,
}
FUNCTIONS = {
    **METHODS,
    "atleast_1d": atleast_1d,
    "atleast_2d": atleast_2d,
    "atleast_3d": atleast_3d,
    "hstack": hstack,
    "vstack": vstack,
    "row_stack": vstack,
    "dstack": dstack,
    "column_stack": column_stack,
    "broadcast_tensors": broadcast_tensors,
}
