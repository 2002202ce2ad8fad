"""Saved tensors: what a node keeps for its backward, checked and freed like PyTorch's SavedVariable."""

import weakref

from . import errors, events
from .errors import version_error
from .grad_mode import no_grad
from .hooks import saved_tensors_hook_stack
from .tensor_data import TensorData


class SavedTensor:
    """One saved tensor: the value (or what a pack hook made of it), its version stamp, and freeing.

    A node's own output is saved as its array and its version counter, without a strong link back
    to the tensor, so the node and its output do not keep each other alive; unpacking rebuilds a
    tensor of the same class (`_output_type`) whose grad_fn is the node.
    """

    __slots__ = (
        "_value",
        "_version",
        "_output_type",
        "_output_nr",
        "_version_counter",
        "_unpack",
        "_graph",
        "nbytes",
        "freed_by",
    )

    def __init__(self, tensor, is_output=False):
        if tensor._is_inference:  # it counts no versions: nothing to check an unpack against
            raise RuntimeError(errors.INFERENCE_SAVED)
        base = tensor._view_base
        version_counter = (tensor if base is None else base)._version_counter
        self._version = version_counter[0]
        self._output_type = type(tensor) if is_output else None
        self.nbytes = tensor._data.nbytes
        self.freed_by = None
        self._output_nr = tensor._output_nr  # a custom Function may save any of its outputs
        # where an unpacked input rejoins the graph: (grad_fn, requires_grad, a leaf's accumulator)
        self._graph = None if is_output else (tensor._grad_fn, tensor.requires_grad, None)
        if saved_tensors_hook_stack and not tensor._is_wrapped_number:  # numbers: never packed
            self._pack(tensor, *saved_tensors_hook_stack[-1])
            return
        self._unpack = None
        if is_output:
            self._value = tensor._data
            self._version_counter = version_counter
        else:
            self._value = tensor
            self._version_counter = None

    def _pack(self, tensor, pack_hook, unpack_hook):
        """Keep pack_hook(tensor), to be read back with unpack_hook; pack may not change tensor."""
        version = tensor._version
        if self._graph is not None and tensor.requires_grad and tensor._grad_fn is None:
            self._graph = (None, True, tensor._grad_accumulator())  # a leaf's way in
        with no_grad():  # as in PyTorch, what pack does is not recorded
            self._value = pack_hook(tensor)
        if tensor._version != version:
            raise RuntimeError(errors.PACK_HOOK_MODIFIED_INPUT)
        self._unpack, self._version_counter = unpack_hook, None

    def _output(self, node):
        """The saved output rebuilt as a tensor made by `node`, sharing the output's version."""
        tensor = self._output_type._make(self._value, node is not None, node, self._output_nr)
        tensor._version_counter = self._version_counter
        return tensor

    def register_hooks(self, *hooks):
        """(pack_hook, unpack_hook): keep pack_hook(tensor) instead, read back with unpack_hook."""
        if len(hooks) != 2 or not all(map(callable, hooks)):
            raise TypeError(errors.register_hooks_arguments(self, hooks))
        pack_hook, unpack_hook = hooks
        if self._graph is None and self._output_type is None:  # a None that save_for_backward got
            raise RuntimeError(
                "Calling register_hooks on a saved tensor with value None is forbidden"
            )
        if self.freed_by is not None:
            raise RuntimeError(errors.SAVED_HOOKS_AFTER_FREE)
        if self._unpack is not None:
            raise RuntimeError(errors.SAVED_HOOKS_TWICE)
        tensor = self._output(None) if self._output_type is not None else self._value
        self._pack(tensor, pack_hook, unpack_hook)

    @property
    def data(self):
        """What is kept: the tensor, the pack hook's result, or a saved output detached (None once freed)."""
        if self._output_type is None or self._unpack is not None or self._value is None:
            return self._value
        return self._output(None)

    @property
    def unpack_hook(self):
        """The unpack hook that reads this value back (None without hooks)."""
        return self._unpack

    @property
    def is_freed(self):
        """True once backward has released this value."""
        return self.freed_by is not None

    def unpack(self, node=None):
        """The saved tensor, after checking it was neither freed nor modified in place."""
        if self.freed_by is not None:
            raise RuntimeError(self._freed_message(node))
        if self._unpack is not None:
            return self._rejoined(self._unpack(self._value), node)
        if self._output_type is not None:
            unpacked = self._output(node)
            if self._version_counter[0] != self._version:
                raise version_error(unpacked, self._version, node.name())
            return unpacked
        tensor = self._value
        if self._graph[0] is not None and tensor._grad_fn is None:
            raise RuntimeError(errors.SAVED_DETACHED_IN_PLACE)
        if tensor._version != self._version:
            producer = tensor.grad_fn
            raise version_error(tensor, self._version, producer and producer.name())
        return tensor

    def _rejoined(self, value, node):
        """What the unpack hook returned, as a new tensor at the saved tensor's place in the graph
        (PyTorch's rule), so that a double backward goes through it."""
        if not isinstance(value, TensorData):
            raise TypeError(errors.UNPACK_HOOK_NOT_A_TENSOR.format(type=type(value).__name__))
        grad_fn, requires_grad, accumulator = self._graph or (node, node is not None, None)
        if grad_fn is None and not requires_grad:
            return value  # nowhere in the graph to rejoin: as unpack returned it, as in PyTorch
        tensor = value._make(value._data, requires_grad, grad_fn, self._output_nr)
        tensor._version_counter = value._version_counter
        tensor._accumulator = None if accumulator is None else weakref.ref(accumulator)
        return tensor

    def _freed_message(self, node):
        """PyTorch's text, and what observers (diagnosis mode) add to it."""
        extra = [observer(node, self) for observer in events.freed_tensor_read] if node else []
        return "".join([errors.FREED, *(text for text in extra if text)])

    def release(self, backward_call):
        """Drop the value so its memory can be reclaimed; later unpacks raise PyTorch's error."""
        self._value = None
        self._version_counter = None
        self.freed_by = backward_call
