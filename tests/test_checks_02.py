"""The chapter 02 checkers accept the solutions, reject plausible mistakes in plain words, and
say "not done yet" for an untouched stub, always in exactly one line and without a traceback."""

import heapq
import itertools

import numpy as np
import pytest

import mini_autograd as ma
from course import checks_02
from mini_autograd.ops.recording import sum_to


def one_line(capsys, exercise_id):
    out = capsys.readouterr().out
    lines = out.strip().splitlines()
    assert len(lines) == 1, out
    assert lines[0].startswith(f"Exercise {exercise_id}: "), out
    return lines[0]


def stub(*args, **kwargs):
    raise NotImplementedError("Exercise: stub")


# --- solutions ------------------------------------------------------------------------------


def mul_backward(self, g):
    grad_self = grad_other = None
    if self.needs_input_grad(0):
        grad_self = sum_to(g * self.saved("other"), self._info[0])
    if self.needs_input_grad(1):
        grad_other = sum_to(g * self.saved("self"), self._info[1])
    return grad_self, grad_other


def mm_backward(self, g):
    grad_self = grad_mat2 = None
    if self.needs_input_grad(0):
        grad_self = g @ self.saved("mat2").t()
    if self.needs_input_grad(1):
        grad_mat2 = self.saved("self").t() @ g
    return grad_self, grad_mat2


def count_dependencies(start_nodes):
    counts, stack = {}, [n for n in start_nodes if n is not None]
    seen = set(stack)
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is not None:
                counts[child] = counts.get(child, 0) + 1
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
    return counts


def ordered(loss, key):
    """Dependency counting plus a ready heap ordered by key(node, counter)."""
    counts = ma.engine._count_dependencies([loss.grad_fn])
    counter = itertools.count()
    ready = [key(loss.grad_fn, counter)]
    order = []
    while ready:
        node = heapq.heappop(ready)[-1]
        order.append(node)
        for child, _ in node.next_functions:
            if child is not None:
                counts[child] -= 1
                if counts[child] == 0:
                    heapq.heappush(ready, key(child, counter))
    return order


def backward_order(loss):
    return ordered(loss, lambda n, c: (-n._sequence_nr, next(c), n))


def gradcheck(fn, *arrays, eps=1e-6, dtype=np.float64, one_sided=False, use_backward=True):
    arrays = [np.asarray(a, dtype=dtype) for a in arrays]
    tensors = [ma.tensor(a.copy(), requires_grad=True) for a in arrays]
    fn(*tensors).backward()
    gaps = []
    for i, t in enumerate(tensors):
        numerical = np.zeros(arrays[i].shape)
        for index in np.ndindex(arrays[i].shape):
            plus = [a.copy() for a in arrays]
            minus = [a.copy() for a in arrays]
            plus[i][index] += eps
            if not one_sided:
                minus[i][index] -= eps
            f_plus = fn(*[ma.tensor(a) for a in plus]).item()
            f_minus = fn(*[ma.tensor(a) for a in minus]).item()
            numerical[index] = (f_plus - f_minus) / (eps if one_sided else 2 * eps)
        analytic = t.grad.numpy() if use_backward else numerical
        gaps.append(float(np.abs(analytic - numerical).max()))
    return gaps


CHECKS = [
    ("2.1", checks_02.check_mul_backward, mul_backward),
    ("2.2", checks_02.check_mm_backward, mm_backward),
    ("2.3", checks_02.check_count_dependencies, count_dependencies),
    ("2.4", checks_02.check_backward_order, backward_order),
    ("2.5", checks_02.check_gradcheck, gradcheck),
]


@pytest.mark.parametrize(("exercise_id", "check", "solution"), CHECKS, ids=[c[0] for c in CHECKS])
def test_solution_is_accepted(capsys, exercise_id, check, solution):
    assert check(solution) is True
    assert "correct ✓" in one_line(capsys, exercise_id)


@pytest.mark.parametrize(("exercise_id", "check", "solution"), CHECKS, ids=[c[0] for c in CHECKS])
def test_stub_says_not_done_yet(capsys, exercise_id, check, solution):
    assert check(stub) is False
    assert one_line(capsys, exercise_id).startswith(f"Exercise {exercise_id}: not done yet — ")


def test_engine_is_left_unpatched(capsys):
    original_mul = ma.ops.arithmetic.MulBackward0.apply
    original_count = ma.engine._count_dependencies
    checks_02.check_mul_backward(stub)
    checks_02.check_count_dependencies(stub)
    assert ma.ops.arithmetic.MulBackward0.apply is original_mul
    assert ma.engine._count_dependencies is original_count


