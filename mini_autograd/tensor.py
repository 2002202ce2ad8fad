"""The Tensor: a numpy array plus what autograd needs (requires_grad, grad, grad_fn, a version)."""

import warnings
import weakref

import numpy as np

from . import dtypes
from .device import CPU
from .device import check as check_device
from .node import AccumulateGrad, RemovableHandle

NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more informations."
)

CAN_REQUIRE_GRAD = "Only Tensors of floating point and complex dtype can require gradients"
DETACH_VIEW_ERROR = (
    "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
    "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP "
    "buckets, and hence detach_() cannot be called on these gradients. To fix this error, please "
    "refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
)


class Size(tuple):
    """A tensor's shape: a tuple of ints that prints as torch.Size does."""

    __slots__ = ()

    def numel(self):
        """The number of elements a tensor of this shape holds."""
        count = 1
        for n in self:
            count *= n
        return count

    def __repr__(self):
        return f"mini_autograd.Size({list(self)})"

    def __getitem__(self, index):
        item = tuple.__getitem__(self, index)
        return Size(item) if isinstance(index, slice) else item


class Tensor:
    """An n-dimensional array that can record the operations made with it.

    `_data` is the numpy array holding the values; `grad_fn` is the node that made this tensor
    (None for a leaf); `_version` counts in-place changes so backward can tell when a saved
    tensor was modified. Views share the version of the tensor they look into (`_view_base`).
    The operators and operation methods (`+`, `exp`, `sum`...) are attached in ops/methods.py.
    """

    __slots__ = (
        "_data",
        "requires_grad",
        "_grad_fn",
        "_grad",
        "_output_nr",
        "_hooks",
        "_accumulator",
        "_view_base",
        "_base_version_at_view",
        "_view_made_in_no_grad",
        "_version_counter",
        "__weakref__",
    )

    def __init__(self, *args, requires_grad=False, dtype=None, device=None):
        """torch.Tensor's legacy constructor: Tensor(data) holds data as floats (the default
        dtype), Tensor(2, 3) is a (2, 3) tensor (zeros here, uninitialised in torch)."""
        check_device(device)
        np_dtype = dtypes.to_numpy(dtype) or dtypes.default_float()
        if len(args) == 1 and isinstance(args[0], Size):
            args = tuple(args[0])
        if not args or all(isinstance(a, (int, np.integer)) for a in args):
            array = np.zeros(args or (0,), np_dtype)
        elif len(args) == 1:
            array = as_array(args[0], np_dtype)
        else:
            raise TypeError(f"Tensor() takes data or sizes, got {args!r}")
        check_can_require_grad(array, requires_grad, CAN_REQUIRE_GRAD)
        _init(self, array, bool(requires_grad), None)

    @staticmethod
    def _make(data, requires_grad=False, grad_fn=None, output_nr=0):
        """Wrap an ndarray without copying or checking (the fast path every operation uses)."""
        if type(data) is not np.ndarray:
            data = np.asarray(data)  # numpy gives scalars, not 0-d arrays, from 0-d operations
        # The fields are set here rather than through _init: this runs for every result.
        t = object.__new__(Tensor)
        t._data = data
        t.requires_grad = requires_grad
        t._grad_fn = grad_fn
        t._grad = None
        t._output_nr = output_nr
        t._hooks = None
        t._accumulator = None
        t._view_base = None
        t._version_counter = [0]  # a box, so saved outputs can watch it without holding the tensor
        return t

    # --- what the tensor is ------------------------------------------------------------------
    @property
    def data(self):
        """The same memory as a tensor outside the graph, with its own version counter (PyTorch's .data).

        Unlike detach(), changes made through it are invisible to autograd's version checks.
        """
        return Tensor._make(self._data)

    @data.setter
    def data(self, value):
        self._data = as_array(value)

    @property
    def shape(self):
        """The sizes of the dimensions, as a Size (a tuple)."""
        return Size(self._data.shape)

    def size(self, dim=None):
        """shape, or the size of one dimension."""
        if dim is None:
            return Size(self._data.shape)
        ndim = self._data.ndim
        if not -max(ndim, 1) <= dim < max(ndim, 1):
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, "
                f"{max(ndim, 1) - 1}], but got {dim})"
            )
        return self._data.shape[dim] if ndim else 1

    @property
    def dtype(self):
        """The element type (mini_autograd.float32 by default for floats)."""
        return dtypes.from_numpy(self._data.dtype)

    @property
    def ndim(self):
        """Number of dimensions."""
        return self._data.ndim

    def dim(self):
        """Number of dimensions."""
        return self._data.ndim

    def numel(self):
        """Number of elements."""
        return self._data.size

    def is_floating_point(self):
        """True for float dtypes."""
        return self._data.dtype.kind == "f"

    @property
    def device(self):
        """device(type='cpu'): mini_autograd runs on numpy."""
        return CPU

    @property
    def is_cuda(self):
        """False: mini_autograd tensors live on the CPU."""
        return False

    def element_size(self):
        """Bytes per element."""
        return self._data.itemsize

    def nelement(self):
        """Number of elements (numel)."""
        return self._data.size

    def ndimension(self):
        """Number of dimensions."""
        return self._data.ndim

    @property
    def grad_fn(self):
        """The node that made this tensor (None for a leaf). A view's is remade, as PyTorch does,
        once its base changed in place after it was made (ops/inplace.py, view_history)."""
        base = self._view_base
        if base is not None and self._base_version_at_view != base._version_counter[0]:
            from .ops.inplace import view_history

            view_history(self)
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
        owner = self._view_base
        return (self if owner is None else owner)._version_counter[0]

    def _bump_version(self):
        owner = self._view_base
        (self if owner is None else owner)._version_counter[0] += 1

    # --- gradients -------------------------------------------------------------------------
    @property
    def grad(self):
        """The accumulated gradient (leaves, or non-leaves that called retain_grad())."""
        if self.grad_fn is not None and not self._retains_grad():
            warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}"
                )
            if value.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                    f"size '{list(self.shape)}'. Please ensure that the gradient and the tensor are "
                    "the same size"
                )
        self._grad = value

    def requires_grad_(self, requires_grad=True):
        """Mark this leaf as wanting a gradient (in place); returns self."""
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        check_can_require_grad(
            self._data, requires_grad, "only Tensors of floating point dtype can require gradients"
        )
        self.requires_grad = bool(requires_grad) or self.grad_fn is not None
        return self

    def detach(self):
        """The same data, cut from the graph (shares memory and the version counter)."""
        t = Tensor._make(self._data)
        owner = self if self._view_base is None else self._view_base
        t._version_counter = owner._version_counter  # the same counter, but not a view for autograd
        return t

    def detach_(self):
        """Cut this tensor from the graph in place; returns self."""
        if self._view_base is not None:
            raise RuntimeError(DETACH_VIEW_ERROR)
        self.grad_fn = None
        self.requires_grad = False
        return self

    def retain_grad(self):
        """Ask backward to fill .grad of this non-leaf tensor too."""
        if self.grad_fn is None:
            if not self.requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if not self._retains_grad():
            self._add_hook(RetainGradHook(self))

    def _retains_grad(self):
        return any(type(h) is RetainGradHook for h in self._hook_list(create=False))

    def register_hook(self, hook):
        """hook(grad) runs when this tensor's gradient is computed; it may return a new gradient."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        return self._add_hook(hook)

    def _hook_list(self, create=True):
        """Hooks of a leaf live on the tensor; those of a non-leaf on its grad_fn, by output."""
        if self.grad_fn is None:
            if self._hooks is None and create:
                self._hooks = []
            return self._hooks if self._hooks is not None else []
        node = self.grad_fn
        if node._tensor_hooks is None:
            if not create:
                return []
            node._tensor_hooks = {}
        if create:
            return node._tensor_hooks.setdefault(self._output_nr, [])
        return node._tensor_hooks.get(self._output_nr, [])

    def _add_hook(self, hook):
        hooks = self._hook_list()
        # retain_grad's hook always runs last, after the user's hooks, as in PyTorch.
        position = len(hooks) - (1 if hooks and type(hooks[-1]) is RetainGradHook else 0)
        hooks.insert(position, hook)
        return RemovableHandle(hooks, hook)

    def _grad_accumulator(self):
        """The AccumulateGrad node of this leaf; one per leaf while the graph holds it."""
        node = None if self._accumulator is None else self._accumulator()
        if node is None:
            node = AccumulateGrad(self)
            self._accumulator = weakref.ref(node)
        return node

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute d(self)/d(leaf) for every leaf of the graph and accumulate it into leaf.grad."""
        from .engine import backward

        backward(
            [self], None if gradient is None else [gradient], retain_graph, create_graph, inputs
        )

    # --- conversions -----------------------------------------------------------------------
    def numpy(self):
        """The underlying numpy array (shares memory)."""
        if self.requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        return self._data

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        return self._data.item()

    def tolist(self):
        """The values as nested Python lists."""
        return self._data.tolist()

    def to(self, *args, dtype=None, device=None, copy=False, non_blocking=False):
        """self in another dtype: to(dtype), to(device), to(device, dtype), to(other_tensor)."""
        for arg in args:
            if isinstance(arg, dtypes.dtype):
                dtype = arg
            elif isinstance(arg, Tensor):
                dtype = arg.dtype
            else:
                device = arg
        check_device(device)
        if dtype is None or dtypes.to_numpy(dtype) == self._data.dtype:
            return self.clone() if copy else self
        from .ops.elementwise import cast

        return cast(self, dtypes.to_numpy(dtype))

    def type(self, dtype=None):
        """The type's name ('mini_autograd.FloatTensor'), or self cast to dtype."""
        if dtype is None:
            return f"mini_autograd.{dtypes.TENSOR_TYPE_NAMES[self._data.dtype.name]}"
        return self.to(dtype)

    def type_as(self, other):
        """self cast to other's dtype."""
        return self.to(other.dtype)

    def cpu(self):
        """self (mini_autograd tensors always live on the CPU)."""
        return self

    def cuda(self, device=None, non_blocking=False):
        """Refused: mini_autograd has no GPU."""
        check_device("cuda" if device is None else device)

    def float(self):
        """Cast to float32."""
        return self.to(dtypes.float32)

    def double(self):
        """Cast to float64."""
        return self.to(dtypes.float64)

    def half(self):
        """Cast to float16."""
        return self.to(dtypes.float16)

    def long(self):
        """Cast to int64."""
        return self.to(dtypes.int64)

    def int(self):
        """Cast to int32."""
        return self.to(dtypes.int32)

    def bool(self):
        """Cast to bool."""
        return self.to(dtypes.bool_)

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data)

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        return self._data.__index__()

    def __format__(self, spec):
        return format(self.item(), spec) if self._data.ndim == 0 else repr(self)

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __array__(self, dtype=None, copy=None):
        return self.numpy() if dtype is None else self.numpy().astype(dtype)

    def __repr__(self):
        from ._tensor_str import tensor_repr

        return tensor_repr(self)

    __hash__ = object.__hash__


