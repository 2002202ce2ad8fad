"""The saved-memory ledger: one function counts what a graph holds, in mini_autograd and in torch."""

import numpy as np
import pytest
import torch

import mini_autograd as ma
from mini_autograd.instruments.memory import (
    Ledger,
    graph_storage_bytes,
    memory_in_use,
    memory_measure,
    saved_bytes,
    saved_tensors,
)

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


# --- memory_in_use: the figure an out-of-memory error is about ----------------------------------


@LIBS
def test_on_the_cpu_the_graph_holds_its_saved_tensors_and_its_leaves_once(lib):
    loss1, loss2 = two_losses(lib)  # x (32 bytes) is saved by PowBackward0 and is the leaf
    assert memory_in_use([loss1, loss2]) == graph_storage_bytes([loss1, loss2]) == 8 + 32
    loss1.backward()  # frees the saved tensors; the leaf x stays, held by AccumulateGrad
    assert saved_bytes([loss1, loss2]) == 0
    assert memory_in_use([loss1, loss2]) == 32


@LIBS
def test_a_leaf_that_nothing_saves_is_held_and_data_without_grad_is_not(lib):
    x = lib.tensor(np.ones((3, 5)), requires_grad=True)
    data = lib.tensor(np.ones((100, 5)))  # 4,000 bytes, no grad: the graph does not hold it
    total = (x + 1).sum() + data.sum()
    assert saved_bytes(total) == 0
    assert memory_in_use(total) == 3 * 5 * 8


def test_a_saved_view_counts_its_whole_storage():
    base = torch.zeros(10, 10, requires_grad=True)  # 400 bytes
    loss = (base[:2] * base[:2]).sum()  # two saved views into base's storage, one leaf: base
    assert memory_in_use(loss) == 400


def rnn_memory(lib, variant, steps=STEPS):
    """memory_in_use before each backward of a carried tanh RNN, for three ways of carrying."""
    lib.manual_seed(0)
    w = lib.randn(8, 8, requires_grad=True)
    xs = lib.randn(steps, 1, 8)
    h, held = lib.zeros(1, 8), []
    for x_t in xs:
        if variant == "detach":
            h = h.detach()
        elif variant == "re-init":
            h = lib.zeros(1, 8)
        h = (h @ w + x_t).tanh()
        loss = h.sum()
        held.append(memory_in_use(loss))
        loss.backward(retain_graph=variant == "retain_graph")
    return held


@LIBS
def test_blind_retain_graph_grows_linearly_and_the_fixes_stay_flat(lib):
    assert_linear(rnn_memory(lib, "retain_graph"))
    for fix in ("detach", "re-init"):
        held = rnn_memory(lib, fix)
        assert held == [held[0]] * STEPS and held[0] > 0, (fix, held)


def test_both_libraries_measure_the_same_memory_on_the_cpu():
    for variant in ("retain_graph", "detach"):
        assert rnn_memory(ma, variant) == rnn_memory(torch, variant)


def test_the_cpu_measure_says_what_it_counts():
    loss = torch.ones(2, requires_grad=True).sum()
    assert memory_measure(loss) == memory_measure() == "bytes of the storages the graph holds"
    assert memory_measure(device="cuda:0") == "torch.cuda.memory_allocated('cuda:0')"


def test_on_cuda_it_reads_the_allocator(monkeypatch):
    """Without a GPU: a CUDA device (named, or a root's) is sent to torch.cuda.memory_allocated."""
    asked = []
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda device: asked.append(device) or 512)
    assert memory_in_use(device="cuda") == 512
    fake_root = type("Root", (), {"grad_fn": None, "shape": (), "detach": None, "device": "cuda:1"})
    assert memory_in_use([[fake_root()]]) == 512
    assert asked == ["cuda", "cuda:1"]


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_a_gpu_a_retained_carried_graph_grows_the_allocated_memory():
    torch.manual_seed(0)
    cell = torch.nn.LSTMCell(64, 256).cuda()
    xs = torch.randn(STEPS, 32, 64, device="cuda")
    allocated = {}
    for variant in ("retain_graph", "detach"):
        state, held = None, []
        for x_t in xs:
            if variant == "detach" and state is not None:
                state = tuple(s.detach() for s in state)
            state = cell(x_t, state)
            loss = state[0].sum()
            held.append(memory_in_use(loss))
            assert held[-1] == torch.cuda.memory_allocated(loss.device)
            loss.backward(retain_graph=variant == "retain_graph")
        allocated[variant] = held
        del state, loss
    growth = np.diff(allocated["retain_graph"][1:])
    assert (growth > 0).all()
    assert np.ptp(allocated["detach"][1:]) < growth.min()
    assert memory_measure(xs) == "torch.cuda.memory_allocated('cuda:0')"