# --- 2.1 and 2.2: wrong formulas --------------------------------------------------------------


def mul_swapped(self, g):
    grad_self = grad_other = None
    if self.needs_input_grad(0):
        grad_self = sum_to(g * self.saved("self"), self._info[0])
    if self.needs_input_grad(1):
        grad_other = sum_to(g * self.saved("other"), self._info[1])
    return grad_self, grad_other


def mul_without_sum_to(self, g):
    return (
        g * self.saved("other") if self.needs_input_grad(0) else None,
        g * self.saved("self") if self.needs_input_grad(1) else None,
    )


def mul_ignoring_needs_input_grad(self, g):
    return (
        sum_to(g * self.saved("other"), self._info[0]),
        sum_to(g * self.saved("self"), self._info[1]),
    )


def mul_numpy(self, g):
    return (g.numpy() * 2, None)


def test_mul_wrong_formula_names_input_and_size(capsys):
    assert checks_02.check_mul_backward(mul_swapped) is False
    line = one_line(capsys, "2.1")
    assert "program 1" in line and "the gradient of `a` differs from PyTorch's by up to" in line
    assert "expected" in line and "got" in line and "Hint:" in line


def test_mul_forgotten_broadcasting_names_the_shape(capsys):
    assert checks_02.check_mul_backward(mul_without_sum_to) is False
    line = one_line(capsys, "2.1")
    assert "shape (2, 3) for input 1 (`other`), but that input has shape (3,)" in line


def test_mul_ignoring_needs_input_grad_points_at_the_program(capsys):
    assert checks_02.check_mul_backward(mul_ignoring_needs_input_grad) is False
    line = one_line(capsys, "2.1")
    assert "program 3" in line and "does not require grad" in line and "raised" in line


def test_mul_returning_numpy_is_explained(capsys):
    assert checks_02.check_mul_backward(mul_numpy) is False
    assert "return mini_autograd tensors" in one_line(capsys, "2.1")


def mm_wrong_transpose(self, g):
    return (
        g @ self.saved("mat2").t() if self.needs_input_grad(0) else None,
        g.t() @ self.saved("self") if self.needs_input_grad(1) else None,
    )


def mm_no_transpose(self, g):
    return (
        g @ self.saved("mat2") if self.needs_input_grad(0) else None,
        self.saved("self") @ g if self.needs_input_grad(1) else None,
    )


def test_mm_wrong_shape(capsys):
    assert checks_02.check_mm_backward(mm_wrong_transpose) is False
    line = one_line(capsys, "2.2")
    assert "shape (4, 3) for input 1 (`mat2`), but that input has shape (3, 4)" in line


def test_mm_missing_transpose_reports_the_error_not_a_traceback(capsys):
    assert checks_02.check_mm_backward(mm_no_transpose) is False
    line = one_line(capsys, "2.2")
    assert "RuntimeError" in line and "cannot be multiplied" in line and "Hint:" in line


# --- 2.3: wrong counts ------------------------------------------------------------------------


def count_nodes_not_edges(start_nodes):
    counts, stack = {}, list(start_nodes)
    seen = set(stack)
    while stack:
        node = stack.pop()
        for child in {c for c, _ in node.next_functions if c is not None}:
            counts[child] = counts.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return counts


def count_without_seen(start_nodes):
    counts, stack = {}, list(start_nodes)
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is not None:
                counts[child] = counts.get(child, 0) + 1
                stack.append(child)
    return counts


def count_reading_start_twice(start_nodes):
    first = [n for n in start_nodes]  # noqa: C416 (the generator is used up here)
    counts = count_dependencies(start_nodes)  # ...so this sees nothing
    return counts if counts or not first else {}


def count_recursive(start_nodes):
    counts, seen = {}, set()

    def visit(node):
        for child, _ in node.next_functions:
            if child is not None:
                counts[child] = counts.get(child, 0) + 1
                if child not in seen:
                    seen.add(child)
                    visit(child)

    for node in start_nodes:
        visit(node)
    return counts


def test_count_edges_not_nodes(capsys):
    assert checks_02.check_count_dependencies(count_nodes_not_edges) is False
    line = one_line(capsys, "2.3")
    assert "you counted 1 edge(s) into AccumulateGrad (leaf x), but 2 point into it" in line
    assert "(from MulBackward0 (the node of sq), twice)" in line


