"""Bernoulli (torch.distributions.bernoulli, ported, BSD-3-Clause)."""

import numbers

from .. import creation
from ..core.grad_mode import no_grad
from ..core.tensor_data import Size
from ..nn.functional import binary_cross_entropy_with_logits
from .distribution import EMPTY_SHAPE, Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits


class Bernoulli(Distribution):
    """1 with probability probs (or sigmoid(logits)), else 0."""

    arg_constraints = {"probs": "unit_interval", "logits": "real"}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.probs

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        """log(p) - log(1 - p), p clamped away from 0 and 1."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        """sigmoid(logits)."""
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=EMPTY_SHAPE):
        """bernoulli(probs) of the extended shape, as torch draws it."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return creation.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        """-binary_cross_entropy_with_logits(logits, value)."""
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        """binary_cross_entropy_with_logits(logits, probs)."""
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        """The values 0, 1, shaped (2, 1, ...) (expanded over batch_shape)."""
        values = creation.arange(2, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values
