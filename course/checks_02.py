"""Checks for the exercises of chapter 02 (backward).

Each check runs the learner's piece *inside* mini_autograd's engine (a backward formula patched
into its node class, the dependency counting patched into the engine, an order driven through
the real nodes), compares the gradients with PyTorch's, and prints exactly one line: correct,
"not done yet", or what is wrong in plain words (which input's gradient differs and by how
much, which node was visited too early...). An ordinary mistake never escapes as a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from unittest import mock

import numpy as np

import mini_autograd as ma
from mini_autograd import engine
from mini_autograd.node import Node
from mini_autograd.ops.arithmetic import MulBackward0
from mini_autograd.ops.elementwise import TanhBackward0
from mini_autograd.ops.linalg import MmBackward0
from mini_autograd.ops.recording import sum_to

DEEP = 3_000  # operations in the deep chain: three times Python's recursion limit

_reference_count_dependencies = engine._count_dependencies


class _Problem(Exception):
    """A mistake found in the learner's code, described in plain words.

    `hint=False` when the description already says how to fix it.
    """

    def __init__(self, message, hint=True):
        super().__init__(message)
        self.hint = hint


def _rng():
    return np.random.default_rng(20)


def _say(exercise_id, text):
    print(f"Exercise {exercise_id}: {text}")


def _not_done(exercise_id, hint):
    _say(exercise_id, f"not done yet — {hint}")


def _correct(exercise_id, text):
    _say(exercise_id, f"correct ✓ — {text}")


def _run_check(exercise_id, todo, hint, body):
    """Run body(); turn NotImplementedError, _Problem and other errors into one line.

    `todo` says what to write (for "not done yet"); `hint` how, after a mistake.
    """
    try:
        message = body()
    except NotImplementedError:
        _not_done(exercise_id, todo)
        return False
    except _Problem as problem:
        _say(exercise_id, f"{problem} Hint: {hint}" if problem.hint else str(problem))
        return False
    except RecursionError:
        _say(
            exercise_id,
            f"your code hit Python's recursion limit (RecursionError). Hint: {hint}",
        )
        return False
    except Exception as error:  # an ordinary mistake in the learner's code: report, don't raise
        _say(exercise_id, f"your code raised {type(error).__name__}: {error}. Hint: {hint}")
        return False
    _correct(exercise_id, message)
    return True


# --- Naming nodes in plain words -----------------------------------------------------------


def _labeller(named):
    """label(node) -> 'TanhBackward0 (the node of h)' / 'AccumulateGrad (leaf x)'."""
    by_leaf = {id(t): name for name, t in named.items()}
    by_node = {t.grad_fn: name for name, t in named.items() if t.grad_fn is not None}

    def label(node):
        if hasattr(node, "variable"):
            return f"AccumulateGrad (leaf {by_leaf.get(id(node.variable), '?')})"
        name = by_node.get(node)
        return f"{node.name()} (the node of {name})" if name else node.name()

    return label


def _walk(start_nodes):
    """Every node reachable from start_nodes, and for each the nodes with an edge into it."""
    senders, seen, stack = {}, set(), [n for n in start_nodes if n is not None]
    seen.update(stack)
    order = list(stack)
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None:
                continue
            senders.setdefault(child, []).append(node)
            if child not in seen:
                seen.add(child)
                order.append(child)
                stack.append(child)
    return order, senders


def _from(senders, label):
    """'MulBackward0 (the node of a) and ExpBackward0 (the node of b)', or '... (twice)'."""
    labels = [label(s) for s in senders]
    unique = list(dict.fromkeys(labels))
    times = {2: "twice", 3: "three times"}
    return " and ".join(
        f"{u}, {times.get(labels.count(u), f'{labels.count(u)} times')}"
        if labels.count(u) > 1
        else u
        for u in unique
    )


def _describe_difference(got, expected):
    """'by up to 0.52 (at index (1, 0): expected 0.3, got 0.82)'."""
    error = np.abs(got - expected)
    worst = np.unravel_index(np.argmax(error), error.shape) if error.ndim else ()
    where = f" at index {tuple(int(i) for i in worst)}" if error.ndim else ""
    return (
        f"by up to {float(error[worst]):.3g} ({where.strip() or 'the value'}: "
        f"expected {float(expected[worst]):.4g}, got {float(got[worst]):.4g})"
    )


def _as_numpy(grad):
    return None if grad is None else np.asarray(grad.detach().cpu().numpy(), dtype=np.float64)


def _compare_grads(program, names, ma_tensors, torch_tensors):
    """Raise _Problem naming the first input whose gradient differs from PyTorch's."""
    for name, mine, theirs in zip(names, ma_tensors, torch_tensors):
        if not theirs.requires_grad:
            continue
        got, expected = _as_numpy(mine.grad), _as_numpy(theirs.grad)
        if got is None:
            raise _Problem(f"in {program}, `{name}` got no gradient at all (PyTorch gives one).")
        if got.shape != expected.shape:
            raise _Problem(
                f"in {program}, the gradient of `{name}` has shape {got.shape}, "
                f"but `{name}` has shape {expected.shape}."
            )
        if not np.allclose(got, expected, rtol=1e-6, atol=1e-8):
            raise _Problem(
                f"in {program}, the gradient of `{name}` differs from PyTorch's "
                f"{_describe_difference(got, expected)}."
            )


