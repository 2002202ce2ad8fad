"""Gradient checks by finite differences (float64), for every op of the catalogue.

These use mini_autograd alone: the gradient backward computes must agree with central
differences of the forward pass, and so must the Hessian-vector product that create_graph=True
gives (central differences of the gradient along a random direction).
"""

import numpy as np
import pytest
from op_catalogue import OPS
from parity_helpers import first_output, random_arrays, weights_like

import mini_autograd as ma

EPS = 1e-6


def loss_fn(op, w):
    """The scalar loss (op(*x) * w).sum() of numpy inputs, as a float (forward only)."""

    def loss(arrays):
        with ma.no_grad():
            xs = [ma.tensor(a, dtype=ma.float64) for a in arrays]
            return float((first_output(op.fn(ma, *xs)) * w).sum().item())

    return loss


def autograd_grads(op, arrays, w, create_graph=False):
    """d loss / d inputs from mini_autograd's backward (all inputs require grad)."""
    xs = [ma.tensor(a, dtype=ma.float64, requires_grad=True) for a in arrays]
    loss = (first_output(op.fn(ma, *xs)) * w).sum()
    return xs, ma.autograd.grad(loss, xs, create_graph=create_graph, allow_unused=True)


def weights(op, arrays):
    with ma.no_grad():
        y = first_output(op.fn(ma, *[ma.tensor(a, dtype=ma.float64) for a in arrays]))
    return ma.tensor(weights_like(y), dtype=ma.float64)


@pytest.mark.parametrize("op", OPS, ids=[op.id for op in OPS])
def test_first_derivatives_by_finite_differences(op):
    arrays = random_arrays(op.shapes, op.domain)
    w = weights(op, arrays)
    loss = loss_fn(op, w)
    _, grads = autograd_grads(op, arrays, w)
    for i, (a, g) in enumerate(zip(arrays, grads)):
        numeric = np.zeros(a.shape)
        for index in np.ndindex(a.shape):
            plus = [x.copy() for x in arrays]
            minus = [x.copy() for x in arrays]
            plus[i][index] += EPS
            minus[i][index] -= EPS
            numeric[index] = (loss(plus) - loss(minus)) / (2 * EPS)
        actual = np.zeros(a.shape) if g is None else g.numpy()
        np.testing.assert_allclose(actual, numeric, rtol=1e-5, atol=1e-6, err_msg=f"input {i}")


@pytest.mark.parametrize("op", OPS, ids=[op.id for op in OPS])
def test_hessian_vector_products_by_finite_differences(op):
    """H v from create_graph=True against (grad(x + eps v) - grad(x - eps v)) / (2 eps)."""
    arrays = random_arrays(op.shapes, op.domain)
    w = weights(op, arrays)
    rng = np.random.default_rng(3)
    v = [rng.standard_normal(a.shape) for a in arrays]
    xs, grads = autograd_grads(op, arrays, w, create_graph=True)
    terms = [
        (g * ma.tensor(vi)).sum() for g, vi in zip(grads, v) if g is not None and g.requires_grad
    ]
    if terms:
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        hv = ma.autograd.grad(total, xs, allow_unused=True)
    else:  # the gradient does not depend on the inputs: the Hessian is zero
        hv = [None] * len(xs)
    eps = 1e-5

    def grads_at(sign):
        shifted = [a + sign * eps * vi for a, vi in zip(arrays, v)]
        return [
            np.zeros(a.shape) if g is None else g.numpy()
            for a, g in zip(arrays, autograd_grads(op, shifted, w)[1])
        ]

    numeric = [(p - m) / (2 * eps) for p, m in zip(grads_at(1), grads_at(-1))]
    for i, (a, h, n) in enumerate(zip(arrays, hv, numeric)):
        actual = np.zeros(a.shape) if h is None else h.numpy()
        np.testing.assert_allclose(actual, n, rtol=1e-4, atol=1e-5, err_msg=f"input {i}")
