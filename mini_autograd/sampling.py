"""Random numbers written into an existing tensor (`uniform_`, `normal_`, `bernoulli_`,
`exponential_`, `random_`) and `multinomial` sampling, with torch's numbers for the same seed.

In place like `fill_`: the tensor's version moves on, and a tensor in the graph gets torch's node
for the fill (`UniformBackward0`...), whose gradient is zero: the new values do not depend on the
old ones."""

import numpy as np

from .core.tensor import Tensor
from .ops.derivatives import BernoulliBackward1, ZeroBackward0
from .ops.inplace import _fill
from .random import default_generator


class UniformBackward0(ZeroBackward0):
    """self.uniform_(a, b):  d self = 0."""

    __slots__ = ()


class NormalBackward0(ZeroBackward0):
    """self.normal_(mean, std):  d self = 0."""

    __slots__ = ()


class BernoulliBackward2(ZeroBackward0):
    """self.bernoulli_(p), p a number:  d self = 0."""

    __slots__ = ()


class ExponentialBackward0(ZeroBackward0):
    """self.exponential_(lambd):  d self = 0."""

    __slots__ = ()


class RandomBackward0(ZeroBackward0):
    """self.random_(from, to):  d self = 0."""

    __slots__ = ()


class RandomBackward1(ZeroBackward0):
    """self.random_(to):  d self = 0."""

    __slots__ = ()


class RandomBackward2(ZeroBackward0):
    """self.random_():  d self = 0."""

    __slots__ = ()


def _source(generator):
    return default_generator if generator is None else generator


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    """Fill with uniform samples in [a, b)."""
    values = _source(generator).uniform(self._data.shape, a, b, self._data.dtype)
    return _fill(self, values, UniformBackward0)


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with normal samples of the given mean and std."""
    values = _source(generator).normal(self._data.shape, mean, std, self._data.dtype)
    return _fill(self, values, NormalBackward0)


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 1 (probability p) or 0."""
    if isinstance(p, Tensor):
        u = _source(generator).uniform(self._data.shape, 0.0, 1.0, p._data.dtype)
        return _fill(self, u < p._data, BernoulliBackward1, p, args=p._data.shape)
    values = _source(generator).bernoulli(self._data.shape, p, self._data.dtype)
    return _fill(self, values, BernoulliBackward2)


def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with exponential samples of rate lambd: -log(1 - u) / lambd."""
    u = _source(generator)._unit(self._data.size, np.float64).reshape(self._data.shape)
    return _fill(self, -np.log1p(-u) / lambd, ExponentialBackward0)


def random_(self, from_=0, to=None, *, generator=None):
    """Fill with integers in [from, to); random_(to) is [0, to); random_() the dtype's range."""
    node_type = RandomBackward0
    if to is None and from_ != 0:
        from_, to, node_type = 0, from_, RandomBackward1
    if to is None:  # every integer the dtype holds exactly: 2**24 + 1 values for float32
        mantissa = {np.float16: 11, np.float32: 24, np.float64: 53}.get(self._data.dtype.type)
        to = 2**mantissa + 1 if mantissa else np.iinfo(self._data.dtype).max
        node_type = RandomBackward2
    values = _source(generator).integers(self._data.shape, int(from_), int(to))
    return _fill(self, values, node_type)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Indices drawn with the probabilities in each row of input (which need not sum to 1)."""
    probabilities = input._data
    if probabilities.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    rows = probabilities.reshape(-1, probabilities.shape[-1])
    if (rows < 0).any() or not np.isfinite(rows).all():
        raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
    if not replacement and num_samples > rows.shape[1]:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    source = _source(generator)
    if not replacement or num_samples == 1:
        # torch's fast path: argmax (or top-k) of p / q with q exponential, the Gumbel trick
        u = source._unit(rows.size, np.float64).reshape(rows.shape)
        q = (-np.log1p(-u)).astype(rows.dtype)
        order = np.argsort(-(rows / q), axis=-1, kind="stable")
        samples = order[:, :num_samples]
    else:  # a binary search of one float64 uniform per sample in the normalised running sum
        cumulative = np.cumsum(rows, axis=-1, dtype=rows.dtype)
        cumulative /= cumulative[:, -1:]
        cumulative[:, -1] = 1
        u = source._unit(rows.shape[0] * num_samples, np.float64).reshape(-1, num_samples)
        samples = np.stack([np.searchsorted(c, s, side="left") for c, s in zip(cumulative, u)])
    samples = samples.astype(np.int64)
    return Tensor._make(samples.reshape(*probabilities.shape[:-1], num_samples))


TENSOR_METHODS = {
    "uniform_": uniform_,
    "normal_": normal_,
    "bernoulli_": bernoulli_,
    "exponential_": exponential_,
    "random_": random_,
    "multinomial": multinomial,
}