def _both(fn, arrays, requires_grad):
    """fn run with mini_autograd and with torch on float64 copies; (ma tensors, torch tensors)."""
    import torch

    ma_tensors = [ma.tensor(a.copy(), requires_grad=r) for a, r in zip(arrays, requires_grad)]
    torch_tensors = [torch.tensor(a.copy(), requires_grad=r) for a, r in zip(arrays, requires_grad)]
    fn(torch, *torch_tensors).backward()
    return ma_tensors, torch_tensors


# --- Exercises 2.1 and 2.2: a backward formula patched into the op's node class -----------------


def _checked_apply(learner_apply, what, input_names, input_shapes):
    """An `apply` for the node class that runs the learner's code and checks what it returns."""

    def apply(self, g):
        result = learner_apply(self, g)
        count = len(self.next_functions)
        if not isinstance(result, (tuple, list)) or len(result) != count:
            got = type(result).__name__
            if isinstance(result, (tuple, list)):
                got = f"{len(result)} value(s)"
            raise _Problem(
                f"{what} must return a tuple with one gradient per input ({count}: "
                f"{', '.join(input_names)}), but it returned {got}."
            )
        for i, (grad, (next_node, _)) in enumerate(zip(result, self.next_functions)):
            if next_node is None:
                continue  # the engine ignores a gradient nobody asked for
            name = input_names[i]
            if grad is None:
                raise _Problem(
                    f"{what} returned None for input {i} (`{name}`), which needs a gradient."
                )
            if not isinstance(grad, ma.Tensor):
                kind = type(grad).__name__
                if kind == "ndarray":
                    kind = "numpy array"
                raise _Problem(
                    f"{what} returned a {kind} for input {i} (`{name}`); return "
                    "mini_autograd tensors, computed from g and the saved tensors."
                )
            shape = tuple(input_shapes(self)[i])
            if tuple(grad.shape) != shape:
                raise _Problem(
                    f"{what} returned a gradient of shape {tuple(grad.shape)} for input {i} "
                    f"(`{name}`), but that input has shape {shape}."
                )
        return tuple(result)

    return apply


def _formula_check(exercise_id, learner_apply, node_class, input_names, input_shapes, programs):
    what = f"your {node_class.__name__}.apply"
    patched = _checked_apply(learner_apply, what, input_names, input_shapes)
    for description, fn, arrays, requires_grad, names in programs:
        ma_tensors, torch_tensors = _both(fn, arrays, requires_grad)
        with mock.patch.object(node_class, "apply", patched):
            try:
                fn(ma, *ma_tensors).backward()
            except (_Problem, NotImplementedError):
                raise
            except Exception as error:
                raise _Problem(
                    f"in {description}, your code raised {type(error).__name__}: {error}."
                ) from None
        _compare_grads(description, names, ma_tensors, torch_tensors)
    return (
        f"your {node_class.__name__} runs inside the engine and matches PyTorch's gradients on "
        f"{len(programs)} programs."
    )


