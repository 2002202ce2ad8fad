"""Checks for chapter 01 (the graph): the learner's answer is compared with PyTorch and mini_autograd.

Each ``check_*`` function prints plain words (success, "not done yet", or what differs and a
hint) and returns True or False. None of them lets an ordinary mistake escape as a traceback,
and each puts the engine back the way it was, whatever the learner's code did.

    check_walk(walk)               # 1.4: every node of a graph, breadth first
    check_leaves(predictions)      # 1.5: requires_grad and is_leaf in the seeds' data program

Exercises 1.1 (wants_grad), 1.2 (edge_of) and 1.3 (detach) are no longer checked here: the
learner writes them in exercises/my_autograd.py, checked by the build track (course/specs.py).
"""

from __future__ import annotations

from unittest import mock

import numpy as np

import mini_autograd as ma
from course.check import not_done as _not_done
from course.check import raised as _raised
from course.check import verdict
from course.check import wrong as _wrong
from mini_autograd import viz as ma_viz


def _torch():
    import torch

    return torch


# --- 1.4: walk ---------------------------------------------------------------------------------

_W = np.array([2.0, -0.5, 1.0, 0.75], dtype=np.float32)
_X4 = np.array([0.5, -1.0, 2.0, 1.5], dtype=np.float32)

# The reference walk is viz's own, bound here before check_walk swaps the learner's into viz.
_breadth_first = ma_viz._walk


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


@verdict
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


@verdict
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
