"""freeing_log: the saved tensors each backward call frees, node by node, as the engine runs."""

import torch

import mini_autograd as ma
from mini_autograd.instruments import memory


def _graph(lib):
    x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
    w = lib.tensor([[1.0, 2.0, 3.0], [0.0, 1.0, -1.0]], requires_grad=True)
    return (w @ x).tanh().pow(2).sum()


def _freed(log):
    return {
        (node, attribute): n
        for _, nodes in log.calls
        for node, saved in nodes
        for attribute, n in saved
    }


def test_it_frees_every_tensor_torchs_graph_saves():
    loss = _graph(ma)
    with ma.freeing_log() as log:
        loss.backward()
    torch_saved = {
        (r.node, r.attribute): r.nbytes for r in memory.saved_tensors([_graph(torch)]).rows
    }
    assert _freed(log) == torch_saved and log.freed_bytes == sum(torch_saved.values()) > 0
    assert memory.saved_bytes([loss]) == 0


def test_nodes_come_in_the_engine_order_and_retain_graph_frees_nothing():
    loss = _graph(ma)
    with ma.freeing_log() as log:
        loss.backward(retain_graph=True)
        loss.backward()
    (first, nothing), (second, nodes) = log.calls
    assert (first.number + 1, nothing) == (second.number, [])
    assert [name for name, _ in nodes] == ["PowBackward0", "TanhBackward0", "MvBackward0"]
    assert nodes[0][1] == [("self", 8)]
    text = repr(log)
    assert f"{first}: freed 0 bytes" in text and "PowBackward0" in text


def test_nothing_is_watched_outside_the_block():
    with ma.freeing_log() as log:
        pass
    _graph(ma).backward()
    assert (log.calls, repr(log)) == ([], "no backward call")
