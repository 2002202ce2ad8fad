"""Parameter: a leaf tensor that a Module registers as one of its weights."""

from ..tensor import Tensor, as_array


class Parameter(Tensor):
    """A tensor that requires grad by default and is listed by Module.parameters()."""

    __slots__ = ()

    def __init__(self, data, requires_grad=True):
        super().__init__(as_array(data), requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()
