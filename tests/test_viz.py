"""mini_autograd.instruments.viz: stable DOT, the same picture for both libraries, freed buffers, fallbacks."""

import base64
import re
import shutil
import sys

import pytest

import mini_autograd as ma
from mini_autograd.instruments import picture_output, viz
from mini_autograd.instruments.graph_walk import graph_nodes
from mini_autograd.instruments.viz import backward_steps, draw_graph, side_by_side
from tests.conftest import run_python

torch = pytest.importorskip("torch")
LIBS = pytest.mark.parametrize("lib", [ma, torch], ids=["mini_autograd", "torch"])
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` not installed")


def two_losses(lib):
    """The seeds' program: one graph, two losses sharing z."""
    lib.manual_seed(0)
    x = lib.randn(1, 4, requires_grad=True)
    z = (x**2) * 4
    return x, z.mean(), z.sum()


def labels(source):
    """The label of every drawn node, in order (byte counts masked: torch saves scalars as double)."""
    return [
        re.sub(r"\d+ B", "N B", m) for m in re.findall(r'^\s*\w+ \[label="(.*?)"', source, re.M)
    ]


def diamond(lib):
    """a -> exp -> (tanh, sigmoid) -> mul -> sum: the two branches meet again."""
    lib.manual_seed(0)
    a = lib.randn(3, requires_grad=True)
    b = a.exp()
    return (b.tanh() * b.sigmoid()).sum()


@LIBS
def test_graph_nodes_walks_each_node_once_depth_or_breadth_first(lib):
    loss = diamond(lib)
    sigmoid, exp = "SigmoidBackward0", "ExpBackward0"
    leaf = "torch::autograd::AccumulateGrad"
    deep = ["SumBackward0", "MulBackward0", "TanhBackward0", exp, leaf, sigmoid]
    wide = ["SumBackward0", "MulBackward0", "TanhBackward0", sigmoid, exp, leaf]
    assert [n.name() for n in graph_nodes(loss)] == deep
    assert [n.name() for n in graph_nodes([loss, [loss.grad_fn]], breadth_first=True)] == wide
    assert [n.name() for n in viz._walk([loss.grad_fn, None])] == wide  # the pictures' order


def test_dot_is_byte_identical_across_runs():
    first = draw_graph(list(two_losses(ma)[1:])).source
    second = draw_graph(list(two_losses(ma)[1:])).source
    assert first == second
    assert "0x" not in first  # no id()-based names


def test_viz_does_not_import_torch():
    code = "import sys, mini_autograd.instruments.viz; print('torch' in sys.modules)"
    assert run_python("-c", code).strip() == "False"


def test_torch_and_mini_autograd_draw_the_same_graph():
    pictures = [draw_graph(list(two_losses(lib)[1:])).source for lib in (ma, torch)]
    assert labels(pictures[0]) == labels(pictures[1])
    names = [lab for lab in labels(pictures[0]) if "Backward" in lab]
    assert names == ["MeanBackward0", "SumBackward0", "MulBackward0", "PowBackward0"]
    # Same structure, not only the same names.
    edges = [re.findall(r"^\s*(\w+ -> \w+)", p, re.M) for p in pictures]
    assert edges[0] == edges[1]


@LIBS
def test_saved_tensors_are_drawn_freed_after_backward(lib):
    x, loss1, loss2 = two_losses(lib)
    before = draw_graph([loss1, loss2]).source
    assert "FREED" not in before.split("cluster_legend")[0]
    assert "self\\n(1, 4) · 16 B" in before
    loss1.backward()
    after = draw_graph([loss1, loss2]).source
    assert "self\\nFREED" in after and "other\\nFREED" in after
    assert "(1, 4) · 16 B" not in after


@LIBS
def test_saved_tensors_stay_alive_with_retain_graph(lib):
    x, loss1, loss2 = two_losses(lib)
    before = draw_graph([loss1, loss2]).source
    loss1.backward(retain_graph=True)
    assert draw_graph([loss1, loss2]).source == before


def test_torch_graph_after_backward_draws_without_error():
    w = torch.randn(3, 2, requires_grad=True)
    x = torch.randn(4, 3)
    loss = torch.nn.functional.mse_loss((x @ w).sigmoid(), torch.zeros(4, 2))
    loss.backward()
    source = draw_graph(loss, params={"w": w}).source
    assert "SigmoidBackward0" in source and "result\\nFREED" in source


@LIBS
def test_leaves_and_outputs_are_named_from_params(lib):
    lib.manual_seed(0)
    layer = lib.nn.Linear(4, 2)
    loss = layer(lib.randn(3, 4)).sum()
    source = draw_graph(loss, params={**dict(layer.named_parameters()), "loss": loss}).source
    assert 'label="weight\\n(2, 4)"' in source and 'label="bias\\n(2,)"' in source
    assert 'o0 [label="loss\\n()"' in source
    unnamed = draw_graph(loss).source
    assert 'label="(2, 4)", fillcolor=lightblue' in unnamed


def test_two_outputs_are_highlighted():
    source = draw_graph(list(two_losses(ma)[1:])).source
    assert source.count("fillcolor=darkolivegreen1") == 2
    assert "o0 -> n0" in source and "o1 -> n1" in source


def test_show_saved_false_draws_only_the_graph():
    source = draw_graph(two_losses(ma)[1], show_saved=False).source
    assert "_s0" not in source and "legend" not in source


def test_double_backward_is_drawn_as_a_second_cluster():
    x = ma.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = (x.tanh() * x).sum()
    (g,) = ma.autograd.grad(y, x, create_graph=True)
    source = draw_graph({"forward": y, "double backward": g}, params={"x": x}).source
    forward, double = source.split("subgraph cluster_1")
    assert 'label="forward"' in forward and 'label="x\\n(3,)"' in forward
    assert 'label="double backward"' in double
    assert "AddBackward0" in double.split("\t}")[0]  # the formula's nodes live in cluster_1
    assert source.count('label="x\\n(3,)"') == 1  # the leaf is shared, not redrawn


def test_big_graphs_are_drawn_compact():
    ma.manual_seed(0)
    cell = ma.nn.LSTMCell(4, 3)
    h = c = ma.zeros(1, 3)
    for x in ma.randn(5, 1, 4):
        h, c = cell(x, (h, c))
    params = dict(cell.named_parameters())
    source = draw_graph(h.sum(), params=params).source
    assert 'label="weight_hh\\n(12, 3)"' in source
    assert source.count('label="weight_hh') == 5  # one copy per time step, no long edges
    assert 'COLOR="darkorange3">result (1, 3)' in source  # saved tensors in small print
    assert "_s0 [" not in source
    assert draw_graph(h.sum(), params=params, compact=False).source.count("weight_hh") == 1


def fake_missing_dot(monkeypatch):
    graphviz = pytest.importorskip("graphviz")

    def pipe(*args, **kwargs):
        raise graphviz.ExecutableNotFound(["dot", "-Tsvg"])

    monkeypatch.setattr(graphviz.Source, "pipe", pipe)


def test_without_dot_the_picture_is_its_dot_source_and_a_hint(monkeypatch, capsys):
    fake_missing_dot(monkeypatch)
    picture = draw_graph(two_losses(ma)[1])
    bundle = picture._repr_mimebundle_()
    # text/plain stays exactly the DOT (stored notebooks compare it); the hint goes to stderr.
    assert bundle == ({"text/plain": picture.source}, {})
    assert capsys.readouterr().err == picture_output.DOT_MISSING_HINT + "\n"
    assert picture_output.DOT_MISSING_HINT.startswith("Graphviz `dot` not found: install it")
    assert "\n" not in picture_output.DOT_MISSING_HINT


def test_without_the_graphviz_package_the_picture_is_its_dot_source(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "graphviz", None)
    picture = draw_graph(two_losses(ma)[1])
    assert picture._repr_mimebundle_() == ({"text/plain": picture.source}, {})
    steps = backward_steps(two_losses(ma)[1])
    assert steps._repr_mimebundle_() == ({"text/plain": steps.text()}, {})
    assert picture_output.DOT_MISSING_HINT in capsys.readouterr().err


@needs_dot
def test_with_dot_the_picture_is_svg_and_png_and_text_plain_stays_the_dot():
    picture = draw_graph(two_losses(ma)[1])
    bundle, metadata = picture._repr_mimebundle_()
    assert bundle["text/plain"] == picture.source
    assert bundle["image/svg+xml"].startswith("<svg")
    png = base64.b64decode(bundle["image/png"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    # drawn at PNG_DPI, shown at the SVG's size: 72 pt per inch, 96 CSS pixels per inch
    svg_width_pt = float(re.search(r'width="([\d.]+)pt"', bundle["image/svg+xml"]).group(1))
    assert metadata["image/png"]["width"] == pytest.approx(svg_width_pt * 96 / 72, abs=3)
    assert picture_output.png_width(png) == pytest.approx(svg_width_pt * 144 / 72, abs=4)


@needs_dot
def test_side_by_side_shows_both_pictures():
    pics = [draw_graph(two_losses(lib)[1]) for lib in (ma, torch)]
    bundle, metadata = side_by_side(*pics)._repr_mimebundle_()
    assert (
        bundle["text/plain"]
        == f"--- mini_autograd ---\n{pics[0].source}--- torch ---\n{pics[1].source}"
    )
    assert bundle["image/svg+xml"].count("<svg") == 3  # one picture holding the two
    assert 'style="max-width: 100%; height: auto"' in bundle["image/svg+xml"]  # fits the cell
    row_width = picture_output.png_width(base64.b64decode(bundle["image/png"]))
    widths = [picture_output.png_width(p.png()) for p in pics]
    assert row_width == sum(widths) + round(picture_output.GAP_PT * 2)
    assert metadata["image/png"]["width"] == round(row_width * 96 / 144)


def test_side_by_side_without_dot_is_text(monkeypatch):
    fake_missing_dot(monkeypatch)
    pics = [draw_graph(two_losses(lib)[1]) for lib in (ma, torch)]
    bundle, _ = side_by_side(*pics, titles=("a", "b"))._repr_mimebundle_()
    assert list(bundle) == ["text/plain"] and bundle["text/plain"].endswith(pics[1].source)


def torch_engine_order(loss):
    """The names of the nodes in the order torch's engine calls their pre-hooks."""
    order, stack, seen = [], [loss.grad_fn], set()
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            node.register_prehook(lambda grads, node=node: order.append(node.name()))
            stack += [child for child, _ in node.next_functions if child is not None]
    loss.backward()
    return order


def test_backward_steps_follow_the_engine_order_of_torch():
    steps = backward_steps(diamond(ma))
    expected = torch_engine_order(diamond(torch))
    assert [step.node_name for step in steps] == expected
    assert expected[2:4] == ["SigmoidBackward0", "TanhBackward0"]  # made last, runs first


def test_each_step_highlights_its_node_and_lists_what_it_released():
    loss = diamond(ma)
    steps = backward_steps(loss)
    assert len(steps) == 6
    for step in steps:
        assert step.picture.source.count("fillcolor=gold") == 1
    mul = steps[1]
    assert mul.released == ["other", "self"]
    assert mul.picture.source.count("color=red, fontcolor=red") == 2  # the two gradients it sends
    assert "other\\nFREED" in mul.picture.source
    assert 'label="result\\n(3,) · 12 B"' in mul.picture.source  # not yet run: still alive
    assert steps.text().splitlines()[1].startswith("step 2: MulBackward0 passes (3,) [")
    assert "AccumulateGrad adds (3,)" in steps[-1].describe()


def test_backward_steps_really_run_backward():
    ma.manual_seed(0)
    x = ma.randn(3, requires_grad=True)
    steps = backward_steps((x * x).sum(), retain_graph=True)
    assert x.grad.tolist() == (2 * x).tolist()
    assert "FREED" not in steps[-1].picture.source.split("cluster_legend")[0]


def test_backward_steps_are_stable_and_shown_as_a_strip(monkeypatch):
    first = [s.picture.source for s in backward_steps(diamond(ma))]
    assert first == [s.picture.source for s in backward_steps(diamond(ma))]
    monkeypatch.setitem(sys.modules, "ipywidgets", None)
    steps = backward_steps(diamond(ma))
    assert steps.slider() is steps  # no ipywidgets: the static strip
    assert steps._repr_mimebundle_()[0]["text/plain"].startswith(steps.text())
