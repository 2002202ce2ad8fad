"""The seed scenarios, run on torch and mini_autograd with shared weights: same errors, same numbers."""

import numpy as np
import pytest
import torch

import mini_autograd as ma

FREED = "Trying to backward through the graph a second time"
LIBS = [torch, ma]


def outcome(fn):
    """('ok', value) or (error type name, message) for comparing the two libraries."""
    try:
        return ("ok", fn())
    except RuntimeError as error:
        return ("RuntimeError", str(error))


def two_losses(lib, x0, retain):
    x = lib.tensor(x0, requires_grad=True)
    z = x**2 * 4
    loss1, loss2 = z.mean(), z.sum()
    loss1.backward(retain_graph=retain)
    loss2.backward()
    return x.grad.numpy().copy()


@pytest.mark.parametrize("retain", [False, True])
def test_two_losses(retain):
    x0 = np.random.default_rng(0).standard_normal((1, 4)).astype(np.float32)
    results = [outcome(lambda lib=lib: two_losses(lib, x0, retain)) for lib in LIBS]
    if retain:
        assert results[0][0] == results[1][0] == "ok"
        np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)
    else:
        assert results[0] == results[1] and results[0][1].startswith(FREED)


def regression_loop(lib, x0, noise, weights, input_requires_grad, epochs=3):
    """The seed's linear regression whose input (and so its target) requires grad."""
    x = lib.tensor(x0, requires_grad=input_requires_grad)
    y = 1 + 2 * x + 0.3 * lib.tensor(noise)
    x_train, y_train = x[:70], y[:70]
    model = lib.nn.Linear(1, 1)
    model.load_state_dict(weights)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for epoch in range(epochs):
        loss = lib.nn.functional.mse_loss(model(x_train), y_train)
        optimizer.zero_grad()
        try:
            loss.backward()
        except RuntimeError as error:
            return epoch, str(error), losses
        optimizer.step()
        losses.append(loss.item())
    return epochs, None, losses


@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_input_requires_grad_loop(input_requires_grad):
    rng = np.random.default_rng(1)
    x0, noise = (
        rng.standard_normal((100, 1), dtype=np.float32),
        rng.standard_normal((100, 1), dtype=np.float32),
    )
    weights = torch.nn.Linear(1, 1).state_dict()
    got = [regression_loop(lib, x0, noise, weights, input_requires_grad) for lib in LIBS]
    assert got[0][:2] == got[1][:2]
    np.testing.assert_allclose(got[0][2], got[1][2], rtol=1e-5)
    if input_requires_grad:
        assert got[0][0] == 1 and got[0][1].startswith(FREED)  # fails at the second epoch
    else:
        assert got[0][0] == 3 and got[0][1] is None


def lstm_loop(lib, seq, weights, fix, steps=3):
    """The seed's LSTM that keeps its hidden state across iterations; `fix` names the variant."""
    lstm = lib.nn.LSTM(1, 6)
    lstm.load_state_dict(weights)
    optimizer = lib.optim.SGD(lstm.parameters(), lr=0.1)
    hidden = (lib.zeros(1, 1, 6, requires_grad=True), lib.zeros(1, 1, 6, requires_grad=True))
    losses = []
    for step in range(steps):
        if fix == "reinit":
            hidden = (lib.zeros(1, 1, 6), lib.zeros(1, 1, 6))
        elif fix == "detach":
            hidden = (hidden[0].detach(), hidden[1].detach())
        out, hidden = lstm(lib.tensor(seq), hidden)
        loss = (out**2).mean()
        optimizer.zero_grad()
        try:
            loss.backward(retain_graph=fix == "retain_graph")
        except RuntimeError as error:
            return step, str(error).split(":")[0], losses
        optimizer.step()
        losses.append(loss.item())
    return steps, None, losses


@pytest.mark.parametrize("fix", ["none", "reinit", "detach", "retain_graph"])
def test_lstm_hidden_state_carried(fix):
    seq = np.random.default_rng(2).standard_normal((10, 1, 1)).astype(np.float32)
    weights = torch.nn.LSTM(1, 6).state_dict()
    got = [lstm_loop(lib, seq, weights, fix) for lib in LIBS]
    assert got[0][:2] == got[1][:2]
    np.testing.assert_allclose(got[0][2], got[1][2], rtol=1e-4)
    expected = {
        "none": (
            1,
            FREED
            + " (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.",
        ),
        "reinit": (3, None),
        "detach": (3, None),
        "retain_graph": (
            1,
            "one of the variables needed for gradient computation has been modified by an inplace operation",
        ),
    }[fix]
    assert got[0][:2] == expected
