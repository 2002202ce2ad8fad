"""Graph utilities, as in torch.autograd.graph: the Node type and the saved-tensor hooks."""

import contextlib

from .. import saved
from ..node import Node
from ..tensor import Tensor

__all__ = ["Node", "disable_saved_tensors_hooks", "save_on_cpu", "saved_tensors_hooks"]

# The message of the innermost `disable_saved_tensors_hooks`, or None when hooks are allowed.
_disabled_message = None


class saved_tensors_hooks(saved.saved_tensors_hooks):
    """Context manager: every tensor saved inside is stored as `pack(tensor)`, read back as `unpack(packed)`."""

    def __enter__(self):
        if _disabled_message is not None:
            raise RuntimeError(_disabled_message)
        return super().__enter__()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU; mini_autograd's tensors always are, so only pin_memory copies."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            return (tensor.device, Tensor._make(tensor._data.copy()))  # PyTorch copies here

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Inside, starting saved_tensors_hooks (or entering with some active) raises `error_message`."""
    global _disabled_message
    previous = _disabled_message
    try:
        if saved._hook_stack:
            raise RuntimeError(error_message)
        _disabled_message = error_message
        yield
    finally:
        _disabled_message = previous
