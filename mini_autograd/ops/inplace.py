"""In-place operations: they change the tensor's memory, bump its version, and (when recording)
make the change part of the tensor's history, as PyTorch does.

Every in-place operation takes the same steps, with the two helpers of this module:

    _check_inplace_allowed(self, *others)  # PyTorch's errors, before anything changes (others:
                                           # the operation's other inputs, tensors or numbers)
    node = ...                             # the backward of the change; its input 0 is self's
                                           # history before it, gradient_edge(self)
    ...write the new values into self._data...
    self._bump_version()
    if recording:
        rebase_history(self, node)

rebase_history is where views come in. A tensor that owns its memory just takes `node` as its
grad_fn. A view (x[0], x.t(), ...) cannot: the values changed in the memory of its base, the
tensor it looks into (`_view_base`), and the base must see the change. So, as PyTorch does,
the base's grad_fn becomes CopySlices(base's old history, node): its backward runs node's backward
on the view's part of the gradient. The view's own grad_fn becomes AsStridedBackward0, which
reads its part of the base's new history.
"""

import re

import numpy as np

from ..core import dtypes, events, inference
from ..core.errors import FREED as FREED_MESSAGE
from ..core.errors import SCALAR_TYPE_NAMES
from ..core.grad_mode import GradMode
from ..core.hooks import RetainGradHook
from ..core.node import Node, gradient_edge
from ..core.tensor import Tensor
from . import arithmetic, indexing, piecewise
from .broadcasting import broadcasting, sum_to
from .derivatives import FillBackward2, FillBackward3, ZeroBackward0
from .promotion import as_tensor, result_type, wrapped_number
from .recording import announce
from .shape import (
    as_strided,
    as_strided_node,
    memory_layout,
    view_geometry,
)

LEAF_IN_PLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_IN_PLACE = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)
NO_GRAD_VIEW_CHANGED = (
    "A view was created in no_grad mode and its base or another view of its base has been "
    "modified inplace with grad mode enabled. Given that this use case is ambiguous and "
    "error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) "
    "or both outside (if you want the inplace to be tracked)."
)
NO_GRAD_VIEW_IN_PLACE = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
    "code by moving both the view and the inplace either both inside the no_grad block (if you "
    "don't want the inplace to be tracked) or both outside (if you want the inplace to be "
    "tracked)."
)
MULTI_OUTPUT_VIEW = (
    " This view is the output of a function that returns multiple views. Such functions do not "
    "allow the output views to be modified inplace. You should replace the inplace operation by "
    "an out-of-place one."
)
CUSTOM_FUNCTION_VIEW = (
    " This view was created inside a custom Function (or because an input was returned as-is) "
    "and the autograd logic to handle view+inplace would override the custom backward associated "
    "with the custom Function, leading to incorrect gradients. This behavior is forbidden. You "
    "can fix this by cloning the output of the custom Function."
)


def _view_of_view(view, message):
    """PyTorch's error for a view made in no_grad (or inference) mode; a view with a history got
    that mode from the view it was made from, and the message says so."""
    node = view._grad_fn
    if node is None:
        return RuntimeError(message)
    name = re.sub(r"Backward\d*$", "", node.name())
    start = f"Output {view._output_nr} of {name} is a view of a view which was created"
    return RuntimeError(message.replace("A view was created", start, 1))


def view_error(view, what, reason):
    """PyTorch's error for a view that may not change (`what` it is doing), then `reason`: one
    of the views a multi-output node returned, or a view a custom Function returned."""
    node = view._grad_fn
    if node is None:
        start = f"A view was created in no_grad mode and {what} with grad mode enabled."
    else:
        name = re.sub(r"Backward\d*$", "", node.name())
        start = f"Output {view._output_nr} of {name} is a view and {what}."
    return RuntimeError(start + reason)


BASE_CHANGED = "its base or another view of its base has been modified inplace"

OVERLAPPING_IN_PLACE = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


