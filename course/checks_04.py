"""Checks for the exercises of chapter 04 (freeing and retain_graph) that stay in the notebook.

    check_can_backward_twice(fn)            # 4.2: which graphs survive a second backward
    check_one_backward(one_backward)        # 4.3: two backward calls rewritten as one pass
    check_fixed_loop(train)                 # 4.4: a loop that leaked through retain_graph, fixed

Each runs the learner's code with mini_autograd under a Spy and compares with PyTorch. The
notebook also imports TWICE_PROGRAMS, twice_truth, heads_tensors and normaliser_data. Exercise
4.1 is checked by the build track (course/specs.py).
"""

from __future__ import annotations

import contextlib
import sys
from types import SimpleNamespace
from unittest import mock

import numpy as np

import mini_autograd as ma
from course.check import (
    Feedback,
    Spy,
    as_array,
    call,
    checker,
    compare,
    describe_error,
    difference,
    freed_graph,
    growing_graph,
    held_graphs,
    load_torch,
)
from mini_autograd.core.node import AccumulateGrad, Node
from mini_autograd.instruments.graph_walk import graph_nodes
from mini_autograd.instruments.memory import Ledger, saved_bytes, saved_tensors

# --- 4.2: which graphs can be backwarded twice ---------------------------------------------------

_TWICE_X = np.array([[0.5, -1.0, 2.0], [1.5, -0.25, 3.0]])

TWICE_PROGRAMS = [
    ("(x * 3 + x).sum()", lambda lib, x: (x * 3 + x).sum()),
    ("(x.t().reshape(6) - 1).sum()", lambda lib, x: (x.t().reshape(6) - 1).sum()),
    ("x.sum(1).mean()", lambda lib, x: x.sum(1).mean()),
    ("(x + 2 * x.detach()).sum()", lambda lib, x: (x + 2 * x.detach()).sum()),
    ("lib.cat([x, -x]).sum()", lambda lib, x: lib.cat([x, -x]).sum()),
    ("x[lib.tensor([1, 0])].sum()", lambda lib, x: x[lib.tensor([1, 0])].sum()),
    ("x[0].exp().sum() + x.sum()", lambda lib, x: x[0].exp().sum() + x.sum()),
    ("(x / 2).relu().sum()", lambda lib, x: (x / 2).relu().sum()),
]


# Checked too but not shown in the notebook: the tensor that is saved sits on a branch other than
# next_functions[0], so a walk that follows only the first input of each node misses it.
BRANCH_PROGRAMS = [
    ("(x + x.exp()).sum()", lambda lib, x: (x + x.exp()).sum()),
    ("x.sum() + x.tanh().sum()", lambda lib, x: x.sum() + x.tanh().sum()),
    ("(x - x.sigmoid() * 2).mean()", lambda lib, x: (x - x.sigmoid() * 2).mean()),
]


def twice_truth(lib, program):
    """Whether `lib` runs a second backward on `program`'s graph (True) or raises (False)."""
    root = program(lib, lib.tensor(_TWICE_X, requires_grad=True))
    root.backward()
    try:
        root.backward()
    except Exception:  # any error: the graph cannot be backwarded twice
        return False
    return True


def _why(root, truth):
    """Plain words on why `root`'s graph can (truth=True) or cannot be backwarded twice."""
    rows = saved_tensors(root).rows
    if not truth:
        savers = ", ".join(f"{row.node} saved `{row.attribute}`" for row in rows)
        return f"the second backward raises in PyTorch: {savers}"
    keepers = [n for n in graph_nodes(root) if n._saved and not n.saved_tensors_info()]
    if keepers:
        kept = "; ".join(f"{n.name()} keeps only {', '.join(sorted(n._saved))}" for n in keepers)
        return f"PyTorch runs the second backward fine: no node saves a tensor ({kept}: numbers and sizes, which are never freed)"
    return "PyTorch runs the second backward fine: no node in its graph saves a tensor"


