"""Checks for chapter 01 (the graph), against PyTorch and mini_autograd (course/check.py has
the scaffold); each puts the engine back the way it was, whatever the learner's code did.

    check_walk(walk)               # 1.4: every node of a graph, breadth first
    check_leaves(predictions)      # 1.5: requires_grad and is_leaf in the seeds' data program

Exercises 1.1 to 1.3 are checked by the build track (course/specs.py).
"""

from __future__ import annotations

from unittest import mock

import numpy as np

import mini_autograd as ma
from course.check import Feedback, call, checker, load_torch
from mini_autograd.instruments import viz as ma_viz
from mini_autograd.instruments.graph_walk import graph_nodes

# --- 1.4: walk ---------------------------------------------------------------------------------

_W = np.array([2.0, -0.5, 1.0, 0.75], dtype=np.float32)
_X4 = np.array([0.5, -1.0, 2.0, 1.5], dtype=np.float32)


def _breadth_first(start_nodes):
    """The reference walk, the pictures' order (check_walk swaps the learner's into viz)."""
    return graph_nodes(start_nodes, breadth_first=True)


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
    """Words (and a hint) for how the learner's node list differs from `expected`, or None."""
    names, seen = [n.name() for n in got], set()
    for node in got:
        if node in seen:
            return f"{node.name()} is listed twice; a node reached along two paths is listed once. Hint: keep a set of the nodes already seen."
        seen.add(node)
    missing = [n.name() for n in expected if n not in seen]
    if missing and set(missing) <= set(names):
        return f"{', '.join(missing)} missing from your list, which holds other nodes of the same name: distinct nodes can share a name (this graph has {_counted(expected, missing)}), so a set of names takes them for one. Hint: visit by identity: keep the nodes themselves in the set of nodes seen, not their names."
    if missing:
        return f"{', '.join(missing)} missing from your list. Hint: follow every edge, down to the AccumulateGrad nodes."
    for k, (a, b) in enumerate(zip(names, want)):
        if a != b:
            return f"position {k} holds {a}, expected {b} (expected order: {', '.join(want)}). Hint: breadth first: a queue (collections.deque), children in next_functions order."
    if len(names) != len(want):
        return f"your list has {len(names)} nodes, expected {len(want)}. Hint: skip the None edges."
    return None


def _counted(nodes, names):
    """'2 MulBackward0 nodes and 2 AccumulateGrad nodes': how many of `nodes` bear each name."""
    every = [n.name() for n in nodes]
    return " and ".join(f"{every.count(name)} {name} nodes" for name in dict.fromkeys(names))


@checker("1.4", "a queue of nodes to visit and a set of nodes seen")
def check_walk(learner_fn):
    """Exercise 1.4: the learner's walk on mini_autograd and torch graphs, then inside draw_graph."""
    torch, where = load_torch(), " (while walking a graph with your walk)"
    references = _graphs(torch)
    for lib in (ma, torch):
        for (text, start), (_, start_t) in zip(_graphs(lib), references):
            got = call(learner_fn, list(start), where=where)
            if not isinstance(got, list) or not all(hasattr(n, "next_functions") for n in got):
                raise Feedback(
                    f"walk should return a list of nodes; for `{text}` it returned {got!r}."
                )
            want = [node.name() for node in _breadth_first(start_t)]
            difference = _walk_difference(got, _breadth_first(start), want)
            if difference:
                raise Feedback(f"on the {lib.__name__} graph of `{text}`: {difference}")

    def draw(x):
        return ma_viz.draw_graph((x.exp() * x + x).sum(), params={"x": x}).source

    want = draw(torch.tensor(_X4, requires_grad=True))
    with mock.patch.object(ma_viz, "_walk", learner_fn):
        got = call(draw, ma.tensor(_X4, requires_grad=True), where=where)
    if got != want:
        raise Feedback(
            "draw_graph, using your walk, draws the mini_autograd graph of (x.exp() * x + x).sum() differently from PyTorch's."
        )
    return f"your walk lists every node once, breadth first, on {len(references)} mini_autograd and PyTorch graphs, and draw_graph draws the same picture with it."


# --- 1.5: leaves -------------------------------------------------------------------------------

LEAF_NAMES = "x noise y x_train y_train w prediction loss y_fixed x_val".split()

WHY = {
    "x": "it was created by randn(..., requires_grad=True): a leaf that requires grad",
    "noise": "randn without requires_grad, times 0.3: no input requires grad, so nothing is recorded and the result is a leaf that does not require grad",
    "y": "it is computed from x, which requires grad: it has a grad_fn (AddBackward0), so it requires grad and is not a leaf; the targets carry a graph back to x",
    "x_train": "slicing is an operation too (SliceBackward0): it requires grad and is not a leaf",
    "y_train": "a slice of y, which requires grad: it requires grad and is not a leaf, so every loss built from it reaches back through y to x",
    "w": "created by zeros(..., requires_grad=True): a leaf that requires grad",
    "prediction": "x_train * w records MulBackward0: it requires grad and is not a leaf",
    "loss": "made by an operation (MeanBackward0): it requires grad and is not a leaf",
    "y_fixed": "detach() returns a new leaf, cut from the graph: it does not require grad",
    "x_val": "made inside no_grad(): nothing is recorded, so it is a leaf that does not require grad, although x requires grad",
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


@checker("1.5", "return {name: (requires_grad, is_leaf)} for the ten tensors")
def check_leaves(learner_fn):
    """Exercise 1.5: the learner's {name: (requires_grad, is_leaf)} against both libraries."""
    facts = {n: (t.requires_grad, t.is_leaf) for n, t in leaves_program(load_torch()).items()}
    mine = {n: (t.requires_grad, t.is_leaf) for n, t in leaves_program(ma).items()}
    assert mine == facts, "mini_autograd and PyTorch disagree on the leaves program"
    predictions = call(learner_fn, where=" (while calling your predictions function)")
    if not isinstance(predictions, dict):
        raise Feedback(
            f"return a dict {{name: (requires_grad, is_leaf)}}, not {type(predictions).__name__}."
        )
    missing = [name for name in LEAF_NAMES if name not in predictions]
    if missing:
        raise Feedback(f"your dict has no entry for {', '.join(missing)}.")
    for name in LEAF_NAMES:
        value = predictions[name]
        if not (
            isinstance(value, tuple) and len(value) == 2 and all(type(v) is bool for v in value)
        ):
            raise Feedback(
                f"the entry for {name} is {value!r}; write a pair of booleans (requires_grad, is_leaf)."
            )
    wrong = [name for name in LEAF_NAMES if predictions[name] != facts[name]]
    if wrong:  # one line per wrong prediction, after the first
        lines = [f"{len(wrong)} of {len(LEAF_NAMES)} predictions differ from PyTorch:"]
        for name in wrong:
            (said_grad, said_leaf), (grad, leaf) = predictions[name], facts[name]
            lines.append(
                f"  {name}: you said (requires_grad={said_grad}, is_leaf={said_leaf}); it is (requires_grad={grad}, is_leaf={leaf}): {WHY[name]}."
            )
        raise Feedback("\n".join(lines))
    return f"all {len(LEAF_NAMES)} predictions match PyTorch (and mini_autograd)."