class CopyBackwards(Node):
    """self.copy_(src):  d self = 0,  d src = g summed back to src's shape, in src's dtype."""

    __slots__ = ()

    def name(self):
        """PyTorch prints the C++ name for this node."""
        return "torch::autograd::CopyBackwards"

    def apply(self, g):
        src_shape, src_dtype = self.args
        grad_src = None
        if self.needs_input_grad(1):
            grad_src = sum_to(g, src_shape)
            if grad_src._data.dtype != src_dtype:
                grad_src = grad_src.to(dtypes.from_numpy(src_dtype))
        zeros = Tensor._make(np.zeros_like(g._data)) if self.needs_input_grad(0) else None
        return zeros, grad_src


class CopySlices(Node):
    """base = base with a view of it changed in place by `fn`:  d base = g, where the view's part
    becomes fn's backward of that part;  d fn's other inputs = what fn's backward gives them.

    args: the base's layout (size, stride, span) and the view's geometry in it.
    """

    __slots__ = ("fn",)

    def __init__(self, next_functions, fn, base_layout, view_geometry):
        super().__init__(next_functions, {}, (base_layout, view_geometry))
        self.fn = fn  # the node of the change; None once released

    def name(self):
        """PyTorch prints the C++ name for this node."""
        return "torch::autograd::CopySlices"

    def apply(self, g):
        fn, ((base_size, base_stride, span), view) = self.fn, self.args
        if fn is None:
            raise RuntimeError(FREED_MESSAGE)
        memory = np.empty(span, g._data.dtype)
        strides = tuple(s * memory.itemsize for s in base_stride)
        result = Tensor._make(np.lib.stride_tricks.as_strided(memory, base_size, strides))
        result.copy_(g)  # laid out as the base, so the view's geometry finds its part
        grad_slice = as_strided(result, *view)
        grads = fn.apply(grad_slice.clone())
        if grads[0] is None:
            return grads
        grad_slice.copy_(grads[0])
        return (result, *grads[1:])

    def release_variables(self, backward_call):
        """Free fn's saved tensors and fn itself: a second backward raises, as in PyTorch."""
        if self.fn is not None:
            self.fn.release_variables(backward_call)
        self.fn = None


def _check_inplace_allowed(self, *others):
    """PyTorch's errors for an in-place change of self (by an operation that also reads `others`,
    tensors or numbers): a leaf that requires grad, a view of one, a view made in no_grad mode,
    one of the views split or unbind return, an expanded view."""
    if events.tensor_modified:
        for observer in events.tensor_modified:
            observer(self)
    base = self._view_base
    if base is None:  # not a view: the common case
        if self._is_inference:
            inference.check_inplace(self)
        if self.grad_fn is None and self.requires_grad and GradMode.enabled:
            raise RuntimeError(LEAF_IN_PLACE)
        return
    if any(s == 0 and n > 1 for n, s in zip(self._data.shape, self._data.strides)):
        raise RuntimeError(OVERLAPPING_IN_PLACE)
    if not GradMode.enabled:
        return
    if not (self.requires_grad or base.requires_grad or _any_requires_grad(others)):
        return
    if self._view_made_in_no_grad == "multi_output":  # made by split..., or a view of one
        raise view_error(self, "is being modified inplace", MULTI_OUTPUT_VIEW)
    if self._view_made_in_no_grad == "inference_mode":
        raise _view_of_view(self, inference.VIEW_IN_PLACE)
    if self._view_made_in_no_grad == "custom_function":
        raise view_error(self, "is being modified inplace", CUSTOM_FUNCTION_VIEW)
    if self._view_made_in_no_grad:
        raise _view_of_view(self, NO_GRAD_VIEW_IN_PLACE)
    if base.grad_fn is None and (self.requires_grad or base.requires_grad):
        raise RuntimeError(VIEW_OF_LEAF_IN_PLACE)


def _any_requires_grad(values):
    return any(isinstance(v, Tensor) and v.requires_grad for v in values)


def rebase_history(self, node):
    """Make `node`, the backward of an in-place change just made to self (its input 0 is self's
    history before the change), self's history: for a view, through CopySlices on its base."""
    base = self._view_base
    if base is None:
        _set_history(self, node)
        return
    geometry = view_geometry(self._data, base._data)
    base_layout = (base._data.shape, *memory_layout(base._data))
    edges = (gradient_edge(base), *node.next_functions[1:])
    copy_slices = CopySlices(edges, node, base_layout, geometry)
    _set_history(base, copy_slices)
    announce(copy_slices, base)
    view_history(self)