def _mul_programs():
    rng = _rng()
    a, b, c = rng.normal(size=(2, 3)), rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    row = rng.normal(size=3)
    return [
        (
            "program 1, (a * b).tanh().sum() with a and b of shape (2, 3)",
            lambda lib, a, b: (a * b).tanh().sum(),
            [a, b],
            [True, True],
            ["a", "b"],
        ),
        (
            "program 2, (a * b).tanh().sum() with b of shape (3,) broadcast over the rows of a",
            lambda lib, a, b: (a * b).tanh().sum(),
            [a, row],
            [True, True],
            ["a", "b"],
        ),
        (
            "program 3, (a * c).tanh().sum() where c does not require grad "
            "(MulBackward0 saved only `other`)",
            lambda lib, a, c: (a * c).tanh().sum(),
            [a, c],
            [True, False],
            ["a", "c"],
        ),
        (
            "program 4, (x * x).tanh().sum(): one tensor used for both inputs",
            lambda lib, x: (x * x).tanh().sum(),
            [b],
            [True],
            ["x"],
        ),
        (
            "program 5, (a * 2.5).tanh().sum(): a Python number as `other`",
            lambda lib, a: (a * 2.5).tanh().sum(),
            [a],
            [True],
            ["a"],
        ),
    ]


def check_mul_backward(mul_backward: Callable) -> bool:
    """Exercise 2.1: MulBackward0.apply(self, g) -> (grad for self, grad for other)."""
    hint = (
        "d(a*b)/da = g * b and d(a*b)/db = g * a; read them with self.saved('other') and "
        "self.saved('self'), skip an input when not self.needs_input_grad(i), and undo "
        "broadcasting with sum_to(grad, self._info[i])"
    )
    return _run_check(
        "2.1",
        "write mul_backward: one gradient per input of out = self * other",
        hint,
        lambda: _formula_check(
            "2.1",
            mul_backward,
            MulBackward0,
            ["self", "other"],
            lambda node: node._info,
            _mul_programs(),
        ),
    )


def _mm_programs():
    rng = _rng()
    A, B = rng.normal(size=(2, 3)), rng.normal(size=(3, 4))
    x, W, V = rng.normal(size=(5, 4)), rng.normal(size=(4, 3)), rng.normal(size=(3, 2))
    return [
        (
            "program 1, (A @ B).tanh().sum() with A (2, 3) and B (3, 4)",
            lambda lib, A, B: (A @ B).tanh().sum(),
            [A, B],
            [True, True],
            ["A", "B"],
        ),
        (
            "program 2, (A @ B).tanh().sum() where B does not require grad",
            lambda lib, A, B: (A @ B).tanh().sum(),
            [A, B],
            [True, False],
            ["A", "B"],
        ),
        (
            "program 3, (A @ B).tanh().sum() where A does not require grad",
            lambda lib, A, B: (A @ B).tanh().sum(),
            [A, B],
            [False, True],
            ["A", "B"],
        ),
        (
            "program 4, ((x @ W).tanh() @ V).sum(): two MmBackward0 nodes in a row",
            lambda lib, x, W, V: ((x @ W).tanh() @ V).sum(),
            [x, W, V],
            [True, True, True],
            ["x", "W", "V"],
        ),
    ]


def check_mm_backward(mm_backward: Callable) -> bool:
    """Exercise 2.2: MmBackward0.apply(self, g) -> (grad for self, grad for mat2)."""
    hint = (
        "for out = A @ B, dA = g @ B.T (the shape of A) and dB = A.T @ g (the shape of B); read "
        "A and B with self.saved('self') and self.saved('mat2'), and skip an input when not "
        "self.needs_input_grad(i)"
    )
    return _run_check(
        "2.2",
        "write mm_backward: one gradient per input of out = self @ mat2",
        hint,
        lambda: _formula_check(
            "2.2",
            mm_backward,
            MmBackward0,
            ["self", "mat2"],
            lambda node: (node._saved["self_sym_sizes"], node._saved["mat2_sym_sizes"]),
            _mm_programs(),
        ),
    )


# --- Graphs shared by exercises 2.3 and 2.4 --------------------------------------------------


