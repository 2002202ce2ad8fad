"""Saved tensors: what a node keeps for its backward, checked and freed like PyTorch's SavedVariable."""

from .dtypes import TENSOR_TYPE_NAMES as _TYPE_NAMES
from .grad_mode import no_grad

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)

# The active (pack, unpack) pairs of `saved_tensors_hooks`, innermost last.
_hook_stack = []


class saved_tensors_hooks:
    """Context manager: every tensor saved inside is stored as `pack(tensor)`, read back as `unpack(packed)`."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _hook_stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _hook_stack.pop()
        return False


def version_error(tensor, saved_version, producer_name):
    """PyTorch's error for a saved tensor that was modified in place after it was saved."""
    described = f"[torch.{_TYPE_NAMES.get(tensor._data.dtype.name, 'Tensor')} {list(tensor.shape)}]"
    if producer_name is not None:
        op = producer_name[: producer_name.rfind("Backward")] or producer_name
        described += f", which is output 0 of {op},"
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: {described} is at version {tensor._version}; expected version {saved_version} "
        "instead. Hint: enable anomaly detection to find the operation that failed to compute its "
        "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
    )


REGISTER_TWICE = (
    "Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only one "
    "pair of hooks is allowed at a time."
)
REGISTER_AFTER_FREE = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values "
    "of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you need to "
    "access saved variables after calling backward."
)


class SavedTensor:
    """One saved tensor: the value (or what a pack hook made of it), its version stamp, and freeing.

    A node's own output is saved as its array and its version counter, without a strong link back
    to the tensor, so the node and its output do not keep each other alive; unpacking rebuilds a
    tensor whose grad_fn is the node.
    """

    __slots__ = (
        "_value",
        "_version",
        "_is_output",
        "_output_nr",
        "_version_box",
        "_unpack",
        "nbytes",
        "freed_by",
    )

    def __init__(self, tensor, is_output=False):
        owner = tensor._view_base
        version_box = (tensor if owner is None else owner)._version_counter
        self._version = version_box[0]
        self._is_output = is_output
        self.nbytes = tensor._data.nbytes
        self.freed_by = None
        if _hook_stack:
            pack, self._unpack = _hook_stack[-1]
            with no_grad():  # as in PyTorch, what pack does is not recorded
                self._value = pack(tensor)
            self._version_box = None
            return
        self._unpack = None
        if is_output:
            self._value = tensor._data
            self._version_box = version_box
            self._output_nr = tensor._output_nr  # a custom Function may save any of its outputs
        else:
            self._value = tensor
            self._version_box = None

    def register_hooks(self, pack_hook, unpack_hook):
        """From now on keep pack_hook(tensor) instead, and read it back with unpack_hook."""
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError("register_hooks(): incompatible function arguments: two callables")
        if self.freed_by is not None:
            raise RuntimeError(REGISTER_AFTER_FREE)
        if self._unpack is not None:
            raise RuntimeError(REGISTER_TWICE)
        tensor = self._value
        if self._is_output:
            tensor = Tensor._make(self._value)
            tensor._version_counter = self._version_box
        with no_grad():
            self._value = pack_hook(tensor)
        self._unpack, self._version_box = unpack_hook, None

    @property
    def is_freed(self):
        """True once backward has released this value."""
        return self.freed_by is not None

    def unpack(self, node=None):
        """The saved tensor, after checking it was neither freed nor modified in place."""
        if self.freed_by is not None:
            from . import diagnose

            raise RuntimeError(
                FREED_MESSAGE if node is None else diagnose.explain_freed(node, self)
            )
        if self._unpack is not None:
            return self._unpack(self._value)
        if self._is_output:
            unpacked = Tensor._make(self._value, True, node, self._output_nr)
            unpacked._version_counter = self._version_box
            if self._version_box[0] != self._version:
                raise version_error(unpacked, self._version, type(node).__name__)
            return unpacked
        tensor = self._value
        if tensor._version != self._version:
            producer = tensor.grad_fn
            raise version_error(
                tensor, self._version, None if producer is None else producer.name()
            )
        return tensor

    def release(self, backward_call):
        """Drop the value so its memory can be reclaimed; later unpacks raise PyTorch's error."""
        self._value = None
        self._version_box = None
        self.freed_by = backward_call


# Imported last, not first: tensor.py imports this module (through node.py), and an import
# inside unpack would cost more than the rest of unpack.
from .tensor import Tensor  # noqa: E402