def _off_first_path(root):
    """Whether every node of root's graph that saved a tensor is off the next_functions[0] path."""
    path, node = set(), root.grad_fn
    while node is not None and node not in path:
        path.add(node)
        node = node.next_functions[0][0] if node.next_functions else None
    savers = [n for n in graph_nodes(root) if n.saved_tensors_info()]
    return bool(savers) and not any(n in path for n in savers)


TWICE_HINT = "walk every node from root.grad_fn (next_functions) and look for saved tensors"
LADDER_STEPS = 30  # y = y + y, thirty times: two edges into every node, 2**30 paths to the leaf


def _ladder(lib, x):
    """A graph that saves nothing, where two paths lead into every node."""
    y = x
    for _ in range(LADDER_STEPS):
        y = y + y
    return y.sum()


@contextlib.contextmanager
def _visits_at_most(limit):
    """Count the reads of a node's next_functions (a walk's visits); past ``limit``, stop the
    walk with Feedback instead of letting it run for hours."""
    reads = [0]

    def get(node):
        reads[0] += 1
        if reads[0] > limit:
            raise Feedback(
                f"on a graph of {LADDER_STEPS + 2} nodes that saves nothing, made by adding a tensor to itself {LADDER_STEPS} times, your function went through nodes' next_functions more than {limit} times: two edges lead into every node, so a walk that does not remember the nodes it has visited goes through the last ones about 2**{LADDER_STEPS} times. Keep the visited nodes in a set and skip a node that is in it already."
            )
        return slot.__get__(node)

    slot = Node.__dict__["next_functions"]  # a slot: the property reads and writes through it
    with mock.patch.object(Node, "next_functions", property(get, slot.__set__)):
        yield


@checker("4.2", TWICE_HINT)
def check_can_backward_twice(can_backward_twice):
    """Exercise 4.2: the learner's `can_backward_twice(root)` reads the graph, before any backward."""
    torch = load_torch()
    for text, program in TWICE_PROGRAMS + BRANCH_PROGRAMS:
        truth = twice_truth(torch, program)
        root = program(ma, ma.tensor(_TWICE_X, requires_grad=True))
        with Spy() as spy:
            answer = call(can_backward_twice, root, where=f" (on {text})")
        if spy.retains:
            raise Feedback(
                f"on {text}, your function ran a backward pass to find out; answer from the graph alone (the nodes and what they saved), before any backward."
            )
        if not isinstance(answer, (bool, np.bool_)):
            raise Feedback(f"on {text}, return True or False, not {answer!r:.40}.")
        if bool(answer) != truth and answer and _off_first_path(root):
            raise Feedback(
                f"for {text} your function says True, but {_why(root, truth)}; that node is not on the next_functions[0] path. Hint: follow every entry of each node's next_functions (a stack or a queue), not only the first input."
            )
        if bool(answer) != truth:
            raise Feedback(
                f"for {text} your function says {bool(answer)}, but {_why(root, truth)}. Hint: {TWICE_HINT}; only SavedTensor slots count."
            )
    truth = twice_truth(torch, _ladder)
    root = _ladder(ma, ma.tensor(_TWICE_X, requires_grad=True))
    with _visits_at_most(4 * (LADDER_STEPS + 2)):
        answer = call(can_backward_twice, root, where=" (on a ladder of additions)")
    if bool(answer) != truth:
        raise Feedback(
            f"on a graph made by adding a tensor to itself {LADDER_STEPS} times, your function says {bool(answer)}, but {_why(root, truth)}."
        )
    return f"your answers match what PyTorch does on all {len(TWICE_PROGRAMS) + len(BRANCH_PROGRAMS)} programs."


# --- 4.3: one backward pass instead of two -------------------------------------------------------