def _graph_programs():
    """(description, fn(lib, *tensors) -> (loss or [roots], named tensors), arrays)."""
    rng = _rng()

    def diamond(lib, x, w):
        xw = x * w
        h = xw.tanh()
        a = h * 2
        b = h.exp()
        ab = a * b
        loss = ab.sum()
        return [loss], dict(x=x, w=w, xw=xw, h=h, a=a, b=b, ab=ab, loss=loss)

    def skip(lib, x):
        h = x.tanh()
        e1 = h.exp()
        e2 = e1.exp()
        s = h + e2
        loss = s.sum()
        return [loss], dict(x=x, h=h, e1=e1, e2=e2, s=s, loss=loss)

    def square(lib, x):
        sq = x * x
        loss = sq.sum()
        return [loss], dict(x=x, sq=sq, loss=loss)

    def ladder(lib, x):
        y1 = x * x
        y2 = y1 * y1
        y3 = y2 * y2
        loss = y3.sum()
        return [loss], dict(x=x, y1=y1, y2=y2, y3=y3, loss=loss)

    def branches(lib, x):
        a = x.exp()
        b = x * 3
        s = a + b
        loss = s.sum()
        return [loss], dict(x=x, a=a, b=b, s=s, loss=loss)

    def shared_weight(lib, x, w):
        xw = x @ w
        h = xw.tanh()
        hw = h @ w
        loss = hw.sum()
        return [loss], dict(x=x, w=w, xw=xw, h=h, hw=hw, loss=loss)

    def two_losses(lib, x):
        y = x**2
        z = y * 4
        loss1 = z.mean()
        loss2 = z.sum()
        return [loss1, loss2], dict(x=x, y=y, z=z, loss1=loss1, loss2=loss2)

    v, w = rng.normal(size=3) * 0.5, rng.normal(size=3) * 0.5
    m, W = rng.normal(size=(2, 3)) * 0.5, rng.normal(size=(3, 3)) * 0.5
    return [
        ("the diamond (h = tanh(x * w) feeds a = 2h and b = exp(h))", diamond, [v, w]),
        ("a skip connection, h + exp(exp(h)) with h = tanh(x)", skip, [v]),
        ("(x * x).sum() (both inputs of MulBackward0 are x)", square, [v]),
        ("the ladder y1 = x*x, y2 = y1*y1, y3 = y2*y2", ladder, [v]),
        ("(x.exp() + x * 3).sum() (two branches ready at once)", branches, [v]),
        ("(tanh(x @ w) @ w).sum() (the weight w used twice)", shared_weight, [m, W]),
        ("two losses z.mean() and z.sum() of one graph", two_losses, [v]),
    ]


def _build(lib, fn, arrays):
    tensors = [lib.tensor(a.copy(), requires_grad=True) for a in arrays]
    roots, named = fn(lib, *tensors)
    return tensors, roots, named


def _deep_chain(lib):
    start = lib.tensor([0.5], requires_grad=True)
    chain = start
    for _ in range(DEEP):
        chain = -chain
    return start, chain.sum()


# --- Exercise 2.3: dependency counting, patched into the engine -------------------------------


def _check_counts(counts, start_nodes, label, description):
    if not isinstance(counts, dict):
        raise _Problem(
            f"count_dependencies must return a dict {{node: count}}, but it returned a "
            f"{type(counts).__name__} (for {description})."
        )
    order, senders = _walk(start_nodes)
    if not counts and senders:
        raise _Problem(
            f"for {description}, your dict is empty, but the graph has {len(senders)} nodes "
            "that edges point into. The engine passes the start nodes as a generator, which "
            "can be read only once: read it into a list first."
        )
    for node in order:
        expected = len(senders.get(node, []))
        got = counts.get(node, 0)
        if got != expected:
            if expected == 0:
                raise _Problem(
                    f"for {description}, you counted {got} edge(s) into {label(node)}, a node "
                    "the walk starts from; no edge points into it."
                )
            sources = _from(senders[node], label)
            raise _Problem(
                f"for {description}, you counted {got} edge(s) into {label(node)}, but "
                f"{expected} point into it (from {sources})."
            )
    extra = [n for n, c in counts.items() if c and n not in senders]
    if extra:
        raise _Problem(
            f"for {description}, your dict counts {len(extra)} node(s) that are not in the graph."
        )


