"""The legacy Variable, as torch.autograd.Variable: since PyTorch 0.4 every tensor is one."""

import warnings

import numpy as np

from .. import dtypes
from ..tensor import Tensor, check_can_require_grad


class VariableMeta(type):
    """isinstance(t, Variable) is True for every tensor, as in PyTorch."""

    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=VariableMeta):
    """Variable(tensor, requires_grad=False): a new leaf with the tensor's data and version counter."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn(
                "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                UserWarning,
                stacklevel=2,
            )
        if data is None:
            return Tensor._make(np.zeros(0, dtype=dtypes.default_float()), bool(requires_grad))
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        check_can_require_grad(
            data._data,
            requires_grad,
            "Only Tensors of floating point and complex dtype can require gradients",
        )
        variable = data.detach()
        variable.requires_grad = bool(requires_grad)
        return variable
