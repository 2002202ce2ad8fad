"""save and load, as torch.save / torch.load: a pickle in which every tensor is stored as its
dtype, shape and raw bytes (never as a pickled numpy array).

load(f) (weights_only=True, PyTorch's default) rebuilds only tensors, Parameters, containers
(dict, OrderedDict, list, tuple, set) and plain values (numbers, strings, bytes, None); any
other class in the file is refused before it is created, since unpickling arbitrary classes
can run arbitrary code. Like PyTorch, a loaded tensor keeps its dtype and requires_grad, is a
leaf, and has no .grad; a tensor that appears twice is loaded once.
"""

import contextlib
import copy
import os
import pickle

import numpy as np

from .core.device import check as check_device
from .core.tensor import Tensor
from .nn.parameter import Parameter


def save(obj, f):
    """Write obj (tensors, containers of them, a state_dict...) to a path or a binary file."""
    with _opened(f, "wb") as file:
        _TensorPickler(file, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)


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
            return _reduce_ex(obj, pickle.HIGHEST_PROTOCOL)
        return NotImplemented


# What weights_only=True lets a file name (containers and numbers need no name in a pickle).
_ALLOWED = {
    (__name__, "_rebuild_tensor"),
    ("collections", "OrderedDict"),
    ("mini_autograd.core.dtypes", "_by_name"),
}


class _WeightsUnpickler(pickle.Unpickler):
    def __init__(self, file, weights_only):
        super().__init__(file)
        self.weights_only = weights_only

    def find_class(self, module, name):
        if (
            not self.weights_only
            or (module, name) in _ALLOWED
            or f"{module}.{name}" in _safe_globals
        ):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            "Weights only load failed. Re-running `load` with `weights_only` set to `False` will "
            "likely succeed, but it can result in arbitrary code execution. Do it only if you got "
            "the file from a trusted source.\n"
            f"WeightsUnpickler error: Unsupported global: GLOBAL {module}.{name} was not an "
            "allowed global by default."
        )


@contextlib.contextmanager
def _opened(f, mode):
    """A path is opened (and closed afterwards); a file object is used as it is."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, mode) as file:
            yield file
    else:
        yield f
