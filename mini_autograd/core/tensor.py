"""The Tensor: a numpy array plus what autograd needs (requires_grad, grad, grad_fn, a version).

What a tensor says about its array (shape, dtype, item...) is in tensor_data.py. The methods
defined elsewhere are attached to the class in __init__.py: the operations (`+`, `exp`, `sum`:
ops/methods.py), `backward` (backward_calls.py), `to` and the casts (conversions.py), and the
legacy constructor `Tensor(2, 3)` (creation.py).
"""

import warnings
import weakref

import numpy as np

from . import errors, hooks
from .hooks import RetainGradHook, add_post_accumulate_grad_hook, add_tensor_hook, retains_grad
from .node import AccumulateGrad
from .tensor_data import TensorData, as_array, check_can_require_grad, check_new_grad


class Tensor(TensorData):
    """An n-dimensional array that can record the operations made with it.

    `_data` is the numpy array holding the values; `grad_fn` is the node that made this tensor
    (None for a leaf); `_version_counter` is a box, [number of in-place changes], so backward can
    tell when a saved tensor was modified. A view shares the counter of its base (`_view_base`).
    """

    __slots__ = (
        "_data",
        "_requires_grad",
        "_grad_fn",
        "_grad",
        "_output_nr",
        "_hooks",
        "_accumulator",
        "_view_base",
        "_base_version_at_view",
        "_view_made_in_no_grad",
        "_version_counter",
        "_post_accumulate_grad_hooks",  # set by the first register_post_accumulate_grad_hook
        "_assigned_backward_hooks",  # set by the first assignment to _backward_hooks
        "_grad_dtype",  # set by the first assignment to grad_dtype
        "__weakref__",
    )

    # Remakes the grad_fn of a view whose base changed in place (ops/inplace.py's view_history).
    _view_history = None
    _is_wrapped_number = False  # True for a Python number made a tensor (ops/promotion.py)
    _is_inference = False  # True for a tensor made in inference mode (inference.py)

    @staticmethod
    def _make(data, requires_grad=False, grad_fn=None, output_nr=0):
        """Wrap an ndarray without copying or checking (the fast path every operation uses)."""
        if type(data) is not np.ndarray:
            data = np.asarray(data)  # numpy gives scalars, not 0-d arrays, from 0-d operations
        t = object.__new__(Tensor)
        t._data = data
        t._requires_grad = requires_grad
        t._grad_fn = grad_fn
        t._grad = None
        t._output_nr = output_nr
        t._hooks = None
        t._accumulator = None
        t._view_base = None
        t._version_counter = [0]  # a box, so saved outputs can watch it without holding the tensor
        return t

    _make_plain = _make  # a normal tensor even while inference mode swaps _make (inference.py)

    @property
    def data(self):
        """The same memory as a tensor outside the graph, with its own version counter (PyTorch's .data).

        Unlike detach(), changes made through it are invisible to autograd's version checks.
        """
        return Tensor._make_plain(self._data)

    @data.setter
    def data(self, value):
        array = as_array(value)
        check_can_require_grad(array, self.requires_grad, errors.DATA_NOT_FLOAT)
        self._data = array

    @property
    def grad_fn(self):
        """The node that made this tensor (None for a leaf). A view's is remade, as PyTorch does,
        once its base changed in place after it was made."""
        base = self._view_base
        if base is not None and self._base_version_at_view != base._version_counter[0]:
            self._view_history(self)
        return self._grad_fn

    @grad_fn.setter
    def grad_fn(self, node):
        self._grad_fn = node

    @property
    def is_leaf(self):
        """True when no recorded operation made this tensor (it has no grad_fn)."""
        return self.grad_fn is None

    @property
    def _version(self):
        base = self._view_base
        return (self if base is None else base)._version_counter[0]

    def _bump_version(self):
        base = self._view_base
        (self if base is None else base)._version_counter[0] += 1

    @property
    def grad(self):
        """The accumulated gradient (leaves, or non-leaves that called retain_grad())."""
        if self.grad_fn is not None and not retains_grad(self):
            warnings.warn(errors.NON_LEAF_GRAD_ACCESSED, UserWarning, stacklevel=2)
        return self._grad

    @grad.deleter
    def grad(self):
        self._grad = None

    @grad.setter
    def grad(self, value):
        check_new_grad(self, value)
        self._grad = value

    @property
    def requires_grad(self):
        """True when operations on this tensor record the graph (a view: or when its base does)."""
        return self._requires_grad or self._view_base is not None and self._view_base._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if self.grad_fn is not None:
            raise RuntimeError(errors.NON_LEAF_FLAG if value else errors.NON_LEAF_REQUIRES_GRAD_)
        check_can_require_grad(self._data, value, errors.ONLY_FLOAT_REQUIRES_GRAD_SET)
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad=True):
        """Mark this leaf as wanting a gradient (in place); returns self."""
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError(errors.NON_LEAF_REQUIRES_GRAD_)
        check_can_require_grad(self._data, requires_grad, errors.ONLY_FLOAT_REQUIRES_GRAD_)
        self._requires_grad = bool(requires_grad) or self.grad_fn is not None
        return self

    def detach(self):
        """The same data, cut from the graph (shares memory and the version counter)."""
        t = Tensor._make_plain(self._data)
        base = self if self._view_base is None else self._view_base
        t._version_counter = base._version_counter  # the same counter, but not a view for autograd
        return t

    def detach_(self):
        """Cut this tensor from the graph in place; returns self."""
        if self._view_base is not None:
            raise RuntimeError(errors.DETACH_VIEW_INPLACE)
        self.grad_fn = None
        self._requires_grad = False
        return self

    def retain_grad(self):
        """Ask backward to fill .grad of this non-leaf tensor too."""
        if self.grad_fn is None:
            if not self.requires_grad:
                raise RuntimeError(errors.RETAIN_GRAD_WITHOUT_GRAD)
            return
        if not retains_grad(self):
            add_tensor_hook(self, RetainGradHook(self))

    retains_grad = property(
        lambda self: retains_grad(self), doc="Whether retain_grad() was called."
    )

    def register_post_accumulate_grad_hook(self, hook):
        """hook(self) runs after backward has accumulated into this leaf's .grad."""
        return add_post_accumulate_grad_hook(self, hook)

    _base = property(lambda self: self._view_base, doc="The tensor this one is a view of, or None.")

    def _is_view(self):
        """True when this tensor is a view of another, its _base."""
        return self._view_base is not None

    output_nr = property(lambda self: self._output_nr, doc="Which output of its grad_fn it is.")

    def register_hook(self, hook):
        """hook(grad) runs when this tensor's gradient is computed; it may return a new gradient."""
        if not self.requires_grad:
            raise RuntimeError(errors.HOOK_WITHOUT_GRAD)
        return add_tensor_hook(self, hook)

    _backward_hooks = hooks.backward_hooks_property  # a dict of hooks, as PyTorch's

    def _grad_accumulator(self):
        """The AccumulateGrad node of this leaf; one per leaf while the graph holds it."""
        node = None if self._accumulator is None else self._accumulator()
        if node is None:
            node = AccumulateGrad(self)
            self._accumulator = weakref.ref(node)
        return node

    __hash__ = object.__hash__
