"""The array side of a Tensor: what it says about its numpy array, and how it becomes Python values.

`TensorData` is the base class of Tensor (tensor.py, which adds what autograd needs); the
conversions that make a new tensor (`to`, `float`...) are operations, in conversions.py.
"""

import numpy as np

from . import dtypes, errors
from ._tensor_str import tensor_repr
from .device import CPU
from .grad_mode import GradMode


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


# PyTorch's errors for deleting these attributes of a tensor (del x.grad is allowed).
_UNDELETABLE = {
    "data": "Deleting tensor data is not allowed. Delete tensor instead!",
    "requires_grad": "requires_grad must be a bool",
    "_grad_fn": "Deletion of _grad_fn not allowed. Detach tensor instead!",
    "_backward_hooks": "Deletion of _backwards_hooks not allowed!",
}


def refuse_deletions(cls):
    """Give `cls`'s properties data, requires_grad and _backward_hooks PyTorch's error on `del`. Deleters, not a __delattr__: a class with its own __delattr__ routes every
    attribute assignment through Python, which made creating a tensor about three times slower.
    (`del x._grad_fn` stays possible: _grad_fn is a slot.)"""

    def refuse(name):
        def delete(self):
            raise RuntimeError(_UNDELETABLE[name])

        return delete

    cls.data = cls.data.deleter(refuse("data"))
    cls.requires_grad = cls.requires_grad.deleter(refuse("requires_grad"))
    cls._backward_hooks = cls._backward_hooks.deleter(refuse("_backward_hooks"))


