"""torch's global switches that have nothing to switch in a numpy engine: accepted, so that scripts
calling them run, and answered truthfully where they ask something."""

import os
import warnings

_warn_always = [False]
_warned = set()  # the keys of the once-per-process warnings already given


def set_warn_always(b):
    """Give the warnings PyTorch gives once per process (TORCH_WARN_ONCE) every time."""
    _warn_always[0] = bool(b)


def is_warn_always_enabled():
    """True after set_warn_always(True)."""
    return _warn_always[0]


def warn_once(message, stacklevel, key=None):
    """A UserWarning the first time (per `key`, default the message) in a process, as PyTorch's
    TORCH_WARN_ONCE, or every time after set_warn_always(True)."""
    key = message if key is None else key
    if key not in _warned or _warn_always[0]:
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Accepted: mini_autograd's operations are always deterministic."""


def are_deterministic_algorithms_enabled():
    """True: every operation here is deterministic."""
    return True


def set_num_threads(count):
    """Accepted; numpy's threads are set by its BLAS (e.g. OMP_NUM_THREADS) before it starts."""


def get_num_threads():
    """The number of CPUs (numpy's BLAS decides how many it uses)."""
    return os.cpu_count() or 1


def set_float32_matmul_precision(precision):
    """Accepted: numpy multiplies float32 matrices in float32."""


def get_float32_matmul_precision():
    """'highest': numpy multiplies float32 matrices in full float32 precision."""
    return "highest"


def compile(model=None, **options):  # noqa: A001 (torch.compile)
    """The model itself: mini_autograd runs everything eagerly (also as @compile)."""
    if model is None:
        return lambda fn: fn
    return model
