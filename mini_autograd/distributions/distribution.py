"""Distribution, the base of the distributions (torch.distributions.distribution, ported,
BSD-3-Clause): shapes, sample through rsample, and the repr."""

from ..core.grad_mode import no_grad
from ..core.tensor_data import Size

EMPTY_SHAPE = Size()  # the default sample shape (a Size is immutable: shared safely)


class Distribution:
    """A distribution with `batch_shape` independent copies of an `event_shape` event."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__
    arg_constraints = {}

    @staticmethod
    def set_default_validate_args(value):
        """Accepted, as in torch (mini_autograd does not validate arguments)."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=EMPTY_SHAPE, event_shape=EMPTY_SHAPE, validate_args=None):
        self._batch_shape = batch_shape
        self._event_shape = event_shape
        if validate_args is not None:
            self._validate_args = validate_args

    @property
    def batch_shape(self):
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def stddev(self):
        """The standard deviation: sqrt(variance)."""
        return self.variance.sqrt()

    def sample(self, sample_shape=EMPTY_SHAPE):
        """A sample of shape sample_shape + batch_shape + event_shape, outside the graph."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=EMPTY_SHAPE):
        """A reparameterized sample (gradients flow to the parameters)."""
        raise NotImplementedError

    def sample_n(self, n):
        """n samples (deprecated in torch: sample((n,)))."""
        return self.sample(Size((n,)))

    def log_prob(self, value):
        """The log of the probability density/mass at value."""
        raise NotImplementedError

    def entropy(self):
        """The entropy, batched over batch_shape."""
        raise NotImplementedError

    def perplexity(self):
        """exp(entropy)."""
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=EMPTY_SHAPE):
        """sample_shape + batch_shape + event_shape."""
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(sample_shape + self._batch_shape + self._event_shape)

    def __repr__(self):
        param_names = [k for k in self.arg_constraints if k in self.__dict__]
        args_string = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in param_names
        )
        return self.__class__.__name__ + "(" + args_string + ")"