_HEADS_RNG = np.random.default_rng(43)
HEADS_ARRAYS = {
    "x": _HEADS_RNG.standard_normal((6, 4)),
    "w": _HEADS_RNG.standard_normal((4, 5)) * 0.5,
    "head1": _HEADS_RNG.standard_normal((5, 1)),
    "head2": _HEADS_RNG.standard_normal((5, 2)),
}


def heads_tensors(lib):
    """x (no grad), and the weights w, head1, head2 (requiring grad), from HEADS_ARRAYS."""
    return tuple(
        lib.tensor(a.copy(), requires_grad=name != "x") for name, a in HEADS_ARRAYS.items()
    )


def two_backwards(lib, x, w, head1, head2):
    """The program to rewrite: a shared trunk, two heads, two losses, two backward calls."""
    h = (x @ w).tanh()
    loss1 = ((h @ head1) ** 2).mean()
    loss2 = (h @ head2).sigmoid().sum()
    loss1.backward(retain_graph=True)
    loss2.backward()


ONE_HINT = "build both losses, then one backward: add them, or pass both to autograd.backward"


@checker("4.3", ONE_HINT, ONE_HINT + ".")
def check_one_backward(one_backward):
    """Exercise 4.3: the same gradients as `two_backwards`, with one pass and no retain_graph."""
    torch = load_torch()
    reference = heads_tensors(torch)
    two_backwards(torch, *reference)
    mine = heads_tensors(ma)

    def explain(error):
        if freed_graph(error):
            return f"your code raised PyTorch's freed-graph error: it still goes backward twice through the shared trunk. Hint: {ONE_HINT}."
        return f"your code raised {describe_error(error)} (with mini_autograd)."

    with Spy() as spy:
        call(one_backward, ma, *mine, explain=explain)
    if not spy.retains:
        raise Feedback("your function never ran a backward pass.", hint=True)
    if len(spy.retains) > 1:
        raise Feedback(
            f"your function ran {len(spy.retains)} backward passes; one pass over the shared trunk is enough.",
            hint=True,
        )
    if spy.retained:
        raise Feedback(
            "your single pass still keeps the graph (retain_graph=True, or create_graph=True, which turns it on); with one pass nothing needs to be kept, so drop it."
        )
    names = list(HEADS_ARRAYS)[1:]
    for name, got, expected in zip(names, mine[1:], reference[1:]):
        problem = difference(got.grad, expected.grad)
        if problem:
            tip = (
                "must land in .grad, as backward() does"
                if got.grad is None
                else "of the sum of the losses are the sum of their gradients"
            )
            raise Feedback(
                f"{name}.grad differs from PyTorch's two backward calls ({problem}). The gradients {tip}."
            )
    theirs = heads_tensors(torch)
    call(one_backward, torch, *theirs, where=" (with torch: write it with `lib` only)")
    for name, got, expected in zip(names, theirs[1:], reference[1:]):
        compare(got.grad, expected.grad, f"run with torch, {name}.grad differs", hint=False)
    return "one backward pass, no retain_graph, and the gradients of w, head1 and head2 match PyTorch's two-pass version (with mini_autograd and with torch)."


# --- 4.4: the loop that leaked through retain_graph ----------------------------------------------


def normaliser_data(steps=20, batch=32, features=8, hidden=16, seed=44):
    """Batches and initial weights for the running-mean normaliser loop of exercise 4.4."""
    rng = np.random.default_rng(seed)
    xs, ys = rng.standard_normal((steps, batch, features)), rng.standard_normal((steps, batch, 1))
    w1, w2 = rng.standard_normal((features, hidden)) * 0.4, rng.standard_normal((hidden, 1)) * 0.4
    return SimpleNamespace(xs=xs, ys=ys, w1=w1, w2=w2, lr=0.05)


