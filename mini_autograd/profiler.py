"""torch.profiler, the parts autograd's profiler provides (see autograd/profiler.py)."""

from .autograd.profiler import ProfilerActivity, record_function
from .autograd.profiler import TorchProfile as profile

__all__ = ["ProfilerActivity", "profile", "record_function"]
