"""Ways to make tensors, with torch's signatures: zeros, ones, full, empty, arange, linspace, eye,
the random ones (whose numbers are torch's: see random.py), the `*_like` forms, and the
conversions from numpy (`as_tensor`, `from_numpy`)."""

import builtins
import math

import numpy as np

from .core import dtypes
from .core.device import check as check_device
from .core.tensor import Tensor, as_array, check_can_require_grad
from .core.tensor_data import Size
from .ops.derivatives import BernoulliBackward0, NormalBackward1, NormalBackward2, NormalBackward3
from .ops.recording import NotImplementedBackward, record
from .random import default_generator

CAN_REQUIRE_GRAD = "Only Tensors of floating point and complex dtype can require gradients"


def _size(size, keyword=None, function=None):
    """The shape from `f(2, 3)`, `f((2, 3))`, `f([2, 3])` or `f(size=(2, 3))`."""
    if keyword is not None:
        size = (keyword,)
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (builtins.int, np.integer)) or isinstance(s, builtins.bool):
            raise TypeError(
                f"size must be a tuple of ints, but found element of type {type(s).__name__}"
            )
        if s < 0 and function == "zeros":
            raise RuntimeError("zeros: Dimension size must be non-negative.")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return tuple(builtins.int(s) for s in size)


def _size_option(function, options):
    """The `size=` keyword; torch's keywords with no meaning here (layout...) must be defaults."""
    size = options.pop("size", None)
    for name, value in options.items():
        if name not in _IGNORED or value != _IGNORED[name]:
            raise TypeError(f"{function}() got an unexpected keyword argument '{name}'")
    return size


_IGNORED = {"out": None, "layout": None, "pin_memory": False, "memory_format": None, "names": None}


def _leaf(array, dtype=None, device=None, requires_grad=False, generator=None):
    """A new leaf tensor from a numpy array, cast to dtype, after checking device and grad."""
    check_device(device)
    if dtype is not None:
        array = array.astype(dtypes.to_numpy(dtype), copy=False)
    check_can_require_grad(array, requires_grad, CAN_REQUIRE_GRAD)
    return Tensor._make(array, builtins.bool(requires_grad))


def _float(dtype):
    """The numpy dtype to draw in: dtype's, or the default float."""
    return dtypes.to_numpy(dtype) if dtype is not None else dtypes.default_float()


def _generator(generator):
    return default_generator if generator is None else generator


def zeros(*size, dtype=None, device=None, requires_grad=False, **options):
    """A tensor of zeros."""
    shape = _size(size, _size_option("zeros", options), "zeros")
    return _leaf(np.zeros(shape, _float(dtype)), dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False, **options):
    """A tensor of ones."""
    shape = _size(size, _size_option("ones", options))
    return _leaf(np.ones(shape, _float(dtype)), dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False, **options):
    """An uninitialised tensor in torch; zeros here, so that runs are reproducible."""
    shape = _size(size, _size_option("empty", options))
    return _leaf(np.zeros(shape, _float(dtype)), dtype, device, requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False, **options):
    """An uninitialised tensor (zeros here) of sizes `size` whose elements lie `stride` apart."""
    _size_option("empty_strided", options)
    size, stride = _size((size,)), tuple(builtins.int(s) for s in stride)
    np_dtype = _float(dtype)
    span = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if math.prod(size) else 0
    memory = np.zeros(span, np_dtype)
    byte_strides = [s * memory.itemsize for s in stride]
    array = np.lib.stride_tricks.as_strided(memory, size, byte_strides)
    return _leaf(array, dtype, device, requires_grad)


