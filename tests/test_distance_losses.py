"""Distances and the losses built on them against torch: the layers (CosineSimilarity,
PairwiseDistance, KLDivLoss, TripletMarginLoss), kl_div's warning and its gradient for a target
that requires grad, torch.dropout, and the error texts. (Values, graphs and derivatives of the
functions: the catalogue, tests/op_catalogue_nn.py.)"""

import warnings

import numpy as np
import pytest
import torch

import mini_autograd as ma
from tests.parity_helpers import LIBS, assert_close, describe_graph, error_of

RNG = np.random.default_rng(3)
A, B, C = (RNG.standard_normal((5, 4)) for _ in range(3))
LAYERS = [
    ("CosineSimilarity", (), {}),
    ("CosineSimilarity", (0, 1e-6), {}),
    ("PairwiseDistance", (), {"p": 1.0, "keepdim": True}),
    ("KLDivLoss", (), {"reduction": "batchmean"}),
    ("KLDivLoss", (), {"reduction": "sum", "log_target": True}),
    ("TripletMarginLoss", (), {"margin": 0.3, "p": 1.0, "swap": True}),
]


@pytest.mark.parametrize("name, args, kwargs", LAYERS, ids=lambda v: str(v))
def test_layers_match_torch(name, args, kwargs):
    """repr, output, graph and gradients of the layer on float64 inputs."""
    got = {}
    for lib in LIBS:
        layer = getattr(lib.nn, name)(*args, **kwargs)
        xs = [lib.tensor(a, requires_grad=True) for a in (A, B, C)]
        if name == "KLDivLoss":
            xs[0] = lib.log_softmax(xs[0], 1)
            xs[1] = lib.log_softmax(xs[1], 1) if kwargs.get("log_target") else lib.softmax(xs[1], 1)
        out = layer(*xs[: 3 if name == "TripletMarginLoss" else 2])
        out.sum().backward()
        grads = [x.grad for x in xs if x.is_leaf]
        got[lib] = (repr(layer), describe_graph(out, values=False), [out, *grads])
    assert got[ma][:2] == got[torch][:2]
    for mine, theirs in zip(got[ma][2], got[torch][2], strict=True):
        assert_close(mine, theirs, name, rtol=1e-10, atol=1e-12)


def test_kl_div_mean_warns_as_torch_does():
    messages = {}
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.functional.kl_div(lib.zeros(2, 3), lib.ones(2, 3) / 3)
        messages[lib] = [(w.category, str(w.message)) for w in caught]
    assert messages[ma] == messages[torch] and len(messages[ma]) == 1


def test_kl_div_gradient_for_a_target_that_requires_grad():
    """xlogy(target, target): the target gets its gradient too (0 * log 0 = 0)."""
    target = np.where(B > 0, np.abs(B), 0.0)
    got = {}
    for lib in LIBS:
        x = lib.tensor(A, requires_grad=True)
        t = lib.tensor(target, requires_grad=True)
        loss = lib.nn.functional.kl_div(x, t, reduction="sum")
        loss.backward()
        got[lib] = [loss, x.grad, t.grad[target > 0]]
    for mine, theirs in zip(got[ma], got[torch], strict=True):
        assert_close(mine, theirs, "kl_div", rtol=1e-10)


def test_invert_matches_torch():
    for make in (lambda lib: lib.tensor([True, False]), lambda lib: lib.tensor([1, -3, 0])):
        mine, theirs = ~make(ma), ~make(torch)
        assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


def test_torch_dropout_is_f_dropout():
    got = {}
    for lib in LIBS:
        lib.manual_seed(5)
        got[lib] = [lib.dropout(lib.ones(3, 4), 0.4, True), lib.dropout(lib.ones(2), 0.4, False)]
    for mine, theirs in zip(got[ma], got[torch], strict=True):
        assert_close(mine, theirs, "dropout")


ERRORS = {
    "triplet_margin_loss: margin": lambda lib: lib.nn.functional.triplet_margin_loss(
        lib.zeros(2, 3), lib.zeros(2, 3), lib.zeros(2, 3), margin=0
    ),
    "triplet_margin_loss: dims": lambda lib: lib.nn.functional.triplet_margin_loss(
        lib.zeros(2, 3), lib.zeros(3), lib.zeros(2, 3)
    ),
    "TripletMarginLoss: margin": lambda lib: lib.nn.TripletMarginLoss(margin=-1),
    "cosine_similarity: shapes": lambda lib: lib.cosine_similarity(
        lib.zeros(2, 3), lib.zeros(3, 3)
    ),
    "kl_div: reduction": lambda lib: lib.nn.functional.kl_div(
        lib.zeros(2), lib.zeros(2), reduction="avg"
    ),
    "matmul: batch dims": lambda lib: lib.zeros(2, 3, 4) @ lib.zeros(3, 4, 5),
    "cross_entropy: label_smoothing": lambda lib: lib.nn.functional.cross_entropy(
        lib.zeros(2, 3), lib.tensor([0, 1]), label_smoothing=1.5
    ),
    "~ of a float tensor": lambda lib: ~lib.ones(2),
    "bitwise_not of a float tensor": lambda lib: lib.bitwise_not(lib.ones(2)),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors_match_torch(case):
    expected = error_of(ERRORS[case], torch)
    assert expected is not None, "torch accepts this: the case is wrong"
    assert error_of(ERRORS[case], ma) == expected
