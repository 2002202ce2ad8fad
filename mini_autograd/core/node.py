"""Backward nodes: the graph that autograd records, one node per differentiable operation."""

import itertools

import numpy as np

from . import dtypes, errors, events
from .grad_mode import GradMode
from .hooks import NodeHooks, post_accumulate_grad_hooks
from .saved import SavedTensor
from .saved_attributes import SavedAttributes
from .tensor_data import first_grad, numpy_grad_dtype

_sequence_numbers = itertools.count()  # creation order: among ready nodes the newest runs first
_leaf_numbers = itertools.count()  # AccumulateGrad nodes take no sequence number: numbered apart
UINT64_MAX = 2**64 - 1  # PyTorch's sequence number for the nodes that run as soon as they are ready


class Node(SavedAttributes, NodeHooks):
    """A backward function: turns the gradient of its output into gradients for its inputs.

    `next_functions[i]` is the edge `(node, output_nr)` where the gradient for input i goes,
    or `(None, 0)` when that input needs no gradient. Subclasses implement `apply`.
    """

    __slots__ = (
        "next_functions",
        "_saved",
        "args",
        "input_shapes",
        "_sequence_nr_",
        "_tensor_hooks",
        "_pre_hooks",
        "_hooks",
        "_metadata",
        "__weakref__",
    )

    runs_without_gradients = False  # a node PyTorch runs even when no gradient reached it

    def __init__(self, next_functions, saved=None, args=None, input_shapes=None):
        self.next_functions = next_functions
        self._saved = saved
        self.args = args  # what backward needs beyond the saved values (dims, a dtype...)
        self.input_shapes = input_shapes  # for an operation that broadcasts: to sum back to
        self._sequence_nr_ = next(_sequence_numbers)
        self._tensor_hooks = None  # {output_nr: [hook(grad)]}: hooks of the tensors it made
        self._pre_hooks = None
        self._hooks = None
        self._metadata = None

    def name(self):
        """PyTorch's name for this node, e.g. 'MulBackward0'."""
        return type(self).__name__

    def _sequence_nr(self):
        """The node's sequence number: among nodes ready to run, the highest runs first."""
        return self._sequence_nr_

    def _set_sequence_nr(self, sequence_nr):
        """Change the sequence number, and with it where the node comes in the order of backward."""
        self._sequence_nr_ = sequence_nr

    @property
    def metadata(self):
        """A dict of your own about this node (empty at first), kept as long as the node."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def apply(self, *grads):
        """Gradients for the inputs, one per entry of next_functions (None where not needed)."""
        raise NotImplementedError(f"{self.name()} does not implement apply()")

    def __call__(self, *grads):
        """node(grad): its backward formula run on `grad`, as PyTorch lets a node be called."""
        if (wrong_count := errors.node_call_error(self, grads)) is not None:
            raise wrong_count
        return tuple(self.apply(*grads))

    def needs_input_grad(self, i):
        """True when input i leads to a tensor that wants a gradient."""
        return self.next_functions[i][0] is not None

    def saved(self, name):
        """Unpack the saved tensor `name` (raises if it was freed or modified in place)."""
        value = self._saved[name]
        if type(value) is SavedTensor:
            return value.unpack(self)
        if type(value) is tuple and value and type(value[0]) is SavedTensor:
            return tuple(v.unpack(self) for v in value)
        return value

    def saved_tensors_info(self):
        """[(name, SavedTensor)] for every tensor this node saved (freed ones included)."""
        found = []
        for name, value in (self._saved or {}).items():
            for item in value if type(value) is tuple else (value,):
                if type(item) is SavedTensor:
                    found.append((name, item))
        return found

    def release_variables(self, backward_call):
        """Free every saved tensor (done by backward unless retain_graph=True)."""
        for observer in events.node_releasing:  # usually none: an empty loop
            observer(self, backward_call)
        for value in self._saved.values() if self._saved else ():
            if type(value) is SavedTensor:  # two branches, no tuple made: runs for every node
                if value.freed_by is None:
                    value.release(backward_call)
            elif type(value) is tuple:
                for item in value:
                    if type(item) is SavedTensor and item.freed_by is None:
                        item.release(backward_call)
        for observer in events.node_released:  # usually none: an empty loop
            observer(self, backward_call)

    def __repr__(self):
        # PyTorch prints the class and the address; mini_autograd prints the sequence number.
        return f"<{type(self).__name__} object #{self._sequence_nr_}>"


class AccumulateGrad(Node):
    """The node of a leaf tensor: adds the incoming gradient into `variable.grad`."""

    __slots__ = ("variable", "_number")

    def __init__(self, variable):
        super().__init__(())
        self.variable = variable
        self._sequence_nr_ = UINT64_MAX  # as in PyTorch: runs as soon as its gradient is ready
        self._number = next(_leaf_numbers)

    def name(self):
        """PyTorch prints the C++ name for this node."""
        return "torch::autograd::AccumulateGrad"

    @property
    def _tensor_hooks(self):
        """The leaf's own hooks, {0: [hook(grad)]}: the engine runs them before this node."""
        hooks = self.variable._hooks
        return {0: hooks} if hooks else None

    @_tensor_hooks.setter
    def _tensor_hooks(self, value):
        """Ignored (Node.__init__ clears it): a leaf's hooks stay on the leaf tensor."""

    def apply(self, grad, *, owned=False):
        """variable.grad += grad (or = grad, or a copy if not `owned` by the engine alone, the first
        time): an array, or a Tensor under create_graph (recorded, first as CopyBackwards)."""
        variable, dtype = self.variable, numpy_grad_dtype(self.variable)  # None: any dtype
        if GradMode.enabled:  # a new .grad tensor, so a .grad held elsewhere stays as it was
            if dtype is not None and dtype != grad._data.dtype:  # validate_outputs casts it
                grad = grad.to(dtypes.from_numpy(dtype))
            if variable._grad is None:
                variable._grad = grad._make(np.empty_like(grad._data)).copy_(grad)
            else:
                variable._grad = variable._grad + grad
        elif variable._grad is None:  # a copy unless no one else holds grad (PyTorch's rule)
            variable._grad = variable._make_plain(first_grad(grad, variable._data, owned, dtype))
        else:  # grad cast first, as PyTorch's validate_outputs casts it
            variable._grad._data += np.asarray(grad, dtype or variable._grad._data.dtype)
            variable._grad._bump_version()
        for hook in list(post_accumulate_grad_hooks(variable) or ()):
            if hook(variable) is not None:
                raise RuntimeError(errors.POST_ACCUMULATE_HOOK_RETURNED)
        return ()

    apply.takes_arrays = True  # the engine hands it arrays unless create_graph (arrays.py)

    def __repr__(self):
        return f"<AccumulateGrad object #{self._number}>"


def gradient_edge(tensor):
    """The edge a gradient for `tensor` flows into: (grad_fn, output_nr), or its AccumulateGrad."""
    # The slot, read directly; a view's grad_fn property may first remake it (Tensor.grad_fn).
    node = tensor._grad_fn if tensor._view_base is None else tensor.grad_fn
    if node is not None:
        return (node, tensor._output_nr)
    if tensor._requires_grad:  # a view without a history has none: its gradient goes nowhere
        return (tensor._grad_accumulator(), 0)
    return (None, 0)
