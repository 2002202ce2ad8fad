"""smooth_l1_loss, huber_loss, one_hot and LeakyReLU(inplace) against torch."""

import numpy as np
import pytest
import torch

import mini_autograd as ma

DIFFS = np.array([[-2.5, -0.4, 0.0], [0.3, 1.0, 3.5]])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize(
    "loss, options",
    [("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}), ("huber_loss", {"delta": 2.0})],
)
def test_smooth_losses_match_torch(loss, options, reduction):
    def run(lib):
        x = lib.tensor(DIFFS, requires_grad=True)
        target = lib.tensor(np.full((2, 3), 0.1))
        out = getattr(lib.nn.functional, loss)(x, target, reduction=reduction, **options)
        saved = sorted(a for a in dir(out.grad_fn) if a.startswith("_saved_"))
        (out * 1.5).sum().backward()
        return out.tolist(), x.grad.tolist(), out.grad_fn.name(), saved

    got, want = run(ma), run(torch)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    assert got[2:] == want[2:]


def test_loss_modules():
    for lib in (torch, ma):
        assert repr(lib.nn.SmoothL1Loss()) == "SmoothL1Loss()"
        assert lib.nn.HuberLoss(delta=0.5)(lib.zeros(2), lib.ones(2)).item() == pytest.approx(0.375)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.nn.functional.one_hot(lib.tensor([0, 2, 1])),
        lambda lib: lib.nn.functional.one_hot(lib.tensor([[0], [2]]), 4),
        lambda lib: lib.nn.functional.one_hot(lib.tensor([0.0, 2.0])),
        lambda lib: lib.nn.functional.one_hot(lib.tensor([0, 5]), 3),
    ],
)
def test_one_hot_matches_torch(call):
    def outcome(lib):
        try:
            out = call(lib)
        except RuntimeError as error:
            return str(error)
        return out.tolist(), str(out.dtype).split(".")[-1]

    assert outcome(ma) == outcome(torch)


def test_leaky_relu_in_place():
    def run(lib):
        layer = lib.nn.LeakyReLU(0.2, inplace=True)
        x = lib.tensor([-1.0, 2.0])
        out = layer(x)
        return repr(layer), x.tolist(), out.tolist()

    assert run(ma) == run(torch)