class TensorData:
    """Questions about the array `_data` (shape, dtype...) and its values as Python objects."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "data" in vars(cls):  # Tensor itself, which defines the properties
            refuse_deletions(cls)

    grad_dtype = property(
        lambda self: _get_grad_dtype(self),
        lambda self, dtype: _set_grad_dtype(self, dtype),
        doc="The dtype a leaf's gradients are cast to (its own by default; None: any dtype).",
    )

    @property
    def shape(self):
        """The sizes of the dimensions, as a Size (a tuple)."""
        return Size(self._data.shape)

    def size(self, dim=None):
        """shape, or the size of one dimension."""
        if dim is None:
            return Size(self._data.shape)
        ndim = max(self._data.ndim, 1)
        if not -ndim <= dim < ndim:
            raise IndexError(errors.DIM_OUT_OF_RANGE.format(low=-ndim, high=ndim - 1, dim=dim))
        return self._data.shape[dim] if self._data.ndim else 1

    def stride(self, dim=None):
        """The steps in memory, in elements, from one index to the next along each dimension
        (or along `dim`)."""
        data = self._data
        if data.size == 0:  # numpy may give 0s; torch gives an empty tensor contiguous steps
            sizes = [max(n, 1) for n in data.shape]
            strides = tuple(int(np.prod(sizes[i + 1 :])) for i in range(data.ndim))
        else:
            strides = tuple(step // data.itemsize for step in data.strides)
        if dim is None:
            return strides
        if data.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        self.size(dim)  # torch's IndexError for a dim out of range
        return strides[dim]

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

    ndimension = dim

    def numel(self):
        """Number of elements."""
        return self._data.size

    nelement = numel

    def element_size(self):
        """Bytes per element."""
        return self._data.itemsize

    def data_ptr(self):
        """The address of the first element (0 for an empty tensor), as in torch."""
        return self._data.ctypes.data if self._data.size else 0

    @property
    def layout(self):
        """mini_autograd.strided: every tensor is a strided numpy array."""
        return dtypes.strided

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

    def numpy(self, *, force=False):
        """The underlying numpy array (shares memory); refused while it requires grad, outside
        no_grad, unless `force` (as torch's, which also copies a GPU tensor to the CPU)."""
        if self.requires_grad and GradMode.enabled and not force:
            raise RuntimeError(errors.NUMPY_OF_REQUIRES_GRAD)
        return self._data

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(errors.ITEM_OF_MANY.format(count=self._data.size))
        return self._data.item()

    def tolist(self):
        """The values as nested Python lists."""
        return self._data.tolist()

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError(errors.LEN_OF_0D)
        return self._data.shape[0]

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError(errors.BOOL_OF_MANY)
        return bool(self._data)

    def __float__(self):
        # float() (not item(), int() or format) warns, as torch's, where grad mode is on
        if self.requires_grad and GradMode.enabled:
            errors.warn_once(errors.SCALAR_OF_REQUIRES_GRAD, stacklevel=2)
        return float(self.item())

    def __complex__(self):
        if self.requires_grad and GradMode.enabled:
            errors.warn_once(errors.SCALAR_OF_REQUIRES_GRAD, stacklevel=2)
        return complex(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        return self._data.__index__()

    def __format__(self, spec):
        """A 0-d tensor formats as its number; any other only with no spec (`f"{x}"`)."""
        return format(self.item(), spec) if self._data.ndim == 0 else object.__format__(self, spec)

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError(errors.ITERATE_0D)
        return (self[i] for i in range(self._data.shape[0]))

    # numpy defers to the tensor's own operators, so `np.float64(2) * x` is a tensor, as in PyTorch
    __array_priority__ = 1000

    def __array__(self, dtype=None, copy=None):
        return self.numpy() if dtype is None else self.numpy().astype(dtype)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """What a numpy function of a tensor returns (`np.sin(x)`): a tensor, bool as uint8."""
        return self._make(array.astype(np.uint8) if array.dtype == np.bool_ else array)

    def __repr__(self):
        return tensor_repr(self)


def check_can_require_grad(array, requires_grad, message=errors.ONLY_FLOAT_CAN_REQUIRE_GRAD):
    """Raise PyTorch's error when an integer or bool tensor is asked to require grad."""
    if requires_grad and array.dtype.kind != "f":
        raise RuntimeError(message)


def check_new_grad(tensor, grad):
    """Raise PyTorch's error when `grad` cannot become `tensor`'s .grad (None always can)."""
    if grad is None:
        return
    if not isinstance(grad, TensorData):
        raise TypeError(errors.GRAD_NOT_A_TENSOR.format(type=type(grad).__name__))
    if grad is tensor:
        raise RuntimeError(errors.GRAD_IS_ITSELF)
    dtype = numpy_grad_dtype(tensor)
    if dtype is not None and grad._data.dtype != dtype:
        raise RuntimeError(errors.grad_wrong_dtype(grad._data.dtype, dtype))
    if grad.shape != tensor.shape:
        sizes = {"grad": list(grad.shape), "tensor": list(tensor.shape)}
        raise RuntimeError(errors.GRAD_WRONG_SIZE.format(**sizes))


def first_grad(grad, data, owned, dtype):
    """The array that becomes the first .grad of a tensor holding `data`: the gradient itself
    when nothing else holds it (`owned`) and it is laid out as PyTorch's layout contract asks
    (data's strides where data fills its memory without gaps, else row by row), otherwise a
    copy laid out so, in `dtype` (None: grad's own)."""
    row_major = data.flags.c_contiguous  # the common case, answered without a loop
    dense, dtype = row_major or is_dense(data), np.asarray(grad).dtype if dtype is None else dtype
    if owned and type(grad) is np.ndarray and grad.dtype == dtype and grad.flags.writeable:
        if grad.flags.c_contiguous if row_major or not dense else _same_layout(grad, data):
            return grad
    copy = np.empty_like(data, dtype, order="K" if dense else "C")
    np.copyto(copy, grad, casting="unsafe")
    return copy


def numpy_grad_dtype(tensor):
    """The numpy dtype a gradient of the leaf `tensor` is cast to (None: any, kept as it is)."""
    if not _grad_dtype_set:  # (asked for every leaf: no slot read until one is set)
        return tensor._data.dtype
    dtype = getattr(tensor, "_grad_dtype", _UNSET)
    if dtype is _UNSET:
        return tensor._data.dtype
    return None if dtype is None else dtypes.to_numpy(dtype)


_UNSET = object()
_grad_dtype_set = False  # True once any tensor's grad_dtype was set


def _get_grad_dtype(tensor):
    if tensor.grad_fn is not None:
        raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
    dtype = numpy_grad_dtype(tensor)
    return None if dtype is None else dtypes.from_numpy(dtype)


def _set_grad_dtype(tensor, dtype):
    if tensor.grad_fn is not None:
        raise RuntimeError("grad_dtype can only be set on leaf tensors.")
    if dtype is not None and not isinstance(dtype, dtypes.dtype):
        raise RuntimeError(
            f"grad_dtype must be a torch.dtype or None, but got {type(dtype).__name__}"
        )
    grad = tensor._grad
    if dtype is not None and grad is not None and grad._data.dtype != dtypes.to_numpy(dtype):
        raise RuntimeError(
            f"Cannot set grad_dtype to '{errors.SCALAR_TYPE_NAMES[dtypes.to_numpy(dtype).name]}' "
            "because there is already a gradient with dtype "
            f"'{errors.CPP_TYPE_NAMES[grad._data.dtype.name]}'. Please clear the gradient (.grad "
            "= None) before changing grad_dtype, or ensure the new grad_dtype matches the "
            "existing gradient's dtype."
        )
    global _grad_dtype_set
    tensor._grad_dtype, _grad_dtype_set = dtype, True


def is_dense(array):
    """Whether array's elements fill a block of memory, in some order, without gaps or overlaps
    (PyTorch's is_non_overlapping_and_dense; a size-1 dim's stride does not count)."""
    step = array.itemsize
    for stride, n in sorted((s, n) for n, s in zip(array.shape, array.strides) if n != 1):
        if stride != step:
            return False
        step *= n
    return True


def _same_layout(grad, data):
    """Equal strides, but for size-1 dims (where grad's must not be 0: a view, as cat makes)."""
    pairs = zip(data.shape, grad.strides, data.strides)
    return all(s != 0 if n == 1 else s == t for n, s, t in pairs)


def _ragged_error(data):
    """torch.tensor's error for nested lists whose lengths disagree: it takes the sizes from the
    first element at each depth, then checks every sequence against them (None: no such error)."""
    sizes, first = [], data
    while isinstance(first, (list, tuple)):
        sizes.append(len(first))
        first = first[0] if first else None

    def check(value, dim):
        if dim == len(sizes):
            if isinstance(value, (list, tuple)):
                return TypeError(f"must be real number, not {type(value).__name__}")
            return None
        if not isinstance(value, (list, tuple)):
            return TypeError("not a sequence")
        if len(value) != sizes[dim]:
            return ValueError(
                f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(value)})"
            )
        return next(filter(None, (check(item, dim + 1) for item in value)), None)

    return check(data, 0)