def is_tensor(obj):
    """True for a mini_autograd Tensor."""
    return isinstance(obj, Tensor)


def _init(t, data, requires_grad, grad_fn):
    t._data = data
    t.requires_grad = requires_grad
    t._grad_fn = grad_fn
    t._grad = None
    t._output_nr = 0
    t._hooks = None
    t._accumulator = None
    t._view_base = None
    t._version_counter = [0]  # a box, so saved outputs can watch it without holding the tensor


class RetainGradHook:
    """The hook retain_grad() installs: stores each gradient that reaches the tensor in .grad."""

    def __init__(self, tensor):
        self.tensor_ref = weakref.ref(tensor)

    def __call__(self, grad):
        tensor = self.tensor_ref()
        if tensor is not None:
            if tensor._grad is None:
                tensor._grad = grad.detach().clone() if grad.grad_fn is None else grad
            else:
                tensor._grad = tensor._grad + grad


def check_can_require_grad(array, requires_grad, message):
    """Raise PyTorch's error when an integer or bool tensor is asked to require grad."""
    if requires_grad and array.dtype.kind != "f":
        raise RuntimeError(message)


def as_array(data, np_dtype=None):
    """A numpy array from lists, scalars, numpy arrays or torch tensors, with torch's dtype rules."""
    if isinstance(data, Tensor):
        data = data._data
    elif type(data).__module__.startswith("torch"):
        data = data.detach().cpu().numpy()
    if isinstance(data, np.ndarray):
        array = data
    else:
        try:
            array = np.array(data)
        except ValueError as error:
            raise ValueError(
                f"could not make a tensor from {type(data).__name__}: {error}"
            ) from None
        if array.dtype == np.float64 and np_dtype is None and not isinstance(data, np.generic):
            array = array.astype(dtypes.default_float())  # Python floats: float32, as in torch
    if array.dtype.kind not in "fib":
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if np_dtype is not None and array.dtype != np_dtype:
        array = array.astype(np_dtype)
    return array if array.flags.writeable else array.copy()


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor holding a copy of `data` (lists, scalars, numpy arrays, torch tensors)."""
    check_device(device)
    array = as_array(data, dtypes.to_numpy(dtype))
    check_can_require_grad(array, requires_grad, CAN_REQUIRE_GRAD)
    if array is data or (isinstance(data, Tensor) and array is data._data):
        array = array.copy()
    return Tensor._make(array, bool(requires_grad))


def other_library(x):
    """For a tensor of another library (a torch.Tensor), a sentence saying what went wrong; else None.

    A function written for both libraries, `fn(lib, ...)`, that calls `ma.` somewhere gets torch
    tensors into mini_autograd's operations when it runs with lib=torch.
    """
    module = type(x).__module__.partition(".")[0]
    if module in ("", "builtins", "numpy", __name__.partition(".")[0]) or isinstance(x, Tensor):
        return None
    return (
        f"got a {module}.{type(x).__name__}: mini_autograd's operations take mini_autograd "
        f"tensors only. Mixing libraries? In code that runs with lib={module}, write `lib.` "
        "instead of `ma.`"
    )
