"""The seeds' three programs on torch, mini_autograd and the learner's complete engine.

Written once against the API the three share (no nn, no optim: the learner's engine has
neither), each program raises the same error text on all three, and its fixes work on all three
with the same numbers.
"""

import numpy as np
import pytest
import torch

import mini_autograd as ma
from course import engine_file

MINE, _, _ = engine_file.load(engine_file.REFERENCE)
LIBS = {"torch": torch, "mini_autograd": ma, "my_autograd": MINE}
FREED = MINE.FREED_MESSAGE
RNG = np.random.default_rng(7)
X0 = RNG.standard_normal((1, 4)).astype(np.float32)
DATA = RNG.standard_normal((100, 1)).astype(np.float32)
NOISE = RNG.standard_normal((100, 1)).astype(np.float32)
W_IH, W_HH = (RNG.standard_normal(s).astype(np.float32) * 0.5 for s in [(6, 1), (6, 6)])
SEQ = RNG.standard_normal((10, 1, 1)).astype(np.float32)


def outcome(program, *args):
    """(result or None, error text or None)."""
    try:
        return program(*args), None
    except RuntimeError as error:
        return None, str(error)


def two_losses(lib, retain):
    """Seed 1: two losses on one graph, each with its own backward."""
    x = lib.tensor(X0, requires_grad=True)
    z = x**2 * 4
    loss1, loss2 = z.mean(), z.sum()
    loss1.backward(retain_graph=retain)
    loss2.backward()
    return x.grad.numpy().copy()


def two_losses_summed(lib):
    """The fix without retain_graph: one backward of the sum."""
    x = lib.tensor(X0, requires_grad=True)
    z = x**2 * 4
    (z.mean() + z.sum()).backward()
    return x.grad.numpy().copy()


def sgd_step(lib, params, lr=0.1):
    """One plain SGD step, then the gradients zeroed."""
    with lib.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad.zero_()


def regression(lib, fix, epochs=3):
    """Seed 2: the target is computed, outside the loop, from an input that requires grad."""
    x = lib.tensor(DATA, requires_grad=fix != "input without grad")
    if fix == "target under no_grad":
        with lib.no_grad():
            y = 1 + 2 * x + 0.3 * lib.tensor(NOISE)
    else:
        y = 1 + 2 * x + 0.3 * lib.tensor(NOISE)
    if fix == "detach the target":
        y = y.detach()
    w, b = lib.zeros(1, 1, requires_grad=True), lib.zeros(1, requires_grad=True)
    losses = []
    for _ in range(epochs):
        loss = ((x[:70] @ w + b - y[:70]) ** 2).mean()
        loss.backward()
        sgd_step(lib, (w, b))
        losses.append(loss.item())
    return losses


def rnn_loop(lib, fix, steps=3):
    """Seed 3: a recurrent hidden state carried from one iteration to the next."""
    w_ih, w_hh = lib.tensor(W_IH, requires_grad=True), lib.tensor(W_HH, requires_grad=True)
    h = lib.zeros(1, 6)
    losses = []
    for _ in range(steps):
        if fix == "detach":
            h = h.detach()
        elif fix == "re-initialise":
            h = lib.zeros(1, 6)
        for t in range(len(SEQ)):
            h = (lib.tensor(SEQ[t]) @ w_ih.t() + h @ w_hh.t()).tanh()
        loss = (h * h).mean()
        loss.backward()
        sgd_step(lib, (w_ih, w_hh))
        losses.append(loss.item())
    return losses


def run_everywhere(program, *args):
    return {name: outcome(program, lib, *args) for name, lib in LIBS.items()}


def assert_same_numbers(results):
    values = [r for r, _ in results.values()]
    for value in values[1:]:
        np.testing.assert_allclose(value, values[0], rtol=1e-5)


def test_two_losses_raise_pytorchs_error_everywhere():
    results = run_everywhere(two_losses, False)
    assert {error for _, error in results.values()} == {FREED}


@pytest.mark.parametrize("fix", ["retain_graph", "one backward of the sum"])
def test_two_losses_fixes_work_everywhere(fix):
    results = (
        run_everywhere(two_losses, True)
        if fix == "retain_graph"
        else run_everywhere(two_losses_summed)
    )
    assert all(error is None for _, error in results.values())
    assert_same_numbers(results)


def test_target_from_an_input_that_requires_grad_fails_everywhere():
    results = run_everywhere(regression, "none")
    assert {error for _, error in results.values()} == {FREED}


@pytest.mark.parametrize("fix", ["input without grad", "target under no_grad", "detach the target"])
def test_target_fixes_work_everywhere(fix):
    results = run_everywhere(regression, fix)
    assert all(error is None for _, error in results.values()), results
    assert_same_numbers(results)
    losses = results["my_autograd"][0]
    assert losses[-1] < losses[0]


def test_carried_hidden_state_fails_everywhere():
    results = run_everywhere(rnn_loop, "none")
    assert {error for _, error in results.values()} == {FREED}


@pytest.mark.parametrize("fix", ["detach", "re-initialise"])
def test_hidden_state_fixes_work_everywhere(fix):
    results = run_everywhere(rnn_loop, fix)
    assert all(error is None for _, error in results.values()), results
    assert_same_numbers(results)
