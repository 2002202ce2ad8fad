"""Backward nodes: the graph that autograd records, one node per differentiable operation."""

import itertools
from typing import NamedTuple

from . import diagnose
from .saved import SavedTensor

_sequence_numbers = itertools.count()  # creation order: among ready nodes the newest runs first
_leaf_numbers = itertools.count()  # AccumulateGrad nodes take no sequence number: numbered apart
UINT64_MAX = 2**64 - 1  # PyTorch's sequence number for the nodes that run as soon as they are ready


class RemovableHandle:
    """Returned by `register_hook`; `.remove()` takes the hook out again."""

    def __init__(self, hooks, hook):
        self._hooks = hooks
        self._hook = hook

    def remove(self):
        """Unregister the hook (no error if it is already gone)."""
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


class Node:
    """A backward function: turns the gradient of its output into gradients for its inputs.

    `next_functions[i]` is the edge `(node, output_nr)` where the gradient for input i goes,
    or `(None, 0)` when that input needs no gradient. Subclasses implement `apply`.
    """

    __slots__ = (
        "next_functions",
        "_saved",
        "_info",
        "_sequence",
        "_tensor_hooks",
        "_pre_hooks",
        "_hooks",
        "_metadata",
        "_origin",
        "__weakref__",
    )

    runs_without_gradients = False  # a node PyTorch runs even when no gradient reached it

    def __init__(self, next_functions, saved=None, info=None):
        self.next_functions = next_functions
        self._saved = saved
        self._info = info
        self._sequence = next(_sequence_numbers)
        self._tensor_hooks = None  # {output_nr: [hook(grad)]}: hooks of the tensors it made
        self._pre_hooks = None
        self._hooks = None
        self._metadata = None
        self._origin = diagnose.creation_site() if diagnose.DiagnosisMode.enabled else None

    def name(self):
        """PyTorch's name for this node, e.g. 'MulBackward0'."""
        return type(self).__name__

    def _sequence_nr(self):
        """The node's sequence number: among nodes ready to run, the highest runs first."""
        return self._sequence

    def _set_sequence_nr(self, sequence_nr):
        """Change the sequence number, and with it where the node comes in the order of backward."""
        self._sequence = sequence_nr

    @property
    def metadata(self):
        """A dict of your own about this node (empty at first), kept as long as the node."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def apply(self, *grads):
        """Gradients for the inputs, one per entry of next_functions (None where not needed)."""
        raise NotImplementedError(f"{self.name()} does not implement apply()")

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

    def __getattr__(self, attr):
        # PyTorch exposes what a node saved as `_saved_<name>` attributes.
        if attr.startswith("_saved_"):
            saved = object.__getattribute__(self, "_saved")
            name = attr[7:]
            if saved is not None and name in saved:
                value = self.saved(name)
                return value if name in _SCALARS else _as_pytorch_shows_it(value)
        if attr.startswith("_raw_saved_"):  # the SavedTensor itself, e.g. to register_hooks
            saved = object.__getattribute__(self, "_saved")
            value = (saved or {}).get(attr[11:])
            if type(value) is SavedTensor or (type(value) is tuple and value):
                return value
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")

    def __dir__(self):
        # List the `_saved_<name>` attributes too, as PyTorch's nodes do.
        return [*super().__dir__(), *(f"_saved_{name}" for name in self._saved or ())]

    def saved_tensors_info(self):
        """[(name, SavedTensor)] for every tensor this node saved (freed ones included)."""
        found = []
        for name, value in (self._saved or {}).items():
            if type(value) is SavedTensor:
                found.append((name, value))
            elif type(value) is tuple:
                found.extend((name, v) for v in value if type(v) is SavedTensor)
        return found

    def release_saved(self, backward_call):
        """Free every saved tensor (done by backward unless retain_graph=True)."""
        for value in self._saved.values() if self._saved else ():
            if type(value) is SavedTensor:
                if value.freed_by is None:
                    value.release(backward_call)
            elif type(value) is tuple:
                for item in value:
                    if type(item) is SavedTensor and item.freed_by is None:
                        item.release(backward_call)

    def register_hook(self, hook):
        """hook(grad_inputs, grad_outputs) runs after this node; may return new grad_inputs."""
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return RemovableHandle(self._hooks, hook)

    def register_prehook(self, hook):
        """hook(grad_outputs) runs before this node; may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._pre_hooks.append(hook)
        return RemovableHandle(self._pre_hooks, hook)

    def __repr__(self):
        # PyTorch prints the class and the address; mini_autograd prints the sequence number.
        return f"<{type(self).__name__} object #{self._sequence}>"


# Saved Python numbers (PyTorch's Scalars) are shown as they are; only saved ints such as dims are
# shown unsigned.
_SCALARS = frozenset(
    {"alpha", "exponent", "self", "threshold", "other", "min", "max", "min_val", "max_val"}
    | {"beta", "scale", "input_scale"}
)


def _as_pytorch_shows_it(value):
    """PyTorch's Python binding shows negative saved integers (dim=-1) as unsigned 64-bit ones."""
    if type(value) is int and value < 0:
        return value + 2**64
    if type(value) is tuple and any(type(v) is int and v < 0 for v in value):
        return tuple(v + 2**64 if type(v) is int and v < 0 else v for v in value)
    return value


class AccumulateGrad(Node):
    """The node of a leaf tensor: adds the incoming gradient into `variable.grad`."""

    __slots__ = ("variable", "_number")

    def __init__(self, variable):
        super().__init__(())
        self.variable = variable
        self._sequence = UINT64_MAX  # as in PyTorch: runs as soon as its gradient is ready
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

    def apply(self, grad):
        """variable.grad += grad (or = grad the first time)."""
        variable = self.variable
        if variable._grad is None:
            # A gradient can be shared (add passes one tensor to both inputs), so the leaf gets
            # its own copy: later in-place changes to .grad (zero_, clipping) stay local.
            variable._grad = grad if grad.grad_fn is not None else grad.detach().clone()
        elif grad.grad_fn is not None or variable._grad.grad_fn is not None:
            variable._grad = variable._grad + grad
        else:
            variable._grad._data += grad._data
        return ()

    def __repr__(self):
        return f"<AccumulateGrad object #{self._number}>"


class GradientEdge(NamedTuple):
    """Where the gradient of a tensor goes: its node and input number, as PyTorch's GradientEdge.

    `autograd.grad(loss, edge)` is the same as `autograd.grad(loss, tensor)`; the edge keeps its
    node alive by itself, so `ownership_token` is only there for PyTorch's custom Function nodes.
    """

    node: Node
    output_nr: int
    ownership_token: Node | None = None


def edge_of(tensor):
    """The edge a gradient for `tensor` flows into: (grad_fn, output_nr), or its AccumulateGrad."""
    # The slot, read directly; a view's grad_fn property may first remake it (Tensor.grad_fn).
    node = tensor._grad_fn if tensor._view_base is None else tensor.grad_fn
    if node is not None:
        return (node, tensor._output_nr)
    if tensor.requires_grad:
        return (tensor._grad_accumulator(), 0)
    return (None, 0)
