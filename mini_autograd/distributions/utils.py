"""Helpers of the distributions, as torch.distributions.utils (ported, BSD-3-Clause)."""

import numbers

from .. import creation
from ..core import dtypes
from ..core.tensor import Tensor
from ..nn import functional as F
from ..ops.compositions import broadcast_tensors


def broadcast_all(*values):
    """The values (tensors or numbers) as tensors broadcast to one shape; numbers get the first
    tensor's dtype (the default dtype when there is none)."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, torch.Tensor or objects "
            "implementing __torch_function__."
        )
    if not all(isinstance(v, Tensor) for v in values):
        dtype = next((v.dtype for v in values if isinstance(v, Tensor)), dtypes.get_default_dtype())
        values = [v if isinstance(v, Tensor) else creation.tensor(v, dtype=dtype) for v in values]
    return broadcast_tensors(*values)


def logits_to_probs(logits, is_binary=False):
    """sigmoid(logits) (binary), else softmax(logits) over the last dim."""
    if is_binary:
        return logits.sigmoid()
    return F.softmax(logits, dim=-1)


def clamp_probs(probs):
    """probs clamped to [eps, 1 - eps], eps the dtype's machine epsilon."""
    eps = dtypes.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """log(p) - log(1 - p) (binary), else log(p), of the clamped probabilities."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ps_clamped.log() - (-ps_clamped).log1p()
    return ps_clamped.log()


class lazy_property:
    """A property computed on first use and then stored as an attribute of the instance."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value