def reference_train(lib, data, ledger=None):
    """The fixed loop: the running mean is a constant for the step that uses it (each step timed
    and recorded in `ledger` when one is given)."""
    ledger = ledger or Ledger()
    w1 = lib.tensor(data.w1.copy(), requires_grad=True)
    w2 = lib.tensor(data.w2.copy(), requires_grad=True)
    running_mean = lib.zeros(data.w1.shape[1], dtype=lib.float64)
    for x_np, y_np in zip(data.xs, data.ys):
        with ledger.step():
            features = (lib.tensor(x_np) @ w1).tanh()
            loss = ((features - running_mean) @ w2 - lib.tensor(y_np)).pow(2).mean()
            ledger.record(loss)
            w1.grad = w2.grad = None
            loss.backward()
            running_mean = 0.9 * running_mean + 0.1 * features.detach().mean(0)
            with lib.no_grad():
                w1 -= data.lr * w1.grad
                w2 -= data.lr * w2.grad
    return w1, w2


def _as_weights(result):
    if isinstance(result, (tuple, list)) and len(result) == 2:
        return result
    raise Feedback(f"train should return (w1, w2), not {type(result).__name__}.")


def _check_growth(sizes, holders):
    """Feedback on a variable whose graph grows from step to step (`sizes`: one dict a step;
    `holders`: the names of lists, dicts and objects among them)."""
    grown = growing_graph(sizes)
    if grown and grown[0] in holders:
        name, (first, a), (last, b) = grown
        raise Feedback(
            f"`{name}` keeps a tensor of every step with its graph ({a} graph nodes reachable from it at step {first}, {b} at step {last}): the saved bytes stay flat, because backward frees what those nodes saved, but the nodes themselves pile up with every step. A list, dict or object that stores each step's tensors (a loss, the features, a running mean) keeps each step's whole graph alive: store numbers (`.item()`) or detached tensors, and update a running mean so that it is a constant (from detached features, or under lib.no_grad())."
        )
    if grown:
        name, (first, a), (last, b) = grown
        what = "the running mean" if name == "running_mean" else f"`{name}`"
        raise Feedback(
            f"{what} still records its own history: `{name}` carries the graph of every earlier step ({a} graph nodes reachable from it at step {first}, {b} at step {last}): the saved bytes stay flat, because backward frees what those nodes saved, but the nodes themselves pile up with every step. Detaching it where it is used is not enough: detach it where it is updated, so that it is a constant (features.detach() in the update, or the update under lib.no_grad())."
        )


def _check_history(carried, sizes):
    """Feedback on a running mean that, at a step's backward, still holds graph nodes of the step
    before (`carried`: one set of names a step; `sizes`: one {name: graph nodes} a step), a graph
    no backward goes through. Only names with "running" in them: a temporary that still holds
    the last step's features until it is reassigned is harmless."""
    for step, (names, size) in enumerate(zip(carried, sizes), start=1):
        for name in sorted(n for n in names if "running" in n):
            what = "the running mean" if name == "running_mean" else f"`{name}`"
            raise Feedback(
                f"{what} still records its own history: at step {step}, `{name}` requires grad, and {size[name]} graph nodes hang from it, down into the graph of step {step - 1}. The loss does not go back through it, so no backward ever goes through the nodes of its update: they, and what they saved, stay alive as long as it does. The running mean must act as a constant: detach it where it is updated, so that it is a constant, not only where it is used."
            )


def _leaf_shapes(nodes):
    """The shapes of the leaves (tensors with requires_grad) that `nodes` lead back to."""
    return {tuple(n.variable.shape) for n in nodes if isinstance(n, AccumulateGrad)}


LOOP_HINT = "stop the running mean from carrying each step's graph into the next step"


