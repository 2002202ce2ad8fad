"""Checks for the exercises of chapter 04 (freeing and retain_graph) that stay in the notebook.

    check_can_backward_twice(fn)            # 4.2: which graphs survive a second backward
    check_one_backward(one_backward)        # 4.3: two backward calls rewritten as one pass
    check_fixed_loop(train)                 # 4.4: a loop that leaked through retain_graph, fixed

Every check runs the learner's code with mini_autograd, spying on the engine's backward passes
only while it runs, compares with PyTorch on the same program, prints exactly one line (correct,
not done yet, or what differs and why) and returns True or False. An ordinary mistake is
reported in words, never as a traceback. The notebook also imports TWICE_PROGRAMS, twice_truth,
heads_tensors and normaliser_data, the programs and data these checks run.

Exercise 4.1 (the freeing step, release_saved) moved to the build track: the learner writes it
in exercises/my_autograd.py, and course/specs.py checks it.
"""

from __future__ import annotations

import contextlib
from types import SimpleNamespace
from unittest import mock

import numpy as np

import mini_autograd as ma
from course.check import gradient_problem as _grad_problem
from course.check import not_done as _not_done
from course.check import raised as _raised
from course.check import verdict
from course.check import wrong as _wrong
from mini_autograd import engine
from mini_autograd.errors import FREED as FREED_MESSAGE
from mini_autograd.memory import Ledger, graph_nodes, saved_bytes, saved_tensors


def _torch():
    import torch

    return torch


def _is_freed_error(error):
    return isinstance(error, RuntimeError) and str(error).startswith(FREED_MESSAGE[:50])


def _grad_array(tensor):
    grad = tensor.grad
    return None if grad is None else np.asarray(grad.detach().cpu().numpy(), np.float64)


class _Passes:
    """Spy on the engine: every backward pass (backward or autograd.grad) it runs, in order."""

    def __init__(self, measure=False):
        self.retain_graph = []  # retain_graph of each pass
        self.held = []  # saved bytes of the graph at the start of each pass (measure=True)
        self.measure = measure
        self._original = engine.run_backward

    def __call__(self, roots, root_grads, retain_graph, *args, **kwargs):
        self.retain_graph.append(bool(retain_graph))
        if self.measure:
            self.held.append(saved_bytes(list(roots)))
        return self._original(roots, root_grads, retain_graph, *args, **kwargs)

    @contextlib.contextmanager
    def watching(self):
        with mock.patch.object(engine, "run_backward", self):
            yield self


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


def _backward_outcome(fn):
    """None when fn() runs, else the exception it raised."""
    try:
        fn()
    except Exception as error:  # any error is an outcome to compare
        return error
    return None


def twice_truth(lib, program):
    """Whether `lib` runs a second backward on `program`'s graph (True) or raises (False)."""
    x = lib.tensor(_TWICE_X, requires_grad=True)
    root = program(lib, x)
    root.backward()
    return _backward_outcome(root.backward) is None


def _why(root, truth):
    """Plain words on why `root`'s graph can (truth=True) or cannot be backwarded twice."""
    rows = saved_tensors(root).rows
    if not truth:
        savers = ", ".join(f"{row.node} saved `{row.attribute}`" for row in rows)
        return f"the second backward raises in PyTorch: {savers}"
    keepers = [n for n in graph_nodes(root) if n._saved and not n.saved_tensors_info()]
    if keepers:
        kept = "; ".join(f"{n.name()} keeps only {', '.join(sorted(n._saved))}" for n in keepers)
        return (
            "PyTorch runs the second backward fine: no node saves a tensor "
            f"({kept}: numbers and sizes, which are never freed)"
        )
    return "PyTorch runs the second backward fine: no node in its graph saves a tensor"


def _off_first_path(root):
    """Whether every node of root's graph that saved a tensor is off the next_functions[0] path."""
    path, node = set(), root.grad_fn
    while node is not None and node not in path:
        path.add(node)
        node = node.next_functions[0][0] if node.next_functions else None
    savers = [n for n in graph_nodes(root) if n.saved_tensors_info()]
    return bool(savers) and not any(n in path for n in savers)


