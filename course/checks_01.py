"""Checks for chapter 01 (the graph): the learner's piece runs inside mini_autograd, next to PyTorch.

Each ``check_*`` function prints plain words (success, "not done yet", or what differs and a
hint) and returns True or False. None of them lets an ordinary mistake escape as a traceback,
and each puts the engine back the way it was, whatever the learner's code did.

    check_wants_grad(wants_grad)   # 1.1: does an operation record a node?
    check_edge_of(edge_of)         # 1.2: where does each input's edge point?
    check_detach(detach)           # 1.3: Tensor.detach
    check_walk(walk)               # 1.4: every node of a graph, breadth first
    check_leaves(predictions)      # 1.5: requires_grad and is_leaf in the seeds' data program
"""

from __future__ import annotations

import contextlib
import sys
from unittest import mock

import numpy as np

import mini_autograd as ma
from course.check import not_done as _not_done
from course.check import raised as _raised
from course.check import wrong as _wrong
from mini_autograd import node as ma_node
from mini_autograd import viz as ma_viz
from mini_autograd.ops import recording


class _Stop(Exception):
    """Raised by a check to end it with one message."""


def _torch():
    import torch

    return torch


def _name(node):
    return "None" if node is None else node.name()


def _in_mode(mode, fn):
    with mode:
        return fn()


# --- 1.1: wants_grad ---------------------------------------------------------------------------

# (what the program does, program(lib, x, c)); x requires grad, c does not.
WANTS_GRAD_CASES = [
    ("x * 2 (x requires grad)", lambda lib, x, c: x * 2),
    ("c * 2 (c does not)", lambda lib, x, c: c * 2),
    ("x * c (one of the two inputs requires grad)", lambda lib, x, c: x * c),
    ("c + x (the second input requires grad)", lambda lib, x, c: c + x),
    ("c.exp() + c (no input requires grad)", lambda lib, x, c: c.exp() + c),
    ("x * 2 inside no_grad()", lambda lib, x, c: _in_mode(lib.no_grad(), lambda: x * 2)),
    ("x.detach() * 2", lambda lib, x, c: x.detach() * 2),
    (
        "x * 2 inside enable_grad() inside no_grad()",
        lambda lib, x, c: _in_mode(
            lib.no_grad(), lambda: _in_mode(lib.enable_grad(), lambda: x * 2)
        ),
    ),
    ("x[1:].sum() (indexing, then a reduction)", lambda lib, x, c: x[1:].sum()),
]
_X = np.array([0.5, -1.0, 2.0], dtype=np.float32)
_C = np.array([1.5, 0.25, -0.5], dtype=np.float32)


def _modules_using(attribute, original):
    """Every loaded mini_autograd module whose `attribute` is `original` (ops import it by name)."""
    return [
        module
        for name, module in list(sys.modules.items())
        if name.startswith("mini_autograd") and getattr(module, attribute, None) is original
    ]


@contextlib.contextmanager
def _replaced(attribute, original, learner_fn, also=()):
    with contextlib.ExitStack() as stack:
        for module in {*_modules_using(attribute, original), *also}:
            stack.enter_context(mock.patch.object(module, attribute, learner_fn))
        yield


def _outcome(tensor):
    return tensor.requires_grad, None if tensor.grad_fn is None else tensor.grad_fn.name()


