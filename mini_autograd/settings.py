"""torch's global switches that have nothing to switch in a numpy engine: accepted, so that scripts
calling them run, and answered truthfully where they ask something."""

import os


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
