"""The in-place forms of the elementwise operations (`y.exp_()`, `y.clamp_(0, 1)`, `y.relu_()`...).

PyTorch records an in-place operation as the node of its out-of-place form: `y.exp_()` gives y
the grad_fn ExpBackward0, whose saved `result` is y itself (so changing y again makes backward
fail the version check). A node that needs `self` keeps a clone of it, taken before the change
(`self.clone()` in PyTorch, so its saved self has a CloneBackward0). One function, `in_place`,
makes every form below from the operation; `_rebase` is where the tensor takes the new node
(through inplace.rebase_history, which also rebases the base of a view).
"""

import weakref

import numpy as np

from ..core.errors import SCALAR_TYPE_NAMES
from ..core.grad_mode import GradMode
from ..core.node import gradient_edge
from ..core.saved import SavedTensor
from . import arithmetic as ar
from . import derivatives, piecewise
from . import elementwise as el
from .derivatives import node_name
from .inplace import _check_inplace_allowed, rebase_history


def check_can_cast(result_dtype, target_dtype):
    """PyTorch's error when a result cannot be written into a tensor of another kind of dtype:
    a float into an integer tensor, or a number into a bool tensor."""
    if (result_dtype.kind == "f" and target_dtype.kind != "f") or (
        result_dtype.kind != "b" and target_dtype.kind == "b"
    ):
        raise RuntimeError(
            f"result type {SCALAR_TYPE_NAMES[result_dtype.name]} can't be cast to the desired "
            f"output type {SCALAR_TYPE_NAMES[target_dtype.name]}"
        )


def in_place(op, keeps_self=False, name=None):
    """The in-place form of `op`: self = op(self, ...), written into self's memory, recorded as
    op records itself. `keeps_self`: op's node saves self, so it gets a clone taken before.
    `name`: the form's name, where it is not op's name followed by _."""

    def method(self, *args, **kwargs):
        _check_inplace_allowed(self)
        recording = GradMode.enabled and (
            self.requires_grad
            or any(getattr(a, "requires_grad", False) for a in (*args, *kwargs.values()))
        )
        out = op(el.clone(self) if recording and keeps_self else self, *args, **kwargs)
        check_can_cast(out._data.dtype, self._data.dtype)
        if out._data.shape != self._data.shape:
            raise RuntimeError(
                f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                f"{list(out._data.shape)}"
            )
        if out.grad_fn is None:
            np.copyto(self._data, out._data, casting="same_kind")
            self._bump_version()
            return self
        return _rebase(self, out, keeps_self)

    name = name or op.__name__ + "_"
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"self = {op.__name__}(self, ...) in place; recorded as {op.__name__} is."
    return method


def _rebase(self, out, keeps_self):
    """Make self the output of out's node: its values, a version bump, the node as its history.

    The node's first edge goes to where self's gradient went before (not to the clone it saved),
    and its saved result is self, at the version after this change.
    """
    node = out.grad_fn
    if keeps_self:
        node.next_functions = (gradient_edge(self), *node.next_functions[1:])
    np.copyto(self._data, out._data, casting="same_kind")
    self._bump_version()
    rebase_history(self, node)
    result = node._saved.get("result") if node._saved else None
    if result is not None and result._unpack is None:  # (a pack hook has already packed out)
        result = node._saved["result"] = SavedTensor(self, is_output=True)
        if self._view_base is not None:  # the node is inside CopySlices now
            result._output_type = ViewHistory(type(self), self._grad_fn)
    return self


class ViewHistory:
    """How the saved result of an in-place op on a view is rebuilt (SavedTensor._output_type):
    a tensor whose history is the one the view had right after the op, held weakly, as PyTorch's
    SavedVariable holds it. The node that made the result is inside CopySlices by then, so a
    double backward through the result must go through the view's history, not that node."""

    def __init__(self, tensor_type, history):
        self.tensor_type, self.history = tensor_type, weakref.ref(history)

    def _make(self, data, requires_grad, grad_fn, output_nr):
        """The result as a tensor: with the view's history when a node unpacks it (that node,
        as in PyTorch, once the history is gone), else none."""
        history = self.history() if grad_fn is not None else None
        node = grad_fn if history is None else history
        return self.tensor_type._make(data, node is not None, node, output_nr)


# The operations of the table's UNARY (derivatives.py): exp_ from exp, and so on.
TABLE_FORMS = {
    f"{name}_": in_place(function, "self" in derivatives.NODE_TYPES[node_name(name)].uses)
    for name, function in derivatives.OPERATIONS.items()
}
globals().update(TABLE_FORMS)
# and the others, each the form PyTorch has, made from the out-of-place operation
ceil_ = in_place(el.ceil)
clamp_ = in_place(piecewise.clamp, keeps_self=True)
clamp_max_ = in_place(piecewise.clamp_max, keeps_self=True)
clamp_min_ = in_place(piecewise.clamp_min, keeps_self=True)
floor_ = in_place(el.floor)
leaky_relu_ = in_place(el.leaky_relu_from_result, name="leaky_relu_")  # LeakyReluBackward1
neg_ = in_place(ar.neg)
threshold_ = in_place(el.threshold_recorded_in_place, keeps_self=True, name="threshold_")
pow_ = in_place(ar.pow, keeps_self=True)
round_ = in_place(el.round)
square_ = in_place(el.square, keeps_self=True)