def record_in_place(self, node):
    """rebase_history for a node made here (record, which makes a new tensor, made the others)."""
    rebase_history(self, node)
    announce(node, self)


def view_history(view):
    """The view's history after its base's changed in place: AsStridedBackward0, which reads the
    view's part of the base's gradient (PyTorch's rule, for any view). Tensor.grad_fn calls it
    when the base changed since the view's history was made."""
    base = view._view_base
    if view._grad_fn is None and not base.requires_grad:
        return  # no history to remake (it stays out of date, as in PyTorch)
    if view._view_made_in_no_grad == "inference_mode":
        raise _view_of_view(view, inference.VIEW_CHANGED)
    if view._view_made_in_no_grad == "custom_function":
        raise view_error(view, BASE_CHANGED, CUSTOM_FUNCTION_VIEW)
    if view._view_made_in_no_grad == "multi_output":
        raise view_error(view, BASE_CHANGED, MULTI_OUTPUT_VIEW)
    if view._view_made_in_no_grad:
        raise _view_of_view(view, NO_GRAD_VIEW_CHANGED)
    view._base_version_at_view = base._version_counter[0]
    node = as_strided_node(base, *view_geometry(view._data, base._data))
    _set_history(view, node)
    announce(node, view)


def _set_history(tensor, node):
    """tensor.grad_fn = node (as its output 0); a retain_grad() moves along, as in PyTorch."""
    old = tensor.grad_fn
    retains = old is not None and old._tensor_hooks is not None and tensor.retains_grad
    if retains:
        hooks = old._tensor_hooks[tensor._output_nr]
        hooks[:] = [h for h in hooks if type(h) is not RetainGradHook]
    tensor.grad_fn, tensor._requires_grad, tensor._output_nr = node, True, 0
    if retains:
        tensor.retain_grad()


def _check_castable(self, other, true_division=False):
    """PyTorch's error when the result of `self op other` cannot be written back into self.

    Returns other as a tensor (a number as its wrapped number, which is what a node saves of
    it, as for the out-of-place forms) and the dtype the result is computed in.
    """
    dtype = result_type(self, other)
    if true_division and dtype.kind != "f":
        dtype = dtypes.default_float()
    target = self._data.dtype
    if (dtype.kind == "f" and target.kind != "f") or (dtype.kind != "b" and target.kind == "b"):
        raise RuntimeError(
            f"result type {SCALAR_TYPE_NAMES[dtype.name]} can't be cast to the desired output "
            f"type {SCALAR_TYPE_NAMES[target.name]}"
        )
    if isinstance(other, (bool, int, float, np.number, np.bool_)):
        return wrapped_number(other), dtype
    return as_tensor(other, dtype), dtype


def _check_fits(self, other):
    """PyTorch's errors when other does not broadcast to exactly self's shape."""
    shape = broadcasting(np.broadcast_shapes, self._data.shape, other._data.shape, self, other)
    if shape != self._data.shape:  # checked first, so a failed op leaves self untouched
        raise RuntimeError(
            f"output with shape {list(self._data.shape)} doesn't match the broadcast shape {list(shape)}"
        )


def _binary_inplace(self, other, recorded_op, numpy_op, alpha=1, true_division=False):
    """self = self (op) alpha * other, written into self's memory; recorded like the out-of-place op."""
    other, dtype = _check_castable(self, other, true_division)
    _check_inplace_allowed(self, other)
    _check_fits(self, other)
    if not (GradMode.enabled and (self.requires_grad or other.requires_grad)):
        values = other._data.astype(dtype, copy=False)
        values = values if alpha == 1 else alpha * values
        numpy_op(self._data, values, out=self._data, casting="same_kind")  # no result copied
        self._bump_version()
        return self
    source = self
    if recorded_op in (arithmetic.mul, arithmetic.div) and other.requires_grad:
        # The node must keep self's value from before the change, so it gets a copy.
        source = Tensor._make(self._data.copy(), self.requires_grad, self.grad_fn, self._output_nr)
    out = recorded_op(source, other) if alpha == 1 else recorded_op(source, other, alpha)
    np.copyto(self._data, out._data, casting="same_kind")
    self._bump_version()
    rebase_history(self, out.grad_fn)
    return self


