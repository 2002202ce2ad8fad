"""Broadcasting: the shape two operands broadcast to, PyTorch's error when they do not, and,
in backward, a gradient summed back to the shape of the input it is for."""

import numpy as np

from ..core.tensor import Tensor


def broadcast_error(a, b):
    """PyTorch's error for two tensors (or shapes) that do not broadcast; it names the last bad dim."""
    a, b = (x._data.shape if isinstance(x, Tensor) else x for x in (a, b))
    ndim = max(len(a), len(b))
    a, b = (1,) * (ndim - len(a)) + tuple(a), (1,) * (ndim - len(b)) + tuple(b)
    i = max(i for i in range(ndim) if a[i] != b[i] and 1 not in (a[i], b[i]))
    return RuntimeError(
        f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) at "
        f"non-singleton dimension {i}"
    )


def broadcasting(numpy_op, a, b, self, other):
    """numpy_op(a, b), or PyTorch's error when self's and other's shapes do not broadcast."""
    try:
        return numpy_op(a, b)
    except ValueError:
        raise broadcast_error(self, other) from None


def broadcast_shape(*tensors):
    """The shape the tensors broadcast to, or PyTorch's error (tensor a: those before, b: the next)."""
    shape = ()
    for t in tensors:
        shape = broadcasting(np.broadcast_shapes, shape, t._data.shape, shape, t._data.shape)
    return shape


def sum_to(grad, shape):
    """Undo broadcasting: sum `grad` (a Tensor, or an array in backward's array form) over the
    dimensions that were expanded to reach its shape."""
    is_tensor = isinstance(grad, Tensor)
    have = grad._data.shape if is_tensor else grad.shape
    if have == shape:
        return grad
    lead = len(have) - len(shape)
    dims = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and have[i + lead] != 1
    )
    if not is_tensor:
        return grad.sum(dims).reshape(shape)
    if not shape:
        return grad.sum()
    summed = grad.sum(dims, keepdim=True) if dims else grad
    return summed.reshape(shape) if summed.shape != shape else summed


def summed_to_inputs(node, *grads):
    """The gradients for node's inputs, each summed back to its input's shape (None stays None)."""
    if node.input_shapes is None:  # nothing was broadcast
        return grads
    return tuple(
        [
            g if g is None or g._data.shape == shape else sum_to(g, shape)
            for g, shape in zip(grads, node.input_shapes)
        ]
    )
