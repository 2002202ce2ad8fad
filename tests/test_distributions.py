"""torch.distributions' Categorical, Normal and Bernoulli against torch: the same samples after
the same seed, log_prob, entropy and their gradients, the other properties, reprs, and the
errors of the constructors."""

import numpy as np
import pytest
import torch

import mini_autograd as ma
from tests.parity_helpers import LIBS, assert_close, error_of


def _categorical(lib):
    logits = lib.randn(4, 3, requires_grad=True)
    dist = lib.distributions.Categorical(logits=logits)
    action = dist.sample()
    log_prob, entropy = dist.log_prob(action), dist.entropy()
    (log_prob.sum() + entropy.sum()).backward()
    by_probs = lib.distributions.Categorical(probs=lib.softmax(lib.randn(3), 0) * 2)
    values = [action, log_prob, entropy, logits.grad, dist.sample((2,)), dist.probs, dist.mode]
    values += [dist.enumerate_support(), dist.mean, by_probs.sample((5,)), by_probs.logits]
    values += [by_probs.log_prob(lib.tensor(1)), by_probs.probs]
    return [repr(dist), repr(by_probs), tuple(dist.batch_shape)], values


def _normal(lib):
    loc = lib.randn(3, requires_grad=True)
    scale = (lib.rand(3) + 0.5).requires_grad_()
    dist = lib.distributions.Normal(loc, scale)
    x = dist.rsample()
    log_prob = dist.log_prob(x)
    (log_prob.sum() + dist.entropy().sum()).backward()
    scalar = lib.distributions.Normal(0.0, 2.0)
    values = [x, dist.sample((2,)), log_prob, loc.grad, scale.grad, dist.cdf(lib.zeros(3))]
    values += [dist.variance, dist.stddev, scalar.sample((3,)), scalar.log_prob(lib.tensor(0.5))]
    return [repr(dist), repr(scalar), tuple(dist.batch_shape), tuple(scalar.batch_shape)], values


def _bernoulli(lib):
    probs = lib.tensor([0.2, 0.7], requires_grad=True)
    dist = lib.distributions.Bernoulli(probs=probs)
    log_prob = dist.log_prob(lib.tensor([1.0, 0.0]))
    (log_prob.sum() + dist.entropy().sum()).backward()
    by_logits = lib.distributions.Bernoulli(logits=0.3)
    values = [dist.sample((3,)), log_prob, probs.grad, dist.logits, dist.variance]
    values += [by_logits.probs, by_logits.sample((4,)), dist.enumerate_support()]
    return [repr(dist), repr(by_logits), tuple(by_logits.batch_shape)], values


@pytest.mark.parametrize("case", [_categorical, _normal, _bernoulli])
def test_distribution_matches_torch(case):
    got = {}
    for lib in LIBS:
        lib.manual_seed(0)
        texts, values = case(lib)
        got[lib] = [t.replace("mini_autograd", "torch") for t in map(str, texts)], values
    assert got[ma][0] == got[torch][0]
    for k, (mine, theirs) in enumerate(zip(got[ma][1], got[torch][1], strict=True)):
        assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], k
        if np.isnan(theirs.detach().numpy()).any():
            np.testing.assert_array_equal(mine.detach().numpy(), theirs.detach().numpy())
        else:
            assert_close(mine, theirs, f"value {k}", rtol=1e-6, atol=1e-7)


ERRORS = {
    "Categorical: neither": lambda lib: lib.distributions.Categorical(),
    "Categorical: both": lambda lib: lib.distributions.Categorical(lib.ones(2), lib.ones(2)),
    "Categorical: scalar probs": lambda lib: lib.distributions.Categorical(lib.tensor(1.0)),
    "Categorical: scalar logits": lambda lib: lib.distributions.Categorical(logits=lib.tensor(1.0)),
    "Bernoulli: neither": lambda lib: lib.distributions.Bernoulli(),
    "Normal: a string": lambda lib: lib.distributions.Normal("0", 1.0),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors_match_torch(case):
    expected = error_of(ERRORS[case], torch)
    assert expected is not None, "torch accepts this: the case is wrong"
    assert error_of(ERRORS[case], ma) == expected