def add_(self, other, alpha=1):
    """self += alpha * other, in place."""
    other, alpha = arithmetic.alpha_first("add_", other, alpha)
    return _binary_inplace(self, other, arithmetic.add, np.add, alpha)


def sub_(self, other, alpha=1):
    """self -= alpha * other, in place."""
    other, alpha = arithmetic.alpha_first("sub_", other, alpha)
    return _binary_inplace(self, other, arithmetic.sub, np.subtract, alpha)


def mul_(self, other):
    """self *= other, in place."""
    return _binary_inplace(self, other, arithmetic.mul, np.multiply)


def div_(self, other):
    """self /= other, in place."""
    return _binary_inplace(self, other, arithmetic.div, arithmetic.true_divide, true_division=True)


def _fill(self, value, node, *others, args=None):
    """Every element of self = value; `node` makes the backward from the edges of self and of
    the tensors `others` the values were drawn from (bernoulli_'s p), with `args`, when recording."""
    _check_inplace_allowed(self, *others)
    self._data[...] = value
    self._bump_version()
    if GradMode.enabled and (self.requires_grad or _any_requires_grad(others)):
        edges = tuple([gradient_edge(t) for t in (self, *others)])
        record_in_place(self, node(edges, None, args))
    return self


def zero_(self):
    """Set every element to 0, in place."""
    return _fill(self, 0, ZeroBackward0)


def fill_(self, value):
    """Set every element to `value` (a number or a 0-d tensor), in place."""
    if not isinstance(value, Tensor):
        return _fill(self, value, FillBackward2)
    if value._data.ndim:
        raise RuntimeError(
            "fill_ only supports 0-dimension value tensor but got tensor with "
            f"{value._data.ndim} dimensions."
        )
    _check_inplace_allowed(self, value)
    self._data[...] = value._data
    self._bump_version()
    if GradMode.enabled and (self.requires_grad or value.requires_grad):  # any dtype, as torch
        record_in_place(self, FillBackward3((gradient_edge(self), gradient_edge(value))))
    return self


def copy_(self, src):
    """self's values = src's (broadcast to self's shape, cast to self's dtype), in place.

    backward: d self = 0, d src = g summed back to src's shape (CopyBackwards).
    """
    src = as_tensor(src, self._data.dtype)
    _check_inplace_allowed(self, src)
    _check_fits(self, src)
    self._data[...] = src._data
    self._bump_version()
    wanted = self.requires_grad or src.requires_grad
    if GradMode.enabled and wanted and self._data.dtype.kind == "f":  # (not into an integer tensor)
        edges = (gradient_edge(self), gradient_edge(src))
        record_in_place(self, CopyBackwards(edges, None, (src._data.shape, src._data.dtype)))
    return self


def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    """scatter's result written into self, in place."""
    out = indexing.scatter(self, dim, index, src, value, reduce=reduce)
    _check_inplace_allowed(self, *(src,) if isinstance(src, Tensor) else ())
    np.copyto(self._data, out._data)
    self._bump_version()
    if out.grad_fn is not None:
        rebase_history(self, out.grad_fn)
    return self


def index_add_(self, dim, index, source, *, alpha=1):
    """index_add's result written into self, in place."""
    out = indexing.index_add(self, dim, index, source, alpha=alpha)
    _check_inplace_allowed(self, source)
    np.copyto(self._data, out._data)
    self._bump_version()
    if out.grad_fn is not None:
        rebase_history(self, out.grad_fn)
    return self


def masked_fill_(self, mask, value):
    """self = value where mask is True (mask broadcast to self's shape), in place."""
    out = piecewise.masked_fill(self, mask, value)
    _check_inplace_allowed(self, value)
    _check_fits(self, out)
    np.copyto(self._data, out._data)
    self._bump_version()
    if out.grad_fn is not None:
        rebase_history(self, out.grad_fn)
    return self