def check_wants_grad(learner_fn):
    """Exercise 1.1: run the operations of WANTS_GRAD_CASES with the learner's wants_grad."""
    torch = _torch()
    label = "1.1"
    hint_mode = "return False whenever ma.is_grad_enabled() is False, whatever the inputs."
    hint_any = "one input that requires grad is enough (any, not all)."
    try:
        with _replaced("wants_grad", recording.wants_grad, learner_fn), ma.enable_grad():
            for text, program in WANTS_GRAD_CASES:
                x_t = torch.tensor(_X, requires_grad=True)
                expected = _outcome(program(torch, x_t, torch.tensor(_C)))
                x = ma.tensor(_X, requires_grad=True)
                result = program(ma, x, ma.tensor(_C))
                got = _outcome(result)
                if not isinstance(got[0], bool):
                    raise _Stop(f"after `{text}` requires_grad is {got[0]!r}, not True or False")
                if got == expected:
                    continue
                if expected[1] is None:
                    hint = hint_mode if "no_grad" in text else ""
                    return _wrong(
                        label,
                        f"`{text}` should record nothing (PyTorch: requires_grad=False, "
                        f"grad_fn=None), but with your wants_grad it recorded {got[1]}.",
                        hint or "a tensor that does not require grad must not start a graph.",
                    )
                hint = "inside enable_grad() recording is on again." if "enable" in text else ""
                return _wrong(
                    label,
                    f"`{text}` should record {expected[1]} (PyTorch: requires_grad=True), "
                    "but with your wants_grad it recorded nothing.",
                    hint or hint_any,
                )
            x = ma.tensor(_X, requires_grad=True)
            (x * ma.tensor(_C) + x**2).sum().backward()
            x_t = torch.tensor(_X, requires_grad=True)
            (x_t * torch.tensor(_C) + x_t**2).sum().backward()
    except NotImplementedError:
        return _not_done(label, "return True when grad mode is on and any input requires grad")
    except _Stop as stop:
        return _wrong(label, str(stop))
    except Exception as error:  # an ordinary mistake: report it, do not raise
        return _raised(label, error, "while mini_autograd ran operations with your wants_grad")
    if x.grad is None or not np.allclose(x.grad._data, x_t.grad.numpy(), atol=1e-6):
        return _wrong(
            label, "backward through the graph your wants_grad recorded gives a wrong x.grad."
        )
    print(
        f"Exercise {label}: correct ✓ — your wants_grad records exactly when PyTorch does in "
        f"{len(WANTS_GRAD_CASES)} programs, and backward through its graph gives PyTorch's x.grad."
    )
    return True


# --- 1.2: edge_of ------------------------------------------------------------------------------


