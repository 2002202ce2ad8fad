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
        for attribute, n, _ in saved
    }


def test_it_frees_every_tensor_torchs_graph_saves():
    loss = _graph(ma)
    with ma.freeing_log() as log:
        loss.backward()
    torch_saved = {
        (r.node, r.attribute): r.nbytes for r in memory.saved_tensors([_graph(torch)]).rows
    }
    assert _freed(log) == torch_saved and memory.saved_bytes([loss]) == 0


def test_nodes_come_in_the_engine_order_and_retain_graph_frees_nothing():
    loss = _graph(ma)
    with ma.freeing_log() as log:
        loss.backward(retain_graph=True)
        loss.backward()
    (first, nothing), (second, nodes) = log.calls
    assert (first.number + 1, nothing) == (second.number, [])
    assert [name for name, _ in nodes] == ["PowBackward0", "TanhBackward0", "MvBackward0"]
    assert nodes[0][1] == [("self", 8, False)]  # tanh's result: TanhBackward0 still holds it
    text = repr(log)
    assert f"{first}: freed 0 bytes" in text and "PowBackward0" in text


def test_nothing_is_watched_outside_the_block():
    with ma.freeing_log() as log:
        pass
    _graph(ma).backward()
    assert (log.calls, repr(log)) == ([], "no backward call")


def test_memory_the_program_still_holds_is_not_counted_as_freed():
    x = ma.tensor([0.5, -1.0, 2.0], requires_grad=True)  # a leaf: the program keeps it
    kept = (x * 2).exp()  # the program keeps the exp's result, which ExpBackward0 saved
    loss = (kept * kept.tanh()).sum()  # kept is saved by MulBackward0 as well
    with ma.freeing_log() as log:
        loss.backward()
    [(_, nodes)] = log.calls
    assert nodes == [
        # tanh's result is held by TanhBackward0 too, which has not run yet; `kept` by the program
        ("MulBackward0", [("other", 12, False), ("self", 12, False)]),
        ("TanhBackward0", [("result", 12, True)]),  # its last holder: the memory comes back
        ("ExpBackward0", [("result", 12, False)]),  # `kept`
        ("MulBackward0", [("other", 8, True)]),  # the number 2, held by the graph alone
    ]
    assert log.freed_bytes == 12 + 8
    assert "freed 20 bytes (36 still held)" in repr(log) and "self (12 B, still held" in repr(log)


def test_memory_comes_back_when_the_last_holder_lets_go():
    x = ma.tensor([0.5, -1.0, 2.0], requires_grad=True)
    loss = ((x * 2).exp() * 3).sum()  # the exp's result is held by the graph alone
    with ma.freeing_log() as log:
        loss.backward()
    [(_, nodes)] = log.calls
    assert ("ExpBackward0", [("result", 12, True)]) in nodes


def test_what_a_pack_hook_made_is_watched_inside_its_tuple():
    x = ma.tensor([0.5, -1.0, 2.0], requires_grad=True)
    keep_itself = ma.autograd.graph.saved_tensors_hooks(lambda t: ("as is", t), lambda p: p[1])
    keep_a_copy = ma.autograd.graph.saved_tensors_hooks(lambda t: ("copy", t * 1), lambda p: p[1])
    with keep_itself:
        itself = (x * x).sum()  # the tuple holds x, which the program keeps
    with keep_a_copy:
        copied = (x * x).sum()  # the tuple holds a copy, which only the graph keeps
    with ma.freeing_log() as log:
        itself.backward()
        copied.backward()
    (_, [(_, held)]), (_, [(_, freed)]) = log.calls
    assert held == [("other", 12, False), ("self", 12, False)]
    assert freed == [("other", 12, True), ("self", 12, True)]