def _count_dependencies_body(learner):
    import torch

    for description, fn, arrays in _graph_programs():
        tensors, roots, named = _build(ma, fn, arrays)
        label = _labeller(named)
        start_nodes = [r.grad_fn for r in roots]
        # The engine passes a generator, so the check does too.
        counts = learner(node for node in start_nodes)
        _check_counts(counts, start_nodes, label, description)
        # Inside the engine: backward with the learner's counting, then compare with torch.
        with mock.patch.object(engine, "_count_dependencies", learner):
            try:
                ma.autograd.backward(roots)
            except Exception as error:
                raise _Problem(
                    f"inside the engine, backward of {description} failed with "
                    f"{type(error).__name__}: {error}."
                ) from None
        torch_tensors, torch_roots, _ = _build(torch, fn, arrays)
        torch.autograd.backward(torch_roots)
        names = [k for k, v in named.items() if any(v is t for t in tensors)]
        _compare_grads(f"backward of {description}", names, tensors, torch_tensors)

    start, loss = _deep_chain(ma)
    try:
        counts = learner(node for node in [loss.grad_fn])
    except RecursionError:
        raise _Problem(
            f"your count_dependencies is recursive: on a chain of {DEEP:,} operations it hit "
            "Python's recursion limit (RecursionError), as a long RNN unroll would. Keep the "
            "nodes still to visit in a list used as a stack, instead of calling a function "
            "for each one.",
            hint=False,
        ) from None
    _check_counts(counts, [loss.grad_fn], lambda n: n.name(), f"a chain of {DEEP:,} negations")
    with mock.patch.object(engine, "_count_dependencies", learner):
        loss.backward()
    if start.grad is None or float(start.grad._data[0]) != 1.0:
        raise _Problem(f"inside the engine, the chain of {DEEP:,} negations got a wrong gradient.")
    return (
        f"your counts match on {len(_graph_programs())} graphs and a chain of {DEEP:,} "
        "operations, and the engine, running with them, gives PyTorch's gradients."
    )


def check_count_dependencies(count_dependencies: Callable) -> bool:
    """Exercise 2.3: count_dependencies(start_nodes) -> {node: number of edges into it}."""
    hint = (
        "walk the graph from the start nodes with a list as a stack; for every edge "
        "(child, _) in node.next_functions with a child that is not None, add 1 to "
        "counts[child], and push the child only the first time you see it"
    )
    todo = "write count_dependencies: {node: number of edges into it}, without recursion"
    return _run_check("2.3", todo, hint, lambda: _count_dependencies_body(count_dependencies))


# --- Exercise 2.4: the order the engine runs the nodes in -------------------------------------


def _torch_order(fn, arrays):
    """Labels of the nodes in the order PyTorch runs them (node pre-hooks)."""
    import torch

    _, roots, named = _build(torch, fn, arrays)
    label = _labeller(named)
    order = []
    for node in _walk([r.grad_fn for r in roots])[0]:
        node.register_prehook(lambda grads, node=node: order.append(label(node)))
    torch.autograd.backward(roots)
    return order


def _drive(order, root, senders, label, description):
    """Run the real nodes in the learner's order, as the engine would; fail on one run too early."""
    counts = {node: len(s) for node, s in senders.items()}
    done = set()
    buffers = {}
    engine._add_to_buffer(buffers, root.grad_fn, 0, ma.ones_like(root))
    with ma.no_grad():
        for position, node in enumerate(order, start=1):
            if counts.get(node, 0) > 0:
                waiting = [s for s in senders[node] if s not in done]
                raise _Problem(
                    f"for {description}, {label(node)} (position {position} in your order) was "
                    f"visited too early: {_from(waiting, label)} still had to send it a "
                    "gradient."
                )
            grads = buffers.pop(node, [None])
            if all(g is None for g in grads):
                outputs = (None,) * len(node.next_functions)
            else:
                try:
                    outputs = node.apply(*grads)
                except RuntimeError as error:
                    raise _Problem(
                        f"for {description}, running {label(node)} failed ({error}). Did "
                        "backward_order call backward() itself? It should only work out the "
                        "order, without running any node."
                    ) from None
            done.add(node)
            for (next_node, nr), g in zip(node.next_functions, outputs):
                if next_node is None:
                    continue
                if g is not None:
                    engine._add_to_buffer(buffers, next_node, nr, g)
                counts[next_node] -= 1