def _halves(lib):
    """A custom Function with two outputs, the same for both libraries (output_nr 0 and 1)."""

    class Halves(lib.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t[:2].clone(), t[2:].clone()

        @staticmethod
        def backward(ctx, first, second):
            return lib.cat([first, second])

    return Halves


def _second_half(lib, x, w, c):
    first, second = _halves(lib).apply(x)
    return (second * 3 + x[2:]).sum()


# (what the program does, program(lib, x, w, c)); x and w require grad, c does not.
EDGE_PROGRAMS = [
    ("(x**2 * 4).mean()", lambda lib, x, w, c: (x**2 * 4).mean()),
    ("(w * x + w).sum(), where w is used twice", lambda lib, x, w, c: (w * x + w).sum()),
    ("(x * c).sum(), where c needs no gradient", lambda lib, x, w, c: (x * c).sum()),
    (
        "y = x.tanh(); (y * y + w).sum(), where y is used twice",
        lambda lib, x, w, c: (lambda y: (y * y + w).sum())(x.tanh()),
    ),
    ("first, second = Halves.apply(x); (second * 3 + x[2:]).sum()", _second_half),
]
_W = np.array([2.0, -0.5, 1.0, 0.75], dtype=np.float32)
_X4 = np.array([0.5, -1.0, 2.0, 1.5], dtype=np.float32)
_C4 = np.array([1.5, 0.25, -0.5, 3.0], dtype=np.float32)


# The reference walk is viz's own, bound here before check_walk swaps the learner's into viz.
_breadth_first = ma_viz._walk


def _structure(root, leaf_names):
    """[(label, [(child index or None, output_nr, child label)])] of the graph behind `root`."""
    nodes = _breadth_first([root.grad_fn])
    index = {node: k for k, node in enumerate(nodes)}

    def label(node):
        if node is None:
            return "None"
        if hasattr(node, "variable"):
            return f"the AccumulateGrad of {leaf_names.get(id(node.variable), 'a leaf')}"
        return node.name()

    return [(label(n), [(index.get(c), nr, label(c)) for c, nr in n.next_functions]) for n in nodes]


def _edge_text(child_label, output_nr):
    return "(None, 0)" if child_label == "None" else f"({child_label}, {output_nr})"


def _first_difference(expected, got):
    """Words for the first edge that differs between two structures, or None."""
    for (name, want_edges), (_, got_edges) in zip(expected, got):
        for i, (want, have) in enumerate(zip(want_edges, got_edges)):
            if want == have:
                continue
            (_, w_nr, w_label), (_, h_nr, h_label) = want, have
            where = f"edge {i} of {name} (next_functions[{i}])"
            if w_label == h_label and w_nr == h_nr:
                node = w_label if w_label.startswith("the ") else f"the {w_label} node"
                return (
                    f"{where} leads to a new node: PyTorch reuses {node} already in the "
                    "graph (one AccumulateGrad per leaf, one node per operation).",
                    "a leaf's AccumulateGrad comes from tensor._grad_accumulator(), which makes "
                    "it once and then returns the same node.",
                )
            if w_label == "None":
                hint = "a tensor that does not require grad gets the edge (None, 0)."
            elif w_label.startswith("the AccumulateGrad"):
                hint = "a leaf that requires grad has no grad_fn; its edge is (tensor._grad_accumulator(), 0)."
            elif w_label == h_label:
                hint = "the second number is tensor._output_nr: which output of its grad_fn the tensor is."
            else:
                hint = "a tensor made by an operation has the edge (tensor.grad_fn, tensor._output_nr)."
            return (
                f"{where} should be {_edge_text(w_label, w_nr)}, yours is "
                f"{_edge_text(h_label, h_nr)}.",
                hint,
            )
        if len(want_edges) != len(got_edges):
            return f"{name} has {len(got_edges)} edges instead of {len(want_edges)}.", ""
    return None


def _validated(learner_fn):
    """The learner's edge_of, refusing anything that is not a pair (Node or None, int)."""

    def edge_of(tensor):
        edge = learner_fn(tensor)
        ok = (
            isinstance(edge, tuple)
            and len(edge) == 2
            and (edge[0] is None or isinstance(edge[0], ma_node.Node))
            and isinstance(edge[1], int)
        )
        if not ok:
            raise _Stop(
                f"your edge_of returned {edge!r}; an edge is a pair (node or None, output_nr)."
            )
        return edge

    return edge_of


def check_edge_of(learner_fn):
    """Exercise 1.2: build EDGE_PROGRAMS with the learner's edge_of; compare graphs and grads."""
    torch = _torch()
    label = "1.2"
    learner_edge_of = _validated(learner_fn)
    for text, program in EDGE_PROGRAMS:
        x_t, w_t = (torch.tensor(a, requires_grad=True) for a in (_X4, _W))
        root_t = program(torch, x_t, w_t, torch.tensor(_C4))
        expected = _structure(root_t, {id(x_t): "x", id(w_t): "w"})
        root_t.backward()
        x, w = (ma.tensor(a, requires_grad=True) for a in (_X4, _W))
        try:
            with mock.patch.object(recording, "edge_of", learner_edge_of):
                with mock.patch.object(ma_node, "edge_of", learner_edge_of):
                    root = program(ma, x, w, ma.tensor(_C4))
            got = _structure(root, {id(x): "x", id(w): "w"})
            difference = _first_difference(expected, got)
            if difference is None and len(got) != len(expected):
                difference = (f"the graph has {len(got)} nodes, PyTorch's {len(expected)}.", "")
            if difference:
                return _wrong(label, f"in `{text}`: {difference[0]}", difference[1])
            root.backward()
        except NotImplementedError:
            return _not_done(
                label, "return (grad_fn, output_nr), the leaf's AccumulateGrad, or (None, 0)"
            )
        except _Stop as stop:
            return _wrong(label, f"in `{text}`: {stop}")
        except Exception as error:  # an ordinary mistake: report it, do not raise
            return _raised(label, error, f"while mini_autograd recorded `{text}` with your edge_of")
        for name, mine, theirs in (("x", x, x_t), ("w", w, w_t)):
            want = None if theirs.grad is None else theirs.grad.numpy()
            have = None if mine.grad is None else mine.grad._data
            if (want is None) != (have is None) or (
                want is not None and not np.allclose(have, want, atol=1e-5)
            ):
                return _wrong(
                    label,
                    f"in `{text}`: {name}.grad after backward is {have}, PyTorch's is {want}.",
                )
    print(
        f"Exercise {label}: correct ✓ — with your edge_of, mini_autograd records the same nodes "
        f"and edges as PyTorch in {len(EDGE_PROGRAMS)} programs, and backward gives the same gradients."
    )
    return True


# --- 1.3: detach -------------------------------------------------------------------------------


def _detach_steps(lib, detach):
    """What check_detach compares, as a list of (question, answer) pairs, for one library."""
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    d = detach(y)
    facts = {"type": isinstance(d, lib.Tensor), "same": d is y}
    if not facts["type"] or facts["same"]:
        return facts, None
    facts["y after"] = (y.requires_grad, _name(y.grad_fn))
    facts["d"] = (d.requires_grad, _name(d.grad_fn), d.is_leaf)
    facts["values"] = d.tolist()
    before = y._version
    d.add_(1)
    facts["y sees the change"] = y.tolist() == [3.0, 5.0, 7.0]
    facts["version"] = y._version - before
    v = x * 1
    part = v[1:]
    part_detached = detach(part)
    before = v._version
    part_detached.mul_(10)
    facts["view version"] = v._version - before
    (x * d).sum().backward()
    facts["x.grad"] = x.grad.tolist()
    return facts, (x, d)


def check_detach(learner_fn):
    """Exercise 1.3: the learner's detach replaces Tensor.detach, next to torch's detach."""
    torch = _torch()
    label = "1.3"
    expected, _ = _detach_steps(torch, lambda t: t.detach())
    try:
        with mock.patch.object(ma.Tensor, "detach", learner_fn):
            got, _ = _detach_steps(ma, lambda t: t.detach())
    except NotImplementedError:
        return _not_done(
            label, "wrap the same numpy array in a new tensor that shares the version counter"
        )
    except Exception as error:  # an ordinary mistake: report it, do not raise
        return _raised(label, error, "while mini_autograd ran y.detach() with your detach")
    if not got["type"]:
        return _wrong(
            label,
            "y.detach() should return a mini_autograd Tensor.",
            "ma.Tensor._make(array) wraps an array.",
        )
    if got["same"]:
        return _wrong(
            label,
            "y.detach() returned y itself: detach makes a new tensor and leaves y in its graph.",
        )
    if got["y after"] != expected["y after"]:
        return _wrong(
            label,
            f"y.detach() changed y: afterwards y has requires_grad={got['y after'][0]}, "
            f"grad_fn={got['y after'][1]}, but y should keep its place in the graph (MulBackward0).",
            "do not touch self; build a new tensor.",
        )
    if got["d"] != expected["d"]:
        requires, grad_fn, _ = got["d"]
        return _wrong(
            label,
            f"d = y.detach() has requires_grad={requires} and grad_fn={grad_fn}; PyTorch's is a "
            "leaf with requires_grad=False and grad_fn=None: it is cut out of the graph.",
            "ma.Tensor._make(array) makes a leaf that does not require grad.",
        )
    if got["values"] != expected["values"]:
        return _wrong(
            label,
            f"d holds {got['values']}, y holds {expected['values']}: the values should be the same.",
        )
    if not got["y sees the change"]:
        return _wrong(
            label,
            "after d.add_(1), y did not change: your detach copies the data, but PyTorch's "
            "shares y's memory (no copy: detach is free).",
            "wrap self._data itself, not a copy (ma.tensor(...) copies).",
        )
    if got["version"] != expected["version"]:
        return _wrong(
            label,
            f"after d.add_(1), y._version went up by {got['version']}, in PyTorch by "
            f"{expected['version']}: a detached tensor shares the version counter of the tensor it "
            "came from, so autograd still notices in-place changes made through it (chapter 03).",
            "set the new tensor's _version_owner to the tensor that owns the counter.",
        )
    if got["view version"] != expected["view version"]:
        return _wrong(
            label,
            f"v[1:].detach().mul_(10) raised v._version by {got['view version']}, in PyTorch by "
            f"{expected['view version']}: the detached view must share the counter of v, the "
            "tensor that owns it, not of the view.",
            "a view's own _version_owner says which tensor owns its counter; use it when it is not None.",
        )
    if not np.allclose(got["x.grad"], expected["x.grad"]):
        return _wrong(
            label,
            f"backward of (x * d).sum() gives x.grad={got['x.grad']}, PyTorch {expected['x.grad']}.",
        )
    print(
        f"Exercise {label}: correct ✓ — your detach cuts the tensor out of the graph, shares "
        "memory and the version counter (views included), like PyTorch's."
    )
    return True


# --- 1.4: walk ---------------------------------------------------------------------------------


def _graphs(lib):
    """(what, start nodes) for the graphs check_walk uses, built from the same arrays."""
    x = lib.tensor(_X4, requires_grad=True)
    w = lib.tensor(_W, requires_grad=True)
    chain = (x**2 * 4).mean()
    a = x * 2
    diamond = (a.exp() * a.tanh() + w).sum()
    z = x.reshape(1, 4) ** 2 * 4
    loss1, loss2 = z.mean(), z.sum()
    return [
        ("(x**2 * 4).mean()", [chain.grad_fn]),
        ("a = x * 2; (a.exp() * a.tanh() + w).sum()", [diamond.grad_fn]),
        ("the two losses z.mean() and z.sum() of one z", [loss1.grad_fn, loss2.grad_fn]),
        ("[x.grad_fn, chain.grad_fn] (a leaf's grad_fn is None)", [x.grad_fn, chain.grad_fn]),
    ]


def _walk_difference(got, expected, want):
    """Words for how the learner's node list differs from `expected` (names `want`), or None."""
    names = [n.name() for n in got]
    seen = set()
    for node in got:
        if node in seen:
            return (
                f"{node.name()} is listed twice; a node reached along two paths is listed once.",
                "keep a set of the nodes already seen.",
            )
        seen.add(node)
    missing = [n.name() for n in expected if n not in seen]
    if missing:
        return (
            f"{', '.join(missing)} missing from your list.",
            "follow every edge, down to the AccumulateGrad nodes.",
        )
    for k, (a, b) in enumerate(zip(names, want)):
        if a != b:
            return (
                f"position {k} holds {a}, expected {b} (expected order: {', '.join(want)}).",
                "breadth first: a queue (collections.deque), children in next_functions order.",
            )
    if len(names) != len(want):
        return f"your list has {len(names)} nodes, expected {len(want)}.", "skip the None edges."
    return None


def check_walk(learner_fn):
    """Exercise 1.4: the learner's walk on mini_autograd and torch graphs, then inside draw_graph."""
    torch = _torch()
    label = "1.4"
    references = _graphs(torch)
    try:
        for lib in (ma, torch):
            for (text, start), (_, start_t) in zip(_graphs(lib), references):
                got = learner_fn(list(start))
                if not isinstance(got, list) or not all(hasattr(n, "next_functions") for n in got):
                    return _wrong(
                        label,
                        f"walk should return a list of nodes; for `{text}` it returned {got!r}.",
                    )
                want = [node.name() for node in _breadth_first(start_t)]
                difference = _walk_difference(got, _breadth_first(start), want)
                if difference:
                    return _wrong(
                        label,
                        f"on the {lib.__name__} graph of `{text}`: {difference[0]}",
                        difference[1],
                    )
        x_t = torch.tensor(_X4, requires_grad=True)
        want = ma_viz.draw_graph((x_t.exp() * x_t + x_t).sum(), params={"x": x_t}).source
        x = ma.tensor(_X4, requires_grad=True)
        with mock.patch.object(ma_viz, "_walk", learner_fn):
            got = ma_viz.draw_graph((x.exp() * x + x).sum(), params={"x": x}).source
    except NotImplementedError:
        return _not_done(label, "a queue of nodes to visit and a set of nodes seen")
    except Exception as error:  # an ordinary mistake: report it, do not raise
        return _raised(label, error, "while walking a graph with your walk")
    if got != want:
        return _wrong(
            label,
            "draw_graph, using your walk, draws the mini_autograd graph of (x.exp() * x + x).sum() "
            "differently from PyTorch's.",
        )
    print(
        f"Exercise {label}: correct ✓ — your walk lists every node once, breadth first, on "
        f"{len(references)} mini_autograd and PyTorch graphs, and draw_graph draws the same picture with it."
    )
    return True


# --- 1.5: leaves -------------------------------------------------------------------------------

LEAF_NAMES = [
    "x",
    "noise",
    "y",
    "x_train",
    "y_train",
    "w",
    "prediction",
    "loss",
    "y_fixed",
    "x_val",
]

WHY = {
    "x": "it was created by randn(..., requires_grad=True): a leaf that requires grad",
    "noise": "randn without requires_grad, times 0.3: no input requires grad, so nothing is "
    "recorded and the result is a leaf that does not require grad",
    "y": "it is computed from x, which requires grad: it has a grad_fn (AddBackward0), so it "
    "requires grad and is not a leaf; the targets carry a graph back to x",
    "x_train": "slicing is an operation too (SliceBackward0): it requires grad and is not a leaf",
    "y_train": "a slice of y, which requires grad: it requires grad and is not a leaf, so every "
    "loss built from it reaches back through y to x",
    "w": "created by zeros(..., requires_grad=True): a leaf that requires grad",
    "prediction": "x_train * w records MulBackward0: it requires grad and is not a leaf",
    "loss": "made by an operation (MeanBackward0): it requires grad and is not a leaf",
    "y_fixed": "detach() returns a new leaf, cut from the graph: it does not require grad",
    "x_val": "made inside no_grad(): nothing is recorded, so it is a leaf that does not require "
    "grad, although x requires grad",
}


def leaves_program(lib):
    """The seeds' data program (targets made from an input that requires grad), for both libraries."""
    lib.manual_seed(0)
    x = lib.randn(100, 1, requires_grad=True)
    noise = 0.3 * lib.randn(100, 1)
    y = 1 + 2 * x + noise
    x_train, y_train = x[:70], y[:70]
    w = lib.zeros(1, requires_grad=True)
    prediction = x_train * w
    loss = ((prediction - y_train) ** 2).mean()
    y_fixed = y.detach()
    with lib.no_grad():
        x_val = x[70:] * 1
    tensors = locals()
    return {name: tensors[name] for name in LEAF_NAMES}


def check_leaves(learner_fn):
    """Exercise 1.5: the learner's {name: (requires_grad, is_leaf)} against both libraries."""
    torch = _torch()
    label = "1.5"
    facts = {name: (t.requires_grad, t.is_leaf) for name, t in leaves_program(torch).items()}
    mine = {name: (t.requires_grad, t.is_leaf) for name, t in leaves_program(ma).items()}
    assert mine == facts, "mini_autograd and PyTorch disagree on the leaves program"
    try:
        predictions = learner_fn()
    except NotImplementedError:
        return _not_done(label, "return {name: (requires_grad, is_leaf)} for the ten tensors")
    except Exception as error:  # an ordinary mistake: report it, do not raise
        return _raised(label, error, "while calling your predictions function")
    if not isinstance(predictions, dict):
        return _wrong(
            label,
            f"return a dict {{name: (requires_grad, is_leaf)}}, not {type(predictions).__name__}.",
        )
    missing = [name for name in LEAF_NAMES if name not in predictions]
    if missing:
        return _wrong(label, f"your dict has no entry for {', '.join(missing)}.")
    wrong = []
    for name in LEAF_NAMES:
        value = predictions[name]
        if not (
            isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, bool) for v in value)
        ):
            return _wrong(
                label,
                f"the entry for {name} is {value!r}; write a pair of booleans (requires_grad, is_leaf).",
            )
        if value != facts[name]:
            wrong.append(name)
    if wrong:
        print(
            f"Exercise {label}: {len(wrong)} of {len(LEAF_NAMES)} predictions differ from PyTorch:"
        )
        for name in wrong:
            said, real = predictions[name], facts[name]
            print(
                f"  {name}: you said (requires_grad={said[0]}, is_leaf={said[1]}); it is "
                f"(requires_grad={real[0]}, is_leaf={real[1]}): {WHY[name]}."
            )
        return False
    print(
        f"Exercise {label}: correct ✓ — all {len(LEAF_NAMES)} predictions match PyTorch (and mini_autograd)."
    )
    return True
