"""Probability distributions, as in torch.distributions: Distribution, Categorical, Normal,
Bernoulli, with PyTorch's sampling (the same random numbers after the same seed), log_prob,
entropy and reprs.

Ported from PyTorch's torch/distributions (BSD-3-Clause, Copyright (c) PyTorch contributors).
Not built: the other distributions, `constraints`, `kl_divergence`, transforms, and argument
validation (validate_args is accepted; valid arguments behave as in torch, invalid ones are not
refused).
"""

from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .normal import Normal

__all__ = ["Bernoulli", "Categorical", "Distribution", "Normal"]