@verdict
def check_can_backward_twice(can_backward_twice):
    """Exercise 4.2: the learner's `can_backward_twice(root)` reads the graph, before any backward."""
    label = "4.2"
    hint = "walk every node from root.grad_fn (next_functions) and look for saved tensors"
    torch = _torch()
    for text, program in TWICE_PROGRAMS + BRANCH_PROGRAMS:
        truth = twice_truth(torch, program)
        x = ma.tensor(_TWICE_X, requires_grad=True)
        root = program(ma, x)
        passes = _Passes()
        try:
            with passes.watching():
                answer = can_backward_twice(root)
        except NotImplementedError:
            return _not_done(label, hint)
        except Exception as error:
            return _raised(label, error, f"on {text}")
        if passes.retain_graph:
            return _wrong(
                label,
                f"on {text}, your function ran a backward pass to find out; answer from the graph "
                "alone (the nodes and what they saved), before any backward.",
            )
        if not isinstance(answer, (bool, np.bool_)):
            return _wrong(label, f"on {text}, return True or False, not {answer!r:.40}.")
        if bool(answer) != truth:
            if answer and _off_first_path(root):
                return _wrong(
                    label,
                    f"for {text} your function says True, but {_why(root, truth)}; that node is "
                    "not on the next_functions[0] path. Hint: follow every entry of each node's "
                    "next_functions (a stack or a queue), not only the first input.",
                )
            return _wrong(
                label,
                f"for {text} your function says {bool(answer)}, but {_why(root, truth)}. "
                f"Hint: {hint}; only SavedTensor slots count.",
            )
    print(
        f"Exercise {label}: correct ✓ — your answers match what PyTorch does on all "
        f"{len(TWICE_PROGRAMS) + len(BRANCH_PROGRAMS)} programs."
    )
    return True


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


@verdict
def check_one_backward(one_backward):
    """Exercise 4.3: the same gradients as `two_backwards`, with one pass and no retain_graph."""
    label = "4.3"
    hint = "build both losses, then one backward: add them, or pass both to autograd.backward"
    torch = _torch()
    reference = heads_tensors(torch)
    two_backwards(torch, *reference)
    passes = _Passes()
    mine = heads_tensors(ma)
    try:
        with passes.watching():
            one_backward(ma, *mine)
    except NotImplementedError:
        return _not_done(label, hint)
    except Exception as error:
        if _is_freed_error(error):
            return _wrong(
                label,
                "your code raised PyTorch's freed-graph error: it still goes backward twice "
                f"through the shared trunk. Hint: {hint}.",
            )
        return _raised(label, error, "with mini_autograd")
    if not passes.retain_graph:
        return _wrong(label, f"your function never ran a backward pass. Hint: {hint}.")
    if len(passes.retain_graph) > 1:
        return _wrong(
            label,
            f"your function ran {len(passes.retain_graph)} backward passes; one pass over the "
            f"shared trunk is enough. Hint: {hint}.",
        )
    if passes.retain_graph[0]:
        return _wrong(
            label,
            "your single pass still keeps the graph (retain_graph=True); with one pass nothing "
            "needs to be kept, so drop it.",
        )
    names = list(HEADS_ARRAYS)[1:]
    for name, got, expected in zip(names, mine[1:], reference[1:]):
        problem = _grad_problem(_grad_array(got), _grad_array(expected))
        if problem:
            tip = (
                " The gradients must land in .grad, as backward() does."
                if got.grad is None
                else " The sum of the losses gives the sum of their gradients."
            )
            return _wrong(
                label,
                f"{name}.grad {problem} compared with PyTorch's two backward calls.{tip}",
            )
    theirs = heads_tensors(torch)
    try:
        one_backward(torch, *theirs)
    except Exception as error:
        return _raised(label, error, "with torch: write it with `lib` only")
    for name, got, expected in zip(names, theirs[1:], reference[1:]):
        problem = _grad_problem(_grad_array(got), _grad_array(expected))
        if problem:
            return _wrong(label, f"run with torch, {name}.grad {problem}.")
    print(
        f"Exercise {label}: correct ✓ — one backward pass, no retain_graph, and the gradients of "
        "w, head1 and head2 match PyTorch's two-pass version (with mini_autograd and with torch)."
    )
    return True