def as_array(data, np_dtype=None):
    """A numpy array from lists, scalars, numpy arrays or torch tensors, with torch's dtype rules."""
    if isinstance(data, TensorData):
        data = data._data
    elif type(data).__module__.startswith("torch"):
        data = data.detach().cpu().numpy()
    if isinstance(data, np.ndarray):
        array = data
    else:
        values = _values(data)  # data itself unless a tensor stands in it
        try:
            array = np.array(values)
        except ValueError as error:
            raise _ragged_error(values) or ValueError(
                f"could not make a tensor from {type(data).__name__}: {error}"
            ) from None
        python_floats = values is data and not isinstance(data, np.generic)
        if array.dtype == np.float64 and np_dtype is None and python_floats:
            array = array.astype(dtypes.default_float())  # Python floats: float32, as in torch
    if array.dtype.kind not in "fib":
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if np_dtype is not None and array.dtype != np_dtype:
        array = array.astype(np_dtype)
    return array if array.flags.writeable else array.copy()


def _values(data):
    """Nested lists and tuples with each tensor in them made a scalar, as torch.tensor reads them
    (a tensor of one element only)."""
    if isinstance(data, TensorData):
        if data._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return data._data.reshape(())
    nested = (list, tuple, TensorData)
    if not isinstance(data, (list, tuple)) or not any(isinstance(d, nested) for d in data):
        return data  # a number, or a list of numbers: nothing inside to convert
    converted = [_values(d) for d in data]
    return converted if any(c is not d for c, d in zip(converted, data)) else data


def other_library(x):
    """For a tensor of another library (a torch.Tensor), a sentence saying what went wrong; else None.

    A function written for both libraries, `fn(lib, ...)`, that calls `ma.` somewhere gets torch
    tensors into mini_autograd's operations when it runs with lib=torch.
    """
    module = type(x).__module__.partition(".")[0]
    if module in ("", "builtins", "numpy", __name__.partition(".")[0]) or isinstance(x, TensorData):
        return None
    return (
        f"got a {module}.{type(x).__name__}: mini_autograd's operations take mini_autograd "
        f"tensors only. Mixing libraries? In code that runs with lib={module}, write `lib.` "
        "instead of `ma.`"
    )
