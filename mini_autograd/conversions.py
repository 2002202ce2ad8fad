"""Tensor.to and the casts it stands for (float(), long()...): a new tensor of another dtype.

A cast is an operation (ops/elementwise.py's cast, recorded as ToCopyBackward0); the same
dtype gives the tensor itself, as in PyTorch. mini_autograd has only the CPU.
"""

from .core import dtypes
from .core.device import check as check_device
from .core.tensor import Tensor
from .memory_format import is_laid_out, laid_out, preserve_format
from .ops.derivatives import cast


def to(self, *args, dtype=None, device=None, copy=False, non_blocking=False, memory_format=None):
    """self in another dtype: to(dtype), to(device), to(device, dtype), to(other_tensor); with
    memory_format, laid out in that order (a copy unless it already is)."""
    for arg in args:
        if isinstance(arg, dtypes.dtype):
            dtype = arg
        elif isinstance(arg, Tensor):
            dtype = arg.dtype
        else:
            device = arg
    check_device(device)
    same_dtype = dtype is None or dtypes.to_numpy(dtype) == self._data.dtype
    relaid = memory_format not in (None, preserve_format)
    if same_dtype and not (relaid and not is_laid_out(self._data, memory_format)):
        return self.clone() if copy else self
    result = cast(self, self._data.dtype if dtype is None else dtypes.to_numpy(dtype))
    if relaid:
        result._data = laid_out(result._data, memory_format)  # a new tensor: no one saw it yet
    return result


def type_as(self, other):
    """self cast to other's dtype."""
    return to(self, other.dtype)


def cpu(self):
    """self (mini_autograd tensors always live on the CPU)."""
    return self


def cuda(self, device=None, non_blocking=False):
    """Refused: mini_autograd has no GPU."""
    check_device("cuda" if device is None else device)


def _cast_to(dtype):
    def cast_method(self):
        return to(self, dtype)

    cast_method.__doc__ = f"Cast to {dtype.name}."
    return cast_method


TENSOR_METHODS = {
    "to": to,
    "type_as": type_as,
    "cpu": cpu,
    "cuda": cuda,
    **{
        name: _cast_to(dtype)
        for name, dtype in [
            ("float", dtypes.float32),
            ("double", dtypes.float64),
            ("half", dtypes.float16),
            ("long", dtypes.int64),
            ("int", dtypes.int32),
            ("bool", dtypes.bool_),
        ]
    },
}
