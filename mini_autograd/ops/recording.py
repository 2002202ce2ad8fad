"""The few helpers every operation uses to record itself in the graph."""

from ..core import events
from ..core.grad_mode import GradMode
from ..core.node import Node, gradient_edge
from ..core.saved import SavedTensor
from ..core.tensor import Tensor


class NotImplementedBackward(Node):
    """The node of an operation that has no derivative: its backward raises, as PyTorch's."""

    __slots__ = ()

    def name(self):
        """PyTorch prints the C++ name for this node."""
        return "torch::autograd::NotImplemented"

    def apply(self, *grads):
        raise RuntimeError(f"derivative for aten::{self.args} is not implemented")


def wants_grad(*tensors):
    """True when grad mode is on and any input requires grad (None stands for no input)."""
    if not GradMode.enabled:
        return False
    for t in tensors:
        if t is not None and t.requires_grad:
            return True
    return False


def saved_for_each_other(first, a, second, b):
    """A product's saved inputs, each kept only if the other needs a gradient (d a uses b)."""
    return {first: a if b.requires_grad else None, second: b if a.requires_grad else None}


def check_tensor(value, op, name, position):
    """PyTorch's TypeError for an argument that must be a tensor (position as torch counts it)."""
    if not isinstance(value, Tensor):
        raise TypeError(
            f"{op}(): argument '{name}' (position {position}) must be Tensor, not "
            f"{type(value).__name__}"
        )


def save(tensor):
    """Save an input for backward (None stays None); `record` saves the tensors it is given."""
    return None if tensor is None else SavedTensor(tensor)


def _kept(values):
    """What a node keeps of a saved tuple: a tuple of tensors as a tuple of SavedTensors."""
    if values and isinstance(values[0], Tensor):
        return tuple([SavedTensor(v) for v in values])
    return values


def record(node_type, data, inputs, saved=None, save_result_as=None, broadcasts=False, args=None):
    """The result of an operation: recorded by a new `node_type` node when it needs a gradient.

    Every operation ends here, and this is where the decision is taken once for all: outside
    grad mode, or when no input requires grad, the result is a plain tensor and nothing is kept.
    `inputs` are the tensors the gradient flows back to (in order; None for an input that
    cannot have one, such as an absent clamp bound); `saved` maps PyTorch's attribute names to
    what the node keeps: tensors are saved (checked and freed as PyTorch's SavedVariable),
    numbers and None are kept as they are. `save_result_as` saves the output itself. `args` are
    the other arguments backward needs, which PyTorch keeps out of sight too; with `broadcasts`
    the node keeps the input shapes, so backward can undo broadcasting (None where no input
    was broadcast).
    """
    if not GradMode.enabled:  # off inside backward, unless create_graph=True
        return Tensor._make(data)
    for t in inputs:  # wants_grad, inlined: this runs for every operation
        if t is not None and t.requires_grad:
            break
    else:
        return Tensor._make(data)
    for name, value in saved.items() if saved else ():  # in place: the op's own dict
        if isinstance(value, Tensor):
            saved[name] = SavedTensor(value)
        elif type(value) is tuple:
            saved[name] = _kept(value)
    shapes = None
    for t in inputs if broadcasts else ():  # the input shapes, where one was broadcast
        if t is not None and t._data.shape != data.shape:
            shapes = tuple([None if t is None else t._data.shape for t in inputs])
            break
    edges = tuple([(None, 0) if t is None else gradient_edge(t) for t in inputs])
    node = node_type(edges, saved, args, shapes)
    out = Tensor._make(data, True, node)
    if save_result_as is not None:
        node._saved[save_result_as] = SavedTensor(out, is_output=True)
    if events.node_created:
        announce(node, out)
    return out


def announce(node, out):
    """Tell the observers of events.node_created that `node` made `out`, as `record` does: for a
    node made by hand (several outputs, or an in-place change that `out` already holds)."""
    for observer in events.node_created:
        observer(node, out)
