"""save and load, as torch.save / torch.load: a pickle in which every tensor is stored as its
dtype, shape and raw bytes (never as a pickled numpy array).

load(f) (weights_only=True, PyTorch's default) rebuilds only tensors, Parameters, containers
(dict, OrderedDict, list, tuple, set) and plain values (numbers, strings, bytes, None); any
other class in the file is refused before it is created, since unpickling arbitrary classes
can run arbitrary code. Like PyTorch, a loaded tensor keeps its dtype and requires_grad, is a
leaf, and has no .grad; a tensor that appears twice is loaded once.
"""

import _compat_pickle
import contextlib
import copy
import os
import pickle

import numpy as np

from .core.device import check as check_device
from .core.tensor import Tensor
from .nn.parameter import Parameter

DEFAULT_PROTOCOL = 2  # torch's: other objects in the file name the same globals as in torch's


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL):
    """Write obj (tensors, containers of them, a state_dict...) to a path or a binary file."""
    with _opened(f, "wb") as file:
        _TensorPickler(file, protocol=pickle_protocol).dump(obj)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **options):
    """Read back what save wrote. weights_only (the default) allows only tensors, containers,
    numbers and the classes named by add_safe_globals or safe_globals; False allows any pickled
    class (trusted files only). map_location may only name the CPU."""
    check_device(map_location if not callable(map_location) else None)
    with _opened(f, "rb") as file:
        return _WeightsUnpickler(file, weights_only is not False).load()


_safe_globals = set()  # "module.qualname" of the classes and functions a file may name


def _qualified(obj):
    return f"{obj.__module__}.{obj.__qualname__}"


def add_safe_globals(safe):
    """Allow these classes or functions in files loaded with weights_only=True."""
    _safe_globals.update(_qualified(obj) for obj in safe)


def get_safe_globals():
    """The names allowed by add_safe_globals."""
    return sorted(_safe_globals)


def clear_safe_globals():
    """Forget the names allowed by add_safe_globals."""
    _safe_globals.clear()


@contextlib.contextmanager
def safe_globals(safe):
    """Allow these classes or functions inside the block only."""
    added = {_qualified(obj) for obj in safe} - _safe_globals
    _safe_globals.update(added)
    try:
        yield
    finally:
        _safe_globals.difference_update(added)


def _rebuild_tensor(dtype, shape, data, requires_grad, is_parameter):
    """The tensor saved as (dtype name, shape, bytes): a new leaf with its own memory."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "fib":
        raise pickle.UnpicklingError(f"mini_autograd cannot load a tensor of dtype {dtype}")
    array = np.frombuffer(data, dtype).reshape(shape).copy()
    if is_parameter:
        return Parameter(array, requires_grad)
    return Tensor._make(array, requires_grad)


def _reduce_ex(self, protocol):
    """pickle of a tensor: its dtype, shape, bytes and requires_grad; loaded as a new leaf."""
    array = self._data
    state = (array.dtype.name, array.shape, np.ascontiguousarray(array).tobytes())
    return _rebuild_tensor, (*state, self.requires_grad, isinstance(self, Parameter))


_FIELDS = [name for name in Tensor.__slots__ if name != "__weakref__"]


def _deepcopy(self, memo):
    """copy.deepcopy of a leaf: new memory with its values, requires_grad and a copy of .grad."""
    if not self.is_leaf:
        raise RuntimeError(DEEPCOPY_NON_LEAF)
    fresh = Tensor._make(self._data.copy(), self.requires_grad)
    new = object.__new__(Tensor if self._is_inference else type(self))  # a Parameter stays one
    for name in _FIELDS:
        if hasattr(fresh, name):
            setattr(new, name, getattr(fresh, name))
    if hasattr(self, "__dict__"):  # a subclass's own attributes
        new.__dict__.update(copy.deepcopy(self.__dict__, memo))
    if self._grad is not None:
        new._grad = copy.deepcopy(self._grad, memo)
    memo[id(self)] = new
    return new


DEEPCOPY_NON_LEAF = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at "
    "the moment.  If you were attempting to deepcopy a module, this may be because of a "
    "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001"
)
TENSOR_METHODS = {"__reduce_ex__": _reduce_ex, "__deepcopy__": _deepcopy}


class _TensorPickler(pickle.Pickler):
    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return _reduce_ex(obj, DEFAULT_PROTOCOL)
        return NotImplemented


# What weights_only=True lets a file name: torch's list (a pickle of protocol 2 names bytes, sets
# and complex numbers through these), and this module's own tensor format.
_ALLOWED = {
    (__name__, "_rebuild_tensor"),
    ("mini_autograd.core.dtypes", "_by_name"),
    ("builtins", "bytes"),  # an empty tensor's data
    ("collections", "OrderedDict"),
    ("collections", "Counter"),
    ("_codecs", "encode"),
    ("builtins", "bytearray"),
    ("builtins", "set"),
    ("builtins", "complex"),
}
UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will "
    "likely succeed, but it can result in arbitrary code execution. Do it only if you got the "
    "file from a trusted source."
)
DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
    "weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)


def _unsupported_global(module, name):
    """torch.load's error for a global that weights_only=True does not allow."""
    full_path = f"{module}.{name}" if module != "builtins" else name
    return pickle.UnpicklingError(
        "Weights only load failed. This file can still be loaded, to do so you have two options, "
        "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
        f"\n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please "
        "check the recommended steps in the following error message.\n\tWeightsUnpickler error: "
        f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. Please use "
        f"`torch.serialization.add_safe_globals([{full_path}])` or the "
        f"`torch.serialization.safe_globals([{full_path}])` context manager to allowlist this "
        f"global if you trust this class/function.{DOCS_MESSAGE}"
    )


class _WeightsUnpickler(pickle.Unpickler):
    def __init__(self, file, weights_only):
        super().__init__(file)
        self.weights_only = weights_only

    def find_class(self, module, name):
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)  # protocol 2: __builtin__
        if (
            not self.weights_only
            or (module, name) in _ALLOWED
            or f"{module}.{name}" in _safe_globals
        ):
            return super().find_class(module, name)
        raise _unsupported_global(module, name)


@contextlib.contextmanager
def _opened(f, mode):
    """A path is opened (and closed afterwards); a file object is used as it is."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, mode) as file:
            yield file
    else:
        yield f
