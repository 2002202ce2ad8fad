"""Data types: thin names over numpy dtypes, printed and compared like PyTorch's, with torch's
aliases (`float` is float32, `double` float64, `long` int64, `int` int32, `half` float16)."""

import builtins

import numpy as np


class dtype:
    """A tensor element type; `is_floating_point` says whether it can require gradients."""

    __slots__ = ("name", "numpy", "is_floating_point", "is_signed", "itemsize")

    def __init__(self, name, numpy_name=None):
        self.name = name
        self.numpy = np.dtype(numpy_name or name)
        self.is_floating_point = self.numpy.kind == "f"
        self.is_signed = self.numpy.kind in "fi"
        self.itemsize = self.numpy.itemsize

    def to_real(self):
        """self (mini_autograd has no complex dtypes)."""
        return self

    def __repr__(self):
        return f"mini_autograd.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))


class layout:
    """How a tensor's elements are stored; mini_autograd has one, `strided` (a numpy array)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"mini_autograd.{self.name}"

    def __reduce__(self):
        return self.name  # the module's global of that name


strided = layout("strided")

float16 = half = dtype("float16")
float32 = float = dtype("float32")  # noqa: A001 (torch.float)
float64 = double = dtype("float64")
int8 = dtype("int8")
int16 = short = dtype("int16")
int32 = int = dtype("int32")  # noqa: A001 (torch.int)
int64 = long = dtype("int64")
uint8 = dtype("uint8")
bool_ = dtype("bool")

ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool_)
_BY_NUMPY = {d.numpy: d for d in ALL}
_default_float = [float32]
TENSOR_TYPE_NAMES = {  # the legacy type names: x.type() gives 'torch.FloatTensor'
    "float16": "HalfTensor",
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "int8": "CharTensor",
    "int16": "ShortTensor",
    "int32": "IntTensor",
    "int64": "LongTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
}


_BY_TYPE_NAME = {
    f"{library}.{name}": np.dtype(numpy_name)
    for numpy_name, name in TENSOR_TYPE_NAMES.items()
    for library in ("torch", "mini_autograd")
}


def from_tensor_type(t):
    """The numpy dtype of a legacy tensor type, as x.type(t) reads t: a dtype, a legacy type
    (FloatTensor, which holds its dtype) or its name ('torch.FloatTensor'); else torch's error."""
    if isinstance(t, dtype):
        return t.numpy
    if not isinstance(t, (builtins.type, str)):
        raise TypeError("dtype must be a type, str, or dtype object")
    if isinstance(getattr(t, "dtype", None), dtype):
        return t.dtype.numpy
    if t in _BY_TYPE_NAME:
        return _BY_TYPE_NAME[t]
    raise ValueError(f"invalid type: '{getattr(t, '__name__', t)}'")


def _by_name(name):
    return next(d for d in ALL if d.name == name)


def get_default_dtype():
    """The dtype that Python floats become (float32 unless set_default_dtype changed it)."""
    return _default_float[0]


def set_default_dtype(d):
    """Make Python floats (and randn, zeros...) use d, a floating point dtype."""
    if not isinstance(d, dtype) or d not in (float16, float32, float64):
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_float[0] = d


def default_float():
    """The numpy dtype of the default float."""
    return _default_float[0].numpy


def from_numpy(np_dtype):
    """The mini_autograd dtype for a numpy dtype."""
    try:
        return _BY_NUMPY[np_dtype]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).name}. The only supported "
            "types are: float64, float32, float16, int64, int32, int16, int8, uint8, and bool."
        ) from None


def to_numpy(d):
    """The numpy dtype for a mini_autograd dtype, a Python type, a numpy dtype or a torch dtype."""
    if d is None:
        return None
    if isinstance(d, dtype):
        return d.numpy
    python_types = {builtins.float: float64, builtins.int: int64, builtins.bool: bool_}
    if d in python_types:
        return python_types[d].numpy
    name = str(d).replace("torch.", "")
    known = {a: globals()[a] for a in ("float", "double", "half", "long", "int", "short")}
    if name in known:
        return known[name].numpy
    try:
        return np.dtype(name)
    except TypeError:
        raise TypeError(f"unknown dtype {d!r}; use mini_autograd.float32 or float64") from None


class finfo:
    """Facts about a floating point dtype: eps, max, min, tiny, resolution, bits."""

    def __init__(self, type=None):  # noqa: A002 (torch's parameter name)
        self.dtype = (type or get_default_dtype()).name
        info = np.finfo(to_numpy(type) or default_float())
        self.bits, self.eps, self.max, self.min = (
            info.bits,
            builtins.float(info.eps),
            builtins.float(info.max),
            builtins.float(info.min),
        )
        self.tiny = self.smallest_normal = builtins.float(info.smallest_normal)
        self.resolution = 10.0**-info.precision

    def __repr__(self):
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, dtype={self.dtype})"
        )


class iinfo:
    """Facts about an integer dtype: max, min, bits."""

    def __init__(self, type):  # noqa: A002 (torch's parameter name)
        self.dtype = type.name
        info = np.iinfo(to_numpy(type))
        self.bits, self.max, self.min = info.bits, builtins.int(info.max), builtins.int(info.min)

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
