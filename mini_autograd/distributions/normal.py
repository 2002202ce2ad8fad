"""Normal (torch.distributions.normal, ported, BSD-3-Clause)."""

import math
import numbers

from .. import creation
from ..core.grad_mode import no_grad
from ..core.tensor_data import Size
from .distribution import EMPTY_SHAPE, Distribution
from .utils import broadcast_all


class Normal(Distribution):
    """The normal distribution N(loc, scale^2)."""

    arg_constraints = {"loc": "real", "scale": "positive"}
    has_rsample = True

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        if isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number):
            batch_shape = Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def sample(self, sample_shape=EMPTY_SHAPE):
        """normal(loc, scale) of the extended shape, outside the graph."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return creation.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=EMPTY_SHAPE):
        """loc + eps * scale, eps standard normal: gradients flow to loc and scale."""
        shape = self._extended_shape(sample_shape)
        eps = creation.empty(shape, dtype=self.loc.dtype).normal_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        """-(value - loc)^2 / (2 scale^2) - log(scale) - log(sqrt(2 pi))."""
        var = self.scale**2
        log_scale = (
            math.log(self.scale) if isinstance(self.scale, numbers.Number) else self.scale.log()
        )
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        """(1 + erf((value - loc) / (scale sqrt(2)))) / 2."""
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)).erf())

    def entropy(self):
        """1/2 + log(2 pi) / 2 + log(scale)."""
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