def _fill_dtype(fill_value):
    """torch's dtype for a filled tensor: bool, int64 for ints, else the default float."""
    if isinstance(fill_value, (builtins.bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(fill_value, (builtins.int, np.integer)):
        return np.dtype(np.int64)
    return dtypes.default_float()


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """A tensor filled with fill_value (int64 for an int, bool for a bool, as in torch)."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    array = np.full(_size((size,)), fill_value, _fill_dtype(fill_value))
    return _leaf(array, dtype, device, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """The n x m identity matrix."""
    return _leaf(
        np.eye(n, n if m is None else m, dtype=_float(dtype)), dtype, device, requires_grad
    )


def arange(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """start, start + step, ... below end: int64 when all three are ints, else the default float."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    bounds = (start, end, step)
    integral = all(isinstance(b, (builtins.int, np.integer)) for b in bounds)
    count = math.ceil((end - start) / step)
    array = np.arange(count, dtype=np.float64) * step + start
    return _leaf(
        array.astype(np.int64 if integral else _float(dtype)), dtype, device, requires_grad
    )


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """steps values from start to end, both included, evenly spaced."""
    if not isinstance(steps, (builtins.int, np.integer)) or steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    np_dtype = _float(dtype)
    work = np_dtype.type if np_dtype.kind == "f" else np.float64  # torch's arithmetic type
    start, end = work(start), work(end)
    step = (end - start) / work(max(steps - 1, 1))
    # torch counts up from start for the first half and back from end for the second, with one
    # rounding per value (a fused multiply-add): extended precision then one cast does the same
    index = np.arange(steps).astype(np.longdouble)
    start, end, step = np.longdouble(start), np.longdouble(end), np.longdouble(step)
    array = np.where(index < steps // 2, start + step * index, end - step * (steps - 1 - index))
    if steps == 1:
        array = np.array([start])
    return _leaf(array.astype(np_dtype), dtype, device, requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """base ** linspace(start, end, steps)."""
    exponents = linspace(start, end, steps, dtype=dtypes.float64)._data
    return _leaf((base**exponents).astype(_float(dtype)), dtype, device, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, **options):
    """Standard normal samples (torch's numbers for the same seed)."""
    shape = _size(size, _size_option("randn", options))
    array = _generator(generator).normal(shape, 0.0, 1.0, _float(dtype))
    return _leaf(array, dtype, device, requires_grad)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, **options):
    """Uniform samples in [0, 1) (torch's numbers for the same seed)."""
    shape = _size(size, _size_option("rand", options))
    array = _generator(generator).uniform(shape, 0.0, 1.0, _float(dtype))
    return _leaf(array, dtype, device, requires_grad)


def randint(
    *args,
    low=None,
    high=None,
    size=None,
    generator=None,
    dtype=None,
    device=None,
    requires_grad=False,
):
    """Random integers in [low, high): randint(high, size) or randint(low, high, size)."""
    args = list(args)
    if size is None:
        size = args.pop()
    if high is None:
        high = args.pop()
    low = args.pop() if args else (0 if low is None else low)
    array = _generator(generator).integers(_size((size,)), builtins.int(low), builtins.int(high))
    return _leaf(array, dtype, device, requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    """A random permutation of 0 .. n-1 (torch's for the same seed)."""
    return _leaf(_generator(generator).permutation(n), dtype, device, requires_grad)


def normal(
    mean, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False
):
    """Normal samples: numbers mean and std with a size, or tensors of means and/or stds."""
    gen = _generator(generator)
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise TypeError("normal() with number mean and std needs a size")
        array = gen.normal(_size((size,)), mean, std, _float(dtype))
        return _leaf(array, dtype, device, requires_grad)
    like = mean if isinstance(mean, Tensor) else std
    mean_values = mean._data if isinstance(mean, Tensor) else mean
    std_values = std._data if isinstance(std, Tensor) else std
    shape = np.broadcast_shapes(np.shape(mean_values), np.shape(std_values))
    sample = gen.normal(shape, 0.0, 1.0, like._data.dtype) * std_values + mean_values
    sample = _leaf(sample.astype(like._data.dtype), dtype, device, requires_grad)._data
    if not isinstance(std, Tensor):
        node, tensors = NormalBackward1, {"mean": mean}
    elif not isinstance(mean, Tensor):
        node, tensors = NormalBackward2, {"std": std}
    else:
        node, tensors = NormalBackward3, {"mean": mean, "std": std}
    saved = {f"{name}_sym_sizes": t._data.shape for name, t in tensors.items()}
    return record(node, sample, tuple(tensors.values()), saved)


def bernoulli(input, p=None, *, generator=None):
    """1 with probability input (each element a probability), else 0; float uniforms as in torch."""
    probabilities = input._data if p is None else np.full(input._data.shape, p)
    u = _generator(generator).uniform(input._data.shape, 0.0, 1.0, input._data.dtype)
    sample = (u < probabilities).astype(input._data.dtype)
    if p is None:
        return record(BernoulliBackward0, sample, (input,))
    return record(NotImplementedBackward, sample, (input,), args="bernoulli")  # as in torch


def _like(make):
    def like(input, *args, dtype=None, device=None, requires_grad=False, **options):
        np_dtype = dtypes.to_numpy(dtype) or input._data.dtype
        array = make(input._data.shape, np_dtype, *args, **options)
        return _leaf(array, None, device, requires_grad)

    return like


zeros_like = _like(lambda shape, d: np.zeros(shape, d))
zeros_like.__doc__ = "Zeros with input's shape and dtype."
ones_like = _like(lambda shape, d: np.ones(shape, d))
ones_like.__doc__ = "Ones with input's shape and dtype."
empty_like = _like(lambda shape, d: np.zeros(shape, d))
empty_like.__doc__ = "A tensor with input's shape and dtype (zeros here; uninitialised in torch)."
full_like = _like(lambda shape, d, fill_value: np.full(shape, fill_value, d))
full_like.__doc__ = "fill_value everywhere, with input's shape and dtype."
randn_like = _like(lambda shape, d, generator=None: _generator(generator).normal(shape, 0, 1, d))
randn_like.__doc__ = "Normal samples with input's shape and dtype."
rand_like = _like(lambda shape, d, generator=None: _generator(generator).uniform(shape, 0, 1, d))
rand_like.__doc__ = "Uniform samples in [0, 1) with input's shape and dtype."


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False):
    """Random integers in [low, high) with input's shape and dtype."""
    if high is None:
        low, high = 0, low
    array = default_generator.integers(input._data.shape, builtins.int(low), builtins.int(high))
    return _leaf(
        array.astype(dtypes.to_numpy(dtype) or input._data.dtype), None, device, requires_grad
    )


def as_tensor(data, dtype=None, device=None):
    """A tensor sharing data's memory where it can (a numpy array or a tensor), else a copy."""
    check_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype == dtype else data.to(dtype)
    return Tensor._make(as_array(data, dtypes.to_numpy(dtype)))


def from_numpy(ndarray):
    """A tensor sharing ndarray's memory: changing one changes the other."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    dtypes.from_numpy(ndarray.dtype)
    return Tensor._make(ndarray)


def _new_dtype(self, dtype):
    return self._data.dtype if dtype is None else dtypes.to_numpy(dtype)


def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    """A new leaf tensor of data, in self's dtype unless dtype is given."""
    array = np.array(as_array(data), dtype=_new_dtype(self, dtype))
    return _leaf(array, None, device, requires_grad)


def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
    """Zeros of the given size, in self's dtype."""
    return _leaf(np.zeros(_size(size), _new_dtype(self, dtype)), None, device, requires_grad)


def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
    """Ones of the given size, in self's dtype."""
    return _leaf(np.ones(_size(size), _new_dtype(self, dtype)), None, device, requires_grad)


def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
    """fill_value everywhere, in self's dtype."""
    array = np.full(_size((size,)), fill_value, _new_dtype(self, dtype))
    return _leaf(array, None, device, requires_grad)


def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    """A tensor of the given size in self's dtype (zeros here)."""
    return new_zeros(self, *size, dtype=dtype, device=device, requires_grad=requires_grad)


def new(self, *args):
    """The legacy constructor: new(data) holds data, new(*size) has that size, in self's dtype."""
    if len(args) == 1 and not isinstance(args[0], (builtins.int, np.integer, tuple)):
        return new_tensor(self, args[0])
    return new_zeros(self, *(args or (0,)))


def is_tensor(obj):
    """True for a mini_autograd Tensor."""
    return isinstance(obj, Tensor)


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor holding a copy of `data` (lists, scalars, numpy arrays, torch tensors)."""
    check_device(device)
    array = as_array(data, dtypes.to_numpy(dtype))
    check_can_require_grad(array, requires_grad)
    if array is data or (isinstance(data, Tensor) and array is data._data):
        array = array.copy()
    return Tensor._make(array, bool(requires_grad))


def legacy_constructor(self, *args, requires_grad=False, dtype=None, device=None):
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
    check_can_require_grad(array, requires_grad)
    self._data, self._requires_grad, self._grad_fn, self._grad = (
        array,
        bool(requires_grad),
        None,
        None,
    )
    self._output_nr, self._hooks, self._accumulator, self._view_base = 0, None, None, None
    self._version_counter = [0]


TENSOR_METHODS = {
    "__init__": legacy_constructor,
    "new": new,
    "new_tensor": new_tensor,
    "new_zeros": new_zeros,
    "new_ones": new_ones,
    "new_full": new_full,
    "new_empty": new_empty,
    "bernoulli": bernoulli,
}


def set_default_device(device):
    """Accepts the CPU only: it is where mini_autograd's tensors always are."""
    check_device(device)


def get_default_device():
    """device(type='cpu')."""
    return check_device(None)


class _LegacyType(type):
    """torch.FloatTensor and its kin: calling one makes a tensor of its dtype; isinstance checks
    the dtype."""

    def __call__(cls, *args, **kwargs):
        return Tensor(*args, dtype=cls.dtype, **kwargs)

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype


def _legacy_type(name, dtype):
    return _LegacyType(name, (), {"dtype": dtype, "__doc__": f"A tensor of {dtype}."})


FloatTensor = _legacy_type("FloatTensor", dtypes.float32)
DoubleTensor = _legacy_type("DoubleTensor", dtypes.float64)
HalfTensor = _legacy_type("HalfTensor", dtypes.float16)
LongTensor = _legacy_type("LongTensor", dtypes.int64)
IntTensor = _legacy_type("IntTensor", dtypes.int32)
ByteTensor = _legacy_type("ByteTensor", dtypes.uint8)
BoolTensor = _legacy_type("BoolTensor", dtypes.bool_)
