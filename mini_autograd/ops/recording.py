"""The few helpers every operation uses to record itself in the graph."""

import numpy as np

from ..grad_mode import _State
from ..node import edge_of
from ..saved import SavedTensor
from ..tensor import Tensor, other_library


def wants_grad(*tensors):
    """True when grad mode is on and any input requires grad."""
    if not _State.enabled:
        return False
    for t in tensors:
        if t.requires_grad:
            return True
    return False


def as_tensor(x, like):
    """`x` as a Tensor; a Python number takes `like`'s float dtype (torch's rule for scalars)."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (int, float, bool, np.number)):
        kind = like._data.dtype
        if kind.kind != "f":
            kind = np.dtype(np.float32) if isinstance(x, float) else kind
        return Tensor._make(np.asarray(x, dtype=kind))
    foreign = other_library(x)
    if foreign:
        raise TypeError(f"expected a mini_autograd Tensor or a number, {foreign}")
    raise TypeError(
        f"expected a mini_autograd Tensor or a number, got {type(x).__name__}; "
        "wrap data with mini_autograd.tensor(...)"
    )


def save(tensor):
    """Save an input for backward (None stays None: conditional saving)."""
    return None if tensor is None else SavedTensor(tensor)


def record(node_type, data, inputs, saved=None, save_result_as=None, broadcasts=False, info=None):
    """The output tensor of an operation whose backward is `node_type`.

    `inputs` are the tensors the gradient flows back to (in order); `saved` maps PyTorch's
    attribute names to what the node keeps; `save_result_as` saves the output itself.
    `info` is what backward needs beyond that (PyTorch keeps it out of sight too); with
    `broadcasts` it is the input shapes, so backward can undo broadcasting.
    """
    if broadcasts:
        info = tuple([t._data.shape for t in inputs])
    node = node_type(tuple([edge_of(t) for t in inputs]), saved, info)
    if node._origin is not None:
        node._origin.shape = data.shape
    out = Tensor._make(data, True, node)
    if save_result_as is not None:
        node._saved[save_result_as] = SavedTensor(out, is_output=True)
    return out


def sum_to(grad, shape):
    """Undo broadcasting: sum `grad` over the dimensions that were expanded to reach its shape."""
    if grad._data.shape == shape:
        return grad
    if not shape:
        return grad.sum()
    lead = grad.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and grad.shape[i + lead] != 1
    )
    summed = grad.sum(dims, keepdim=True) if dims else grad
    return summed.reshape(shape) if summed.shape != shape else summed