# --- 4.4: the loop that leaked through retain_graph ----------------------------------------------


def normaliser_data(steps=20, batch=32, features=8, hidden=16, seed=44):
    """Batches and initial weights for the running-mean normaliser loop of exercise 4.4."""
    rng = np.random.default_rng(seed)
    return SimpleNamespace(
        xs=rng.standard_normal((steps, batch, features)),
        ys=rng.standard_normal((steps, batch, 1)),
        w1=rng.standard_normal((features, hidden)) * 0.4,
        w2=rng.standard_normal((hidden, 1)) * 0.4,
        lr=0.05,
    )


def reference_train(lib, data):
    """The fixed loop: the running mean is a constant for the step that uses it."""
    w1 = lib.tensor(data.w1.copy(), requires_grad=True)
    w2 = lib.tensor(data.w2.copy(), requires_grad=True)
    running_mean = lib.zeros(data.w1.shape[1], dtype=lib.float64)
    for x_np, y_np in zip(data.xs, data.ys):
        features = (lib.tensor(x_np) @ w1).tanh()
        loss = ((features - running_mean) @ w2 - lib.tensor(y_np)).pow(2).mean()
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
    raise TypeError(f"train should return (w1, w2), not {type(result).__name__}")


@verdict
def check_fixed_loop(train):
    """Exercise 4.4: `train(lib, data, ledger)` runs with flat saved memory and PyTorch's weights."""
    label = "4.4"
    hint = "stop the running mean from carrying each step's graph into the next step"
    torch = _torch()
    data = normaliser_data()
    expected = [w.detach().numpy() for w in reference_train(torch, data)]
    passes = _Passes(measure=True)
    ledger = Ledger("your loop")
    try:
        with passes.watching():
            result = _as_weights(train(ma, data, ledger))
    except NotImplementedError:
        return _not_done(label, hint)
    except Exception as error:
        step = len(passes.retain_graph)
        if _is_freed_error(error):
            return _wrong(
                label,
                f"your loop stopped at step {step} with the freed-graph error: something made "
                f"in step {step - 1} still links to its graph. Hint: {hint}.",
            )
        return _raised(label, error, f"at step {step} of your loop, with mini_autograd")
    steps = len(data.xs)
    if len(passes.retain_graph) != steps:
        return _wrong(
            label,
            f"your loop ran {len(passes.retain_graph)} backward passes for {steps} steps; keep one "
            "per step.",
        )
    if any(passes.retain_graph):
        return _wrong(
            label,
            f"your loop still passes retain_graph=True ({sum(passes.retain_graph)} of {steps} "
            "steps); once nothing is carried over, no step needs it.",
        )
    held = passes.held
    if len(set(held)) != 1:
        grows = held.index(max(held)) + 1
        return _wrong(
            label,
            f"the saved bytes held at backward are not flat: {held[0]} at step 1, {max(held)} at "
            f"step {grows}. Something still carries earlier graphs along. Hint: {hint}.",
        )
    for name, got, want in zip(("w1", "w2"), result, expected):
        problem = _grad_problem(np.asarray(got.detach().numpy()), want, atol=1e-8, rtol=1e-6)
        if problem:
            return _wrong(
                label,
                f"the final {name} {problem} compared with the reference loop run in PyTorch: "
                "keep the update and the running mean as they were, and make the running mean a "
                "constant for the step that uses it.",
            )
    try:
        theirs = _as_weights(train(torch, data, Ledger("torch")))
    except Exception as error:
        return _raised(label, error, "with torch: write it with `lib` only")
    for name, got, want in zip(("w1", "w2"), theirs, expected):
        problem = _grad_problem(got.detach().numpy(), want, atol=1e-8, rtol=1e-6)
        if problem:
            return _wrong(label, f"run with torch, the final {name} {problem}.")
    print(
        f"Exercise {label}: correct ✓ — no retain_graph, {held[0]} saved bytes at every one of the "
        f"{steps} steps, and the same final weights as PyTorch's reference loop."
    )
    return True