def _check_order(order, loss, label, description):
    if not isinstance(order, (list, tuple)):
        raise _Problem(
            f"backward_order must return a list of nodes, but it returned a "
            f"{type(order).__name__} (for {description})."
        )
    not_nodes = [o for o in order if not isinstance(o, Node)]
    if not_nodes:
        raise _Problem(
            f"backward_order must return the node objects themselves (such as loss.grad_fn), "
            f"but it returned a {type(not_nodes[0]).__name__} (for {description})."
        )
    nodes, senders = _walk([loss.grad_fn])
    seen = set()
    for node in order:
        if node in seen:
            raise _Problem(f"for {description}, {label(node)} appears twice in your order.")
        seen.add(node)
    missing = [n for n in nodes if n not in seen]
    if missing:
        raise _Problem(
            f"for {description}, your order leaves out {label(missing[0])}; every node "
            "reachable from loss.grad_fn runs exactly once."
        )
    if len(order) != len(nodes):
        raise _Problem(f"for {description}, your order holds nodes that are not in this graph.")
    return senders


def _backward_order_body(learner):
    import torch

    programs = [p for p in _graph_programs() if not p[0].startswith("two losses")]
    # First: is each order one in which every node has all its gradients when it runs?
    orders = []
    for description, fn, arrays in programs:
        tensors, (loss,), named = _build(ma, fn, arrays)
        label = _labeller(named)
        order = learner(loss)
        senders = _check_order(order, loss, label, description)
        # Inside the engine's world: drive the real nodes in this order; leaves get .grad.
        _drive(list(order), loss, senders, label, description)
        torch_tensors, (torch_loss,), _ = _build(torch, fn, arrays)
        torch_loss.backward()
        names = [k for k, v in named.items() if any(v is t for t in tensors)]
        _compare_grads(f"{description}, run in your order", names, tensors, torch_tensors)
        orders.append([label(n) for n in order])
    # Then: does it survive a graph as deep as a long RNN unroll?
    start, loss = _deep_chain(ma)
    try:
        order = learner(loss)
    except RecursionError:
        raise _Problem(
            f"your backward_order is recursive: on a chain of {DEEP:,} operations it hit "
            "Python's recursion limit (RecursionError). Count dependencies with a stack and "
            "run nodes from a ready queue instead.",
            hint=False,
        ) from None
    senders = _check_order(order, loss, lambda n: n.name(), f"a chain of {DEEP:,} negations")
    _drive(list(order), loss, senders, lambda n: n.name(), f"a chain of {DEEP:,} negations")
    if start.grad is None or float(start.grad._data[0]) != 1.0:
        raise _Problem(f"run in your order, the chain of {DEEP:,} negations got a wrong gradient.")
    # Last: among the valid orders, is it the one PyTorch runs?
    for (description, fn, arrays), mine in zip(programs, orders):
        theirs = _torch_order(fn, arrays)
        if mine != theirs:
            k = next(i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b)
            raise _Problem(
                f"for {description}, your order is a valid topological order, but at position "
                f"{k + 1} PyTorch runs {theirs[k]} and you run {mine[k]}. When several nodes "
                "are ready, the one created last (the largest node._sequence_nr) runs first; "
                "among AccumulateGrad nodes (all with the same number), the one that became "
                "ready first.",
                hint=False,
            )
    return (
        f"your order is PyTorch's on {len(programs)} graphs, drives the real nodes to "
        f"PyTorch's gradients, and handles a chain of {DEEP:,} operations."
    )


def check_backward_order(backward_order: Callable) -> bool:
    """Exercise 2.4: backward_order(loss) -> the nodes in the order the engine runs them."""
    hint = (
        "count the edges into every node (exercise 2.3, or ma.engine._count_dependencies), "
        "start with loss.grad_fn in a heap of (-node._sequence_nr, next(counter), node), and each time you pop a "
        "node, lower the count of each node in its next_functions; push a node when its count "
        "reaches 0"
    )
    todo = "write backward_order: the nodes in the order loss.backward() runs them"
    return _run_check("2.4", todo, hint, lambda: _backward_order_body(backward_order))


# --- Exercise 2.5: a finite-difference gradient checker --------------------------------------


def _negated_other_mul(self, g):
    """MulBackward0 with a planted bug: the gradient of `other` has the wrong sign."""
    return (
        sum_to(g * self.saved("other"), self._info[0]) if self.needs_input_grad(0) else None,
        sum_to(-g * self.saved("self"), self._info[1]) if self.needs_input_grad(1) else None,
    )


def _tanh_without_square(self, g):
    """TanhBackward0 with a planted bug: 1 - out instead of 1 - out**2."""
    return (g * (1 - self.saved("result")),)


