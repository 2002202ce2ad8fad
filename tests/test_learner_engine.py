"""The learner's engine as a third library: draw_graph, backward_steps, saved_tensors and compare.

The engine is `solutions/my_autograd.py`, loaded by path as a learner's notebook loads it (its
module is `my_autograd`, not part of mini_autograd). Each picture of it is checked against the
picture of the same program in torch; each comparison against torch must agree, and an engine
broken on purpose (a wrong gradient, name, saved set or error text) must be reported.
"""

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from mini_autograd.instruments.compare import compare
from mini_autograd.instruments.memory import saved_tensors
from mini_autograd.instruments.viz import backward_steps, draw_graph, side_by_side

ENGINE = Path(__file__).resolve().parents[1] / "solutions" / "my_autograd.py"
RNG = np.random.default_rng(3)
X = RNG.standard_normal((2, 3)).astype(np.float32)
W = RNG.standard_normal((3, 4)).astype(np.float32)
XS = RNG.standard_normal((4, 1, 3)).astype(np.float32)
W_IH = RNG.standard_normal((5, 3)).astype(np.float32)
W_HH = RNG.standard_normal((5, 5)).astype(np.float32)


def load_engine(name="my_autograd"):
    """A fresh copy of the learner's complete engine, loaded by path."""
    spec = importlib.util.spec_from_file_location(name, ENGINE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def mine():
    return load_engine()


# --- Programs written once for torch and the learner's engine --------------------------------


def two_losses(lib, x):
    """The seeds' program: one graph, two losses sharing z."""
    z = x**2 * 4
    return [z.mean(), z.sum()]


def diamond(lib, a):
    """a -> exp -> (tanh, sigmoid) -> mul -> sum: the two branches meet again."""
    b = a.exp()
    return (b.tanh() * b.sigmoid()).sum()


def tanh_layer(lib, x, w):
    return (x @ w).tanh().sum()


def normalised(lib, x, w):
    """Division, a sum and a mean along a dimension, subtraction of a number."""
    y = (x @ w).sigmoid()
    return ((y - 0.5) / (y.sum(dim=1, keepdim=True) + 1)).mean(dim=0).exp().sum()


def rnn_loss(lib, xs, w_ih, w_hh):
    """A recurrent loop over xs[t] (select), with transposed weights shared by every step."""
    h = (xs[0] @ w_ih.t()).tanh()
    for t in range(1, xs.shape[0]):
        h = (xs[t] @ w_ih.t() + h @ w_hh.t()).tanh()
    return h.sum()


def two_losses_twice(lib, x):
    """The second backward goes through freed buffers: PyTorch's error, word for word."""
    loss1, loss2 = two_losses(lib, x)
    loss1.backward()
    loss2.backward()
    return loss2


PROGRAMS = {
    "two_losses": (two_losses, [X[:1]]),
    "diamond": (diamond, [X[0]]),
    "tanh_layer": (tanh_layer, [X, W]),
    "normalised": (normalised, [X, W]),
    "rnn_loss": (rnn_loss, [XS, W_IH, W_HH]),
}


def build(lib, name):
    """(roots, params) of program `name` in `lib`: every input requires grad and is named."""
    fn, arrays = PROGRAMS[name]
    names = list(fn.__code__.co_varnames[1 : 1 + len(arrays)])
    inputs = [lib.tensor(a.copy(), requires_grad=True) for a in arrays]
    return fn(lib, *inputs), dict(zip(names, inputs))


def backward(roots):
    roots = roots if isinstance(roots, list) else [roots]
    roots[0].backward()  # the first loss only: what it shares with the others is freed


def masked(source):
    """The DOT text with byte counts masked: torch saves a Python number as a double (8 B)."""
    return re.sub(r"\d+ B\b", "N B", source)


def structure(source):
    """Node labels and edges, in order: what must be the same in both pictures."""
    nodes = re.findall(r'^\s*(\w+) \[label=("(?:[^"\\]|\\.)*"|<.*>)', masked(source), re.M)
    edges = re.findall(r"^\s*(\w+ -> \w+)", source, re.M)
    return nodes, edges


# --- draw_graph --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", PROGRAMS)
def test_the_learners_graph_is_drawn_as_torch_draws_it_before_and_after_backward(mine, name):
    sources = {}
    for lib in (mine, torch):
        roots, params = build(lib, name)
        before = draw_graph(roots, params=params).source
        backward(roots)
        sources[lib.__name__] = (before, draw_graph(roots, params=params).source)
    (mine_before, mine_after), (torch_before, torch_after) = sources.values()
    assert masked(mine_before) == masked(torch_before)
    assert masked(mine_after) == masked(torch_after)
    assert structure(mine_before)[1] and "Backward" in mine_before
    assert "FREED" not in mine_before.split("cluster_legend")[0]
    assert "\\nFREED" in mine_after  # every program saves something that backward frees


def test_saved_names_and_marks_of_the_learners_graph(mine):
    (loss1, loss2), params = build(mine, "two_losses")
    before = draw_graph([loss1, loss2], params=params).source
    assert 'label="PowBackward0"' in before and 'label="MulBackward0"' in before
    assert "self\\n(1, 3) · 12 B" in before and "other\\n() · 8 B" in before  # 4: an int64
    assert 'label="x\\n(1, 3)", fillcolor=lightblue' in before  # the leaf, named
    loss1.backward()
    after = draw_graph([loss1, loss2], params=params).source
    assert "self\\nFREED" in after and "other\\nFREED" in after
    assert "· 12 B" not in after


def test_retain_graph_keeps_the_learners_buffers(mine):
    (loss1, loss2), params = build(mine, "two_losses")
    before = draw_graph([loss1, loss2], params=params).source
    loss1.backward(retain_graph=True)
    assert draw_graph([loss1, loss2], params=params).source == before


def test_an_engine_that_never_frees_is_drawn_differently_from_torch(mine, monkeypatch):
    monkeypatch.setattr(mine, "release_variables", lambda node: None)
    pictures = []
    for lib in (mine, torch):
        roots, params = build(lib, "diamond")
        backward(roots)
        pictures.append(masked(draw_graph(roots, params=params).source))
    assert pictures[0] != pictures[1]
    assert "FREED" not in pictures[0].split("cluster_legend")[0]


def test_a_wrong_node_name_shows_in_the_learners_picture(mine, monkeypatch):
    monkeypatch.setattr(mine.ExpBackward0, "name", lambda self: "ExpBackwardX")
    mine_nodes, _ = structure(draw_graph(build(mine, "diamond")[0]).source)
    torch_nodes, _ = structure(draw_graph(build(torch, "diamond")[0]).source)
    assert mine_nodes != torch_nodes
    assert ("n4", '"ExpBackwardX"') in mine_nodes


def test_a_big_learner_graph_is_drawn_compact_as_torch_draws_it(mine):
    xs = RNG.standard_normal((12, 1, 3)).astype(np.float32)
    sources = []
    for lib in (mine, torch):
        w_ih, w_hh = (lib.tensor(a, requires_grad=True) for a in (W_IH, W_HH))
        loss = rnn_loss(lib, lib.tensor(xs), w_ih, w_hh)
        before = draw_graph(loss, params={"w_ih": w_ih, "w_hh": w_hh}).source
        loss.backward()
        after = draw_graph(loss, params={"w_ih": w_ih, "w_hh": w_hh}).source
        sources.append((masked(before), masked(after)))
    assert sources[0] == sources[1]
    before, after = sources[0]
    assert 'COLOR="darkorange3">result (1, 5)' in before  # small print: the graph is compact
    assert 'COLOR="gray55">result FREED' in after
    assert before.count('label="w_hh\\n(5, 5)"') == 11  # one copy per use


def test_side_by_side_titles_each_picture_with_its_library(mine):
    pictures = [draw_graph(build(lib, "diamond")[0]) for lib in (mine, torch)]
    assert [p.library for p in pictures] == ["my_autograd", "torch"]
    bundle, _ = side_by_side(*pictures)._repr_mimebundle_()
    assert bundle["text/plain"].startswith("--- my_autograd ---\ndigraph autograd {")
    assert f"--- torch ---\n{pictures[1].source}" in bundle["text/plain"]
    import mini_autograd as ma

    three = side_by_side(pictures[0], draw_graph(build(ma, "diamond")[0]), pictures[1])
    assert three.titles == ["my_autograd", "mini_autograd", "torch"]
    with pytest.raises(ValueError, match="2 titles for 3 pictures"):
        side_by_side(*three.pictures, titles=("a", "b"))


# --- backward_steps and saved_tensors ----------------------------------------------------------


@pytest.mark.parametrize("name", ["diamond", "normalised", "two_losses"])
def test_backward_steps_on_the_learners_engine_follow_torchs(mine, name):
    runs = []
    for lib in (mine, torch):
        roots, params = build(lib, name)
        root = roots[0] if isinstance(roots, list) else roots
        steps = backward_steps(root, params=params)
        runs.append(
            (
                [s.node_name for s in steps],
                [s.released for s in steps],
                [masked(s.picture.source) for s in steps],
                [len(getattr(n, "_pre_hooks", ())) for n in _nodes(root)],
            )
        )
    assert runs[0][:3] == runs[1][:3]
    assert set(runs[0][3]) == {0}  # the hooks are taken off again (the learner's has no handles)
    assert params["x" if name != "diamond" else "a"].grad is not None


def _nodes(root):
    order, stack = [], [root.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and node not in order:
            order.append(node)
            stack += [child for child, _ in node.next_functions]
    return order


def test_saved_tensors_of_the_learners_graph_match_torchs(mine):
    tables = []
    for lib in (mine, torch):
        roots, _ = build(lib, "diamond")
        before = saved_tensors(roots)
        roots.backward()
        after = saved_tensors(roots)
        tables.append((repr(before), repr(after)))
    assert tables[0] == tables[1]
    assert tables[0][0].endswith("total: 36 bytes held (each storage counted once)")
    assert tables[0][1].endswith("total: 0 bytes held (each storage counted once)")


# --- compare -----------------------------------------------------------------------------------


def line_of(text, header, check):
    """The line of `check` in the block that starts with `header`."""
    block = text.split(header + ":")[1].split("\ncpu")[0]
    return next(line for line in block.splitlines() if line.startswith(f"  {check} "))


def test_compare_with_the_learners_engine_adds_its_own_block(mine):
    result = compare(tanh_layer, X, W, devices=("cpu",), engines=(mine,))
    assert result.ok
    assert result.libraries == ("mini_autograd", "my_autograd")
    block = (
        "  forward        max |diff| < 1e-05\n"
        "  grad x         max |diff| < 1e-05\n"
        "  grad w         max |diff| < 1e-05\n"
        "  node names     agree (5 nodes)\n"
        "  saved tensors  agree"
    )
    assert str(result) == (
        "compare tanh_layer: mini_autograd, my_autograd vs torch\n"
        f"cpu, mini_autograd: agree\n{block}\n"
        f"cpu, my_autograd: agree\n{block}"
    )


@pytest.mark.parametrize("name", [*PROGRAMS, "two_losses_twice"])
def test_the_complete_engine_agrees_with_torch_on_every_program(mine, name):
    fn, arrays = (two_losses_twice, [X]) if name == "two_losses_twice" else PROGRAMS[name]
    result = compare(fn, *arrays, devices=("cpu",), engines=(mine,))
    assert result.ok, str(result)
    assert [r.library for r in result.reports] == ["mini_autograd", "my_autograd"]


def test_the_same_freed_error_is_agreement_and_a_different_text_is_not(mine, monkeypatch):
    text = str(compare(two_losses_twice, X, devices=("cpu",), engines=(mine,)))
    assert line_of(text, "cpu, my_autograd", "error").startswith(
        "  error          both raise RuntimeError: Trying to backward through"
    )
    monkeypatch.setattr(mine, "FREED_MESSAGE", "Trying to backward twice.")
    result = compare(two_losses_twice, X, devices=("cpu",), engines=(mine,))
    assert not result.ok
    assert "cpu, mini_autograd: agree\n" in str(result)
    assert "cpu, my_autograd: MISMATCH in error\n" in str(result)
    assert "messages differ at character 20: 'wice.' vs 'hrough the graph" in str(result)


def test_a_wrong_gradient_in_the_learners_engine_is_found(mine, monkeypatch):
    monkeypatch.setattr(mine.TanhBackward0, "apply", lambda node, g: (g * 0.5,))
    result = compare(tanh_layer, X, W, devices=("cpu",), engines=(mine,))
    assert not result.ok
    text = str(result)
    assert "cpu, mini_autograd: agree\n" in text
    assert "cpu, my_autograd: MISMATCH in grad x, grad w\n" in text
    assert line_of(text, "cpu, my_autograd", "forward") == "  forward        max |diff| < 1e-05"
    assert line_of(text, "cpu, my_autograd", "grad x").endswith("<- MISMATCH")


def test_a_wrong_node_name_in_the_learners_engine_is_found(mine, monkeypatch):
    monkeypatch.setattr(mine.MmBackward0, "name", lambda node: "MatmulBackward0")
    result = compare(tanh_layer, X, W, devices=("cpu",), engines=(mine,))
    assert not result.ok
    assert "node names     differ at node 2: MatmulBackward0 vs MmBackward0" in str(result)


def test_a_missing_saved_tensor_in_the_learners_engine_is_found(mine, monkeypatch):
    monkeypatch.setattr(mine.TanhBackward0, "saved_names", ())
    result = compare(tanh_layer, X, W, devices=("cpu",), engines=(mine,))
    assert not result.ok
    assert "saved tensors  differ at node 1 (TanhBackward0): {} vs {result}" in str(result)


def test_an_error_only_in_the_learners_engine_is_found(mine, monkeypatch):
    def stub(self):
        raise NotImplementedError("Exercise 2.2: tanh's backward formula")

    monkeypatch.setattr(mine.Tensor, "tanh", stub)
    result = compare(tanh_layer, X, W, devices=("cpu",), engines=(mine,))
    assert not result.ok
    assert "only my_autograd raises NotImplementedError: Exercise 2.2" in str(result)


def test_an_unfinished_tensor_function_is_reported_not_raised(mine, monkeypatch):
    def stub(data, dtype=None, requires_grad=False):
        raise NotImplementedError("Exercise 1.1: make a tensor")

    monkeypatch.setattr(mine, "tensor", stub)
    result = compare(tanh_layer, X, W, devices=("cpu",), engines=(mine,))
    assert not result.ok
    assert "only my_autograd raises NotImplementedError: Exercise 1.1" in str(result)


def test_html_has_a_library_column_and_marks_the_learners_mismatch(mine, monkeypatch):
    monkeypatch.setattr(mine.TanhBackward0, "apply", lambda node, g: (g * 0.5,))
    page = compare(tanh_layer, X, W, devices=("cpu",), engines=(mine,))._repr_html_()
    assert page.startswith("<p><b>compare tanh_layer</b>: mini_autograd, my_autograd vs torch</p>")
    assert "<th>device</th><th>library</th><th>check</th><th>result</th>" in page
    assert "<td>cpu</td><td>my_autograd</td><td>grad x</td>" in page
    assert page.count("(mismatch)") == 2  # grad x and grad w, both in my_autograd's rows


def test_without_engines_the_report_is_unchanged():
    plain = compare(tanh_layer, X, W, devices=("cpu",))
    assert repr(plain) == repr(compare(tanh_layer, X, W, devices=("cpu",), engines=()))
    assert str(plain).splitlines()[:2] == [
        "compare tanh_layer: mini_autograd vs torch",
        "cpu: agree",
    ]
    assert "<th>library</th>" not in plain._repr_html_()
    assert plain.libraries == ("mini_autograd",)


def test_two_engines_with_one_name_get_distinct_labels(mine):
    result = compare(tanh_layer, X, W, devices=("cpu",), engines=(mine, load_engine()))
    assert result.ok
    assert "cpu, my_autograd (2): agree" in str(result)


def test_a_missing_device_is_one_line_for_all_libraries(mine, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    result = compare(tanh_layer, X, W, devices=("cpu", "cuda"), engines=(mine,))
    assert result.ok
    assert str(result).splitlines()[-1] == "cuda: not available on this machine"
    assert str(result).count("not available") == 1


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available here")
def test_the_learners_engine_is_compared_with_torch_on_cuda(mine):
    result = compare(tanh_layer, X, W, devices=("cuda",), engines=(mine,))
    assert result.ok, str(result)
    assert "cuda, my_autograd: agree" in str(result)
    assert str(result).count("  cuda memory    ") == 2  # torch's memory, in each block
