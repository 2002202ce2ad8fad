"""The saved-memory ledger: one function counts what a graph holds, in mini_autograd and in torch."""

import numpy as np
import pytest
import torch

import mini_autograd as ma
from mini_autograd.memory import Ledger, saved_bytes, saved_tensors

LIBS = pytest.mark.parametrize("lib", [ma, torch], ids=["mini_autograd", "torch"])
STEPS = 6


def two_losses(lib):
    x = lib.tensor(np.arange(4.0).reshape(1, 4), requires_grad=True)
    z = x**2 * 4
    return z.mean(), z.sum()


@LIBS
def test_the_two_losses_graph_holds_x_and_the_scalar_4(lib):
    loss1, loss2 = two_losses(lib)
    rows = saved_tensors([loss1, loss2]).rows
    assert [(r.node, r.attribute, r.shape, r.freed) for r in rows] == [
        ("MulBackward0", "other", (), False),
        ("PowBackward0", "self", (1, 4), False),
    ]
    assert saved_bytes([loss1, loss2]) == 8 + 4 * 8


@LIBS
def test_bytes_drop_to_zero_after_backward(lib):
    loss1, loss2 = two_losses(lib)
    loss1.backward()
    assert saved_bytes([loss1, loss2]) == 0
    assert all(row.freed for row in saved_tensors(loss2).rows)


@LIBS
def test_bytes_stay_with_retain_graph(lib):
    loss1, loss2 = two_losses(lib)
    before = saved_bytes(loss2)
    loss1.backward(retain_graph=True)
    assert saved_bytes(loss2) == before > 0


@LIBS
def test_a_tensor_saved_twice_is_counted_once(lib):
    x = lib.tensor(np.ones(4), requires_grad=True)
    rows = saved_tensors(x * x).rows
    assert [(r.attribute, r.nbytes, r.shared) for r in rows] == [
        ("other", 32, False),
        ("self", 32, True),
    ]
    assert saved_bytes(x * x) == 32


def rnn_loop(lib, carry, retain_graph):
    """h = tanh(h @ W + x_t) over STEPS steps; the ledger records after each backward."""
    lib.manual_seed(0)
    w = lib.randn(8, 8, requires_grad=True)
    xs = lib.randn(STEPS, 1, 8)
    h = lib.zeros(1, 8)
    ledger = Ledger(f"carry={carry}, retain_graph={retain_graph}")
    for x_t in xs:
        with ledger.step():
            h = (h @ w + x_t).tanh()
            loss = h.sum()
            loss.backward(retain_graph=retain_graph)
            ledger.record(loss)
        if not carry:
            h = h.detach()
    return ledger


@LIBS
def test_the_correct_loop_holds_nothing_after_each_backward(lib):
    ledger = rnn_loop(lib, carry=False, retain_graph=False)
    assert [row.saved_bytes for row in ledger.rows] == [0] * STEPS


@LIBS
def test_retain_graph_without_carrying_holds_one_step(lib):
    held = [row.saved_bytes for row in rnn_loop(lib, carry=False, retain_graph=True).rows]
    assert held[1:] == [held[1]] * (STEPS - 1) and held[1] > 0


def assert_linear(held):
    """Each step adds the same bytes, so step k holds about k times what one step adds."""
    growth = np.diff(held[1:])
    assert growth[0] > 0 and (growth == growth[0]).all()
    for k, value in enumerate(held, start=1):
        assert (k - 1) * growth[0] < value <= k * growth[0] + held[0] + held[1]


@LIBS
def test_a_carried_hidden_state_with_retain_graph_grows_linearly(lib):
    ledger = rnn_loop(lib, carry=True, retain_graph=True)
    assert_linear([row.saved_bytes for row in ledger.rows])
    assert all(row.seconds is not None for row in ledger.rows)


@LIBS
def test_a_carried_lstm_state_with_retain_graph_grows_linearly(lib):
    lib.manual_seed(0)
    cell = lib.nn.LSTMCell(3, 5)
    xs = lib.randn(STEPS, 2, 3)
    state, ledger = None, Ledger()
    for x_t in xs:
        h, c = state = cell(x_t, state)
        h.sum().backward(retain_graph=True)
        ledger.record(h, c)
    assert_linear([row.saved_bytes for row in ledger.rows])
    assert all(row.seconds is None for row in ledger.rows)  # recorded outside ledger.step()


def test_both_libraries_count_the_same_bytes():
    held = [[row.saved_bytes for row in rnn_loop(lib, True, True).rows] for lib in (ma, torch)]
    assert held[0] == held[1]


def test_table_and_plot():
    ledger = rnn_loop(ma, carry=True, retain_graph=True)
    lines = ledger.table().splitlines()
    assert lines[:3] == ["carry=True, retain_graph=True:", "step  saved bytes", "   1           64"]
    assert len(lines) == 2 + STEPS
    pytest.importorskip("matplotlib").use("Agg")
    axes = ledger.plot()
    assert [len(ax.lines) for ax in axes] == [1, 1]
