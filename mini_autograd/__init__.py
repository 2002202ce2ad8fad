"""mini_autograd: a small autograd engine that behaves like PyTorch's, built on numpy.

import mini_autograd as ma
x = ma.tensor([1.0, 2.0], requires_grad=True)
(x ** 2).sum().backward()
x.grad  # tensor([2., 4.])

Code written for torch runs with `import mini_autograd as torch`: the names below are torch's.
"""
# ruff: noqa: F401 (this file only re-exports, under torch's names)

import warnings as _warnings

from . import (
    accelerator,
    autograd,
    backends,
    cuda,
    distributions,
    nn,
    optim,
    profiler,
    random,
    return_types,
    testing,
    utils,
)
from .autograd.anomaly_mode import (
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)
from .autograd.variable import TENSOR_METHODS as _variable_methods
from .conversions import TENSOR_METHODS as _conversion_methods
from .core import dtypes
from .core._tensor_str import get_printoptions, set_printoptions
from .core.backward_calls import TENSOR_METHODS as _backward_methods
from .core.device import device
from .core.dtypes import bool_ as bool  # noqa: A001 (torch.bool)
from .core.dtypes import (
    double,
    dtype,
    finfo,
    float,  # noqa: A004 (torch.float)
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    iinfo,
    int,  # noqa: A004 (torch.int)
    int8,
    int16,
    int32,
    int64,
    layout,
    long,
    set_default_dtype,
    short,
    strided,
    uint8,
)
from .core.errors import is_warn_always_enabled, set_warn_always
from .core.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .core.inference import TENSOR_METHODS as _inference_methods
from .core.inference import inference_mode, is_inference, is_inference_mode_enabled
from .core.tensor import Tensor
from .core.tensor_data import Size
from .creation import TENSOR_METHODS as _creation_methods
from .creation import (
    BoolTensor,
    ByteTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    arange,
    as_tensor,
    bernoulli,
    empty,
    empty_like,
    empty_strided,
    eye,
    from_numpy,
    full,
    full_like,
    get_default_device,
    is_tensor,
    linspace,
    logspace,
    normal,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    set_default_device,
    tensor,
    zeros,
    zeros_like,
)
from .instruments.diagnose import diagnosis_mode, set_diagnosis_mode
from .instruments.freeing_log import freeing_log
from .instruments.torch_doctor import doctor
from .memory_format import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)
from .nn.distance import cosine_similarity, pairwise_distance
from .nn.functional import torch_dropout as dropout
from .ops import *  # noqa: F403 (every function form of an operation: ops/__init__.py lists them)
from .ops.inplace import view_history as _view_history
from .ops.methods import install as _install_methods
from .ops.softmax import softmax  # the ops package's own softmax is its module of that name
from .random import Generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .sampling import TENSOR_METHODS as _sampling_methods
from .sampling import multinomial
from .serialization import TENSOR_METHODS as _serialization_methods
from .serialization import load, save
from .settings import (
    are_deterministic_algorithms_enabled,
    compile,
    get_float32_matmul_precision,
    get_num_threads,
    set_float32_matmul_precision,
    set_num_threads,
    use_deterministic_algorithms,
)

# The Tensor methods that other modules define: creation, conversions, backward, operations
# (last: ops' `type`, which also takes the legacy types, replaces the conversions' one).
for _name, _method in {
    **_creation_methods,
    **_sampling_methods,
    **_conversion_methods,
    **_backward_methods,
    **_inference_methods,
    **_variable_methods,
    **_serialization_methods,
}.items():
    setattr(Tensor, _name, _method)
_install_methods(Tensor)
Tensor._view_history = staticmethod(_view_history)

__version__ = "0.1.0"

# torch gives inf and nan without a word where numpy warns ("overflow encountered in matmul"):
# numpy's floating-point warnings raised in mini_autograd's own code are not shown.
_warnings.filterwarnings(
    "ignore",
    message="(overflow|invalid value|divide by zero|underflow) encountered",
    category=RuntimeWarning,
    module=r"mini_autograd\.",
)