def test_count_without_seen_set(capsys):
    assert checks_02.check_count_dependencies(count_without_seen) is False
    line = one_line(capsys, "2.3")
    assert "you counted 2 edge(s) into MulBackward0 (the node of xw), but 1 point into it" in line


def test_count_reading_the_generator_twice(capsys):
    assert checks_02.check_count_dependencies(count_reading_start_twice) is False
    line = one_line(capsys, "2.3")
    assert "your dict is empty" in line and "generator" in line


def test_count_recursive_is_named(capsys):
    assert checks_02.check_count_dependencies(count_recursive) is False
    line = one_line(capsys, "2.3")
    assert "is recursive" in line and "3,000 operations" in line and "stack" in line


def test_count_wrong_return_type(capsys):
    assert checks_02.check_count_dependencies(lambda nodes: list(nodes)) is False
    assert "must return a dict" in one_line(capsys, "2.3")


# --- 2.4: wrong orders ------------------------------------------------------------------------


def order_breadth_first(loss):
    order, queue, seen = [], [loss.grad_fn], {loss.grad_fn}
    while queue:
        node = queue.pop(0)
        order.append(node)
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                queue.append(child)
    return order


def order_oldest_first(loss):
    return ordered(loss, lambda n, c: (n._sequence_nr, next(c), n))


def order_recursive(loss):
    order, visited = [], set()

    def build(node):
        if node not in visited:
            visited.add(node)
            for child, _ in node.next_functions:
                if child is not None:
                    build(child)
            order.append(node)

    build(loss.grad_fn)
    return order[::-1]


def order_by_names(loss):
    return [node.name() for node in backward_order(loss)]


def order_missing_leaves(loss):
    return [n for n in backward_order(loss) if not hasattr(n, "variable")]


def test_order_too_early_names_the_node_and_the_sender(capsys):
    assert checks_02.check_backward_order(order_breadth_first) is False
    line = one_line(capsys, "2.4")
    assert "TanhBackward0 (the node of h)" in line and "was visited too early" in line
    assert "still had to send it a gradient" in line


def test_order_valid_but_not_pytorchs(capsys):
    assert checks_02.check_backward_order(order_oldest_first) is False
    line = one_line(capsys, "2.4")
    assert "valid topological order, but at position" in line and "PyTorch runs" in line


def test_order_micrograd_recursive_differs_in_ties(capsys):
    assert checks_02.check_backward_order(order_recursive) is False
    line = one_line(capsys, "2.4")
    assert "is recursive" in line and "3,000 operations" in line


def test_order_of_names_is_refused(capsys):
    assert checks_02.check_backward_order(order_by_names) is False
    assert "node objects themselves" in one_line(capsys, "2.4")


def test_order_missing_nodes(capsys):
    assert checks_02.check_backward_order(order_missing_leaves) is False
    assert "leaves out AccumulateGrad (leaf" in one_line(capsys, "2.4")


def test_order_calling_backward_is_explained(capsys):
    def order_by_running_backward(loss):
        order = backward_order(loss)
        loss.backward()
        return order

    assert checks_02.check_backward_order(order_by_running_backward) is False
    line = one_line(capsys, "2.4")
    assert "call backward() itself" in line or "differs from PyTorch's" in line


# --- 2.5: weak gradient checkers ---------------------------------------------------------------


def test_gradcheck_that_never_calls_backward(capsys):
    assert checks_02.check_gradcheck(lambda fn, *a: gradcheck(fn, *a, use_backward=False)) is False
    line = one_line(capsys, "2.5")
    assert "did not notice a wrong backward formula" in line and "input 1" in line


def test_gradcheck_in_float32(capsys):
    assert checks_02.check_gradcheck(lambda fn, *a: gradcheck(fn, *a, dtype=np.float32)) is False
    line = one_line(capsys, "2.5")
    assert "on the correct function" in line and "input 0" in line


def test_gradcheck_one_sided(capsys):
    one_sided = lambda fn, *a: gradcheck(fn, *a, eps=1e-4, one_sided=True)  # noqa: E731
    assert checks_02.check_gradcheck(one_sided) is False
    assert "on the correct function" in one_line(capsys, "2.5")


def test_gradcheck_wrong_return(capsys):
    assert checks_02.check_gradcheck(lambda fn, *a: True) is False
    assert "one number per input" in one_line(capsys, "2.5")