@checker("4.4", LOOP_HINT, LOOP_HINT + ".")
def check_fixed_loop(train):
    """Exercise 4.4: `train(lib, data, ledger)` runs with flat saved memory and PyTorch's weights,
    and the graph its variables hold does not grow from step to step."""
    torch, data, here = load_torch(), normaliser_data(), sys._getframe()
    expected = [as_array(w) for w in reference_train(torch, data)]
    held, sizes, carried, reached, previous, holders = [], [], [], [], [], set()

    def measure(roots):
        held.append(saved_bytes(list(roots)))
        graphs = held_graphs(here, holders)
        sizes.append({name: len(nodes) for name, nodes in graphs.items()})
        earlier = {id(n) for n in previous}  # alive in `previous`: no id is reused
        carried.append({name for name, got in graphs.items() if any(id(n) in earlier for n in got)})
        nodes = graph_nodes(list(roots))
        reached.append(_leaf_shapes(nodes))
        previous[:] = [n for n in nodes if not isinstance(n, AccumulateGrad)]

    def explain(error):
        step = len(held)
        if freed_graph(error):
            return f"your loop stopped at step {step} with the freed-graph error: something made in step {step - 1} still links to its graph. Hint: {LOOP_HINT}."
        missing = [
            name
            for name, w in (("w1", data.w1), ("w2", data.w2))
            if reached and w.shape not in reached[-1]
        ]
        if missing and ("NoneType" in str(error) or "does not require grad" in str(error)):
            w = missing[0]
            cause = (
                ", such as this step's features: they must keep their graph" if w == "w1" else ""
            )
            return f"your code raised {describe_error(error)} at step {step}: no gradient reached {' or '.join(missing)}, because the loss's graph does not lead back to {'them' if len(missing) > 1 else 'it'} ({w}.grad stays None after backward). Something between {w} and the loss was detached{cause}, so {w} cannot learn. Only the running mean, carried over from earlier steps, must act as a constant."
        return f"your code raised {describe_error(error)} (at step {step} of your loop, with mini_autograd)."

    ledger = Ledger("your loop")
    with Spy(measure) as spy:
        result = _as_weights(call(train, ma, data, ledger, explain=explain))
    steps = len(data.xs)
    if len(spy.retains) != steps:
        raise Feedback(
            f"your loop ran {len(spy.retains)} backward passes for {steps} steps; keep one per step."
        )
    if spy.retained:
        raise Feedback(
            f"your loop still keeps each step's graph with retain_graph=True (or create_graph=True, which turns it on) ({sum(spy.retains)} of {steps} steps); once nothing is carried over, no step needs it."
        )
    if len(set(held)) != 1:
        raise Feedback(
            f"the saved bytes held at backward are not flat: {held[0]} at step 1, {max(held)} at step {held.index(max(held)) + 1}. Something still carries earlier graphs along.",
            hint=True,
        )
    _check_growth(sizes, holders)
    _check_history(carried, sizes)
    for name, got, want in zip(("w1", "w2"), result, expected):
        problem = difference(got, want, atol=1e-8, rtol=1e-6)
        if problem:
            raise Feedback(
                f"the final {name} differs from the reference loop run in PyTorch ({problem}): keep the update and the running mean as they were, and make the running mean a constant for the step that uses it."
            )
    recorded = [row.saved_bytes for row in ledger.rows if row.saved_bytes is not None]
    if len(recorded) != steps:
        raise Feedback(
            f"your loop recorded {len(recorded)} steps in the ledger, for {steps} steps: time each step in the ledger and record its loss there before backward, as the leaky loop does; the table that compares the two loops reads it."
        )
    if recorded != held:
        k = next(k for k, (a, b) in enumerate(zip(recorded, held)) if a != b)
        raise Feedback(
            f"at step {k + 1} your ledger recorded {recorded[k]} saved bytes, but the graph held {held[k]} when backward started: record the loss before backward, while its graph still holds what it saved."
        )
    where = " (with torch: write it with `lib` only)"
    theirs = _as_weights(call(train, torch, data, Ledger("torch"), where=where))
    for name, got, want in zip(("w1", "w2"), theirs, expected):
        compare(got, want, f"run with torch, the final {name} differs", 1e-8, 1e-6, hint=False)
    return f"no retain_graph, {held[0]} saved bytes at every one of the {steps} steps, and the same final weights as PyTorch's reference loop."