def _report(result, count, description):
    try:
        values = [float(v) for v in result]
    except TypeError:
        raise _Problem(
            f"gradcheck must return a list with one number per input, but for {description} it "
            f"returned a {type(result).__name__}."
        ) from None
    if len(values) != count:
        raise _Problem(
            f"gradcheck must return one number per input ({count} for {description}), but it "
            f"returned {len(values)}."
        )
    for i, v in enumerate(values):
        if v < 0:
            raise _Problem(
                f"your gradcheck returned a negative gap ({v:.3g} for input {i} of {description}): "
                "a gap is a distance, so take the absolute value, np.abs(backward - numerical), "
                "before the max; without it a gradient that is too small everywhere looks fine.",
                hint=False,
            )
    return values


GRADCHECK_TOLERANCE = 1e-8  # central differences with eps=1e-6 agree to ~1e-10; one-sided to ~1e-7


def _gradcheck_body(learner):
    rng = _rng()
    a, b = rng.normal(size=(2, 3)), rng.normal(size=3)
    A, B = rng.normal(size=(2, 3)) * 0.5, rng.normal(size=(3, 2)) * 0.5

    def mul_tanh(x, y):
        return (x * y).tanh().sum()

    def mm_exp(x, y):
        return (x @ y).exp().mean()

    correct = [
        ("(a * b).tanh().sum() with b broadcast over the rows of a", mul_tanh, (a, b)),
        ("(A @ B).exp().mean()", mm_exp, (A, B)),
    ]
    for description, fn, arrays in correct:
        values = _report(learner(fn, *arrays), len(arrays), description)
        for i, v in enumerate(values):
            if not v < GRADCHECK_TOLERANCE:
                raise _Problem(
                    f"on the correct function {description}, your gradcheck reports a gap of "
                    f"{v:.3g} for input {i}, where backward and central differences agree to "
                    f"about 1e-10 in float64 (a gap under {GRADCHECK_TOLERANCE:.0e} is expected): "
                    "use the central difference (f(x + eps) - f(x - eps)) / (2 * eps) with "
                    "eps=1e-6 in float64; a one-sided (f(x + eps) - f(x)) / eps is off by about eps.",
                    hint=False,
                )

    # The bugs run on inputs of fixed signs, so that each wrong gradient is off in one direction
    # only (the mul bug: too small for input 1; the tanh bug: too small for input 0 and too large
    # for input 1). A gradcheck without the absolute value then returns a negative gap.
    a_pos, b_neg = np.abs(a) + 0.1, -np.abs(b) - 0.1
    bugs = [
        (
            MulBackward0,
            _negated_other_mul,
            "MulBackward0 with the sign of the gradient for its second input flipped",
            [False, True],
        ),
        (
            TanhBackward0,
            _tanh_without_square,
            "TanhBackward0 computing g * (1 - out) instead of g * (1 - out**2)",
            [True, True],
        ),
    ]
    for node_class, buggy, bug, wrong in bugs:
        with mock.patch.object(node_class, "apply", buggy):
            values = _report(learner(mul_tanh, a_pos, b_neg), 2, f"a function using {bug}")
        for i, (v, is_wrong) in enumerate(zip(values, wrong)):
            if is_wrong and not v > 1e-3:
                raise _Problem(
                    f"your gradcheck did not notice a wrong backward formula: with {bug}, it "
                    f"reported {v:.3g} for input {i}, whose gradient is wrong. Compare the "
                    "gradient from backward() with the finite-difference one."
                )
            if not is_wrong and not v < 1e-6:
                raise _Problem(
                    f"with {bug}, your gradcheck reported {v:.3g} for input {i}, but that "
                    "input's gradient is right: only input 1 should be blamed."
                )
    return (
        "your gradcheck passes 2 correct functions and catches 2 planted bugs in backward "
        "formulas, naming the right inputs."
    )


def check_gradcheck(gradcheck: Callable) -> bool:
    """Exercise 2.5: gradcheck(fn, *arrays) -> the largest |backward - numerical| per input."""
    hint = (
        "make float64 tensors with requires_grad=True and call fn(...).backward(); then for each "
        "entry of each input compute (f(x + eps) - f(x - eps)) / (2 * eps) with fresh tensors, "
        "and return, per input, the largest absolute difference"
    )
    todo = "write gradcheck: per input, the largest |backward gradient - finite difference|"
    return _run_check("2.5", todo, hint, lambda: _gradcheck_body(gradcheck))
