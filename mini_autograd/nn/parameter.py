"""Parameter: a leaf tensor that a Module registers as one of its weights."""

from ..core.tensor import Tensor, as_array


class Parameter(Tensor):
    """A tensor that requires grad by default and is listed by Module.parameters()."""

    __slots__ = ()

    def __init__(self, data, requires_grad=True):
        array = as_array(data)
        super().__init__(array, requires_grad=requires_grad, dtype=array.dtype)  # dtype kept
        if isinstance(data, Tensor):  # the same memory, so the same version counter, as torch's
            owner = data if data._view_base is None else data._view_base
            self._version_counter = owner._version_counter

    __format__ = object.__format__  # as in PyTorch: only a plain 0-d tensor formats as a number

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()
