"""Categorical (torch.distributions.categorical, ported, BSD-3-Clause)."""

import math

from .. import creation
from ..core import dtypes
from ..core.tensor_data import Size
from ..ops.compositions import broadcast_tensors
from ..sampling import multinomial
from .distribution import EMPTY_SHAPE, Distribution
from .utils import lazy_property, logits_to_probs, probs_to_logits


class Categorical(Distribution):
    """One of K categories, P(k) = probs[k] (normalised) or softmax(logits)[k]."""

    arg_constraints = {"probs": "simplex", "logits": "real_vector"}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndimension() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    @lazy_property
    def logits(self):
        """log(probs), the probabilities clamped away from 0 and 1."""
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        """softmax(logits)."""
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        """nan: categories have no mean."""
        return creation.full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    @property
    def mode(self):
        """The most probable category."""
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        """nan: categories have no variance."""
        return creation.full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    def sample(self, sample_shape=EMPTY_SHAPE):
        """Categories drawn with multinomial (with replacement), as torch draws them."""
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        samples_2d = multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        """logits[value]: the normalised log-probability of each category in value."""
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        """-sum over k of p_k log p_k."""
        min_real = dtypes.finfo(self.logits.dtype).min
        logits = self.logits.clamp(min=min_real)
        p_log_p = logits * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand=True):
        """The categories 0..K-1, shaped (K, 1, ...) (expanded over batch_shape)."""
        values = creation.arange(self._num_events, dtype=dtypes.long)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values
