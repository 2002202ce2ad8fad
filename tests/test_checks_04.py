"""Chapter 04's checkers accept the solutions and explain plausible wrong answers in words."""

import pytest

from course import checks_04
from course.checks_04 import (
    check_can_backward_twice,
    check_fixed_loop,
    check_one_backward,
    check_release,
)
from mini_autograd.saved import SavedTensor


def run(capsys, check, answer):
    """The result of check(answer) and its single printed line."""
    result = check(answer)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1, lines
    return result, lines[0]


def not_done(*args):
    raise NotImplementedError("Exercise 4.x: stub")


# --- 4.1 -------------------------------------------------------------------------------------


def _slots(node):
    for value in (node._saved or {}).values():
        yield from (value if type(value) is tuple else (value,))


def release_solution(node, call):
    for slot in _slots(node):
        if type(slot) is SavedTensor and slot.freed_by is None:
            slot._value = None
            slot.freed_by = call


def release_value_only(node, call):
    for slot in _slots(node):
        if type(slot) is SavedTensor:
            slot._value = None


def release_without_tuples(node, call):
    for value in (node._saved or {}).values():
        if type(value) is SavedTensor and value.freed_by is None:
            value._value = None
            value.freed_by = call


def release_mark_only(node, call):
    for slot in _slots(node):
        if type(slot) is SavedTensor:
            slot.freed_by = call


def release_flag(node, call):
    for slot in _slots(node):
        if type(slot) is SavedTensor:
            slot._value = None
            slot.freed_by = True


def release_whole_subgraph(node, call):
    stack = [node]
    while stack:
        current = stack.pop()
        if current is not None:
            release_solution(current, call)
            stack.extend(n for n, _ in current.next_functions)


def test_release_accepts_the_solution(capsys):
    ok, line = run(capsys, check_release, release_solution)
    assert ok and line.startswith("Exercise 4.1: correct ✓")


def test_release_stub_is_not_done(capsys):
    ok, line = run(capsys, check_release, not_done)
    assert not ok and line.startswith("Exercise 4.1: not done yet — ")


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (lambda node, call: node._saved.clear(), "not a tensor"),
        (release_value_only, "still held"),
        (release_without_tuples, "it sits in a tuple"),
        (release_mark_only, "still holds its value"),
        (release_flag, "store the backward call"),
        (release_whole_subgraph, "FIRST backward"),
        (lambda node, call: setattr(node, "_saved", {"x": 1}), "removed or replaced"),
    ],
    ids=["clear", "value-only", "no-tuples", "mark-only", "flag", "subgraph", "replace-dict"],
)
def test_release_explains_wrong_answers(capsys, answer, words):
    ok, line = run(capsys, check_release, answer)
    assert not ok and line.startswith("Exercise 4.1: ") and words in line, line


# --- 4.2 -------------------------------------------------------------------------------------


def twice_solution(root):
    stack, seen = [root.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if node.saved_tensors_info():
            return False
        stack.extend(n for n, _ in node.next_functions)
    return True


def twice_any_saved(root):
    stack, seen = [root.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if node._saved:
            return False
        stack.extend(n for n, _ in node.next_functions)
    return True


def twice_by_trying(root):
    root.backward(retain_graph=True)
    return True


@pytest.mark.parametrize("text", [text for text, _ in checks_04.TWICE_PROGRAMS])
def test_twice_programs_agree_between_the_libraries(text):
    import torch

    import mini_autograd as ma

    program = dict(checks_04.TWICE_PROGRAMS)[text]
    assert checks_04.twice_truth(torch, program) == checks_04.twice_truth(ma, program)


def test_twice_accepts_the_solution(capsys):
    ok, line = run(capsys, check_can_backward_twice, twice_solution)
    assert ok and line.startswith("Exercise 4.2: correct ✓")


def test_twice_stub_is_not_done(capsys):
    ok, line = run(capsys, check_can_backward_twice, not_done)
    assert not ok and line.startswith("Exercise 4.2: not done yet — ")


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (lambda root: not root.grad_fn.saved_tensors_info(), "saved"),
        (twice_any_saved, "numbers and sizes"),
        (twice_by_trying, "ran a backward pass"),
        (lambda root: "no", "return True or False"),
    ],
    ids=["root-only", "any-saved", "trying", "not-bool"],
)
def test_twice_explains_wrong_answers(capsys, answer, words):
    ok, line = run(capsys, check_can_backward_twice, answer)
    assert not ok and line.startswith("Exercise 4.2: ") and words in line, line


# --- 4.3 -------------------------------------------------------------------------------------


def _losses(x, w, head1, head2):
    h = (x @ w).tanh()
    return ((h @ head1) ** 2).mean(), (h @ head2).sigmoid().sum()


def one_solution(lib, x, w, head1, head2):
    loss1, loss2 = _losses(x, w, head1, head2)
    (loss1 + loss2).backward()


def one_list(lib, x, w, head1, head2):
    lib.autograd.backward(list(_losses(x, w, head1, head2)))


def one_halved(lib, x, w, head1, head2):
    loss1, loss2 = _losses(x, w, head1, head2)
    ((loss1 + loss2) / 2).backward()


def one_retained(lib, x, w, head1, head2):
    loss1, loss2 = _losses(x, w, head1, head2)
    (loss1 + loss2).backward(retain_graph=True)


def one_grad_only(lib, x, w, head1, head2):
    lib.autograd.grad(sum(_losses(x, w, head1, head2)), [w, head1, head2])


def one_without_retain(lib, x, w, head1, head2):
    loss1, loss2 = _losses(x, w, head1, head2)
    loss1.backward()
    loss2.backward()


@pytest.mark.parametrize("answer", [one_solution, one_list], ids=["sum", "list"])
def test_one_backward_accepts_solutions(capsys, answer):
    ok, line = run(capsys, check_one_backward, answer)
    assert ok and line.startswith("Exercise 4.3: correct ✓")


def test_one_backward_stub_is_not_done(capsys):
    ok, line = run(capsys, check_one_backward, not_done)
    assert not ok and line.startswith("Exercise 4.3: not done yet — ")


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (checks_04.two_backwards, "2 backward passes"),
        (one_without_retain, "freed-graph error"),
        (one_halved, "w.grad differs"),
        (one_retained, "retain_graph=True"),
        (one_grad_only, "must land in .grad"),
        (lambda lib, *tensors: None, "never ran a backward pass"),
    ],
    ids=["two-passes", "no-retain", "halved", "retained", "grad-only", "nothing"],
)
def test_one_backward_explains_wrong_answers(capsys, answer, words):
    ok, line = run(capsys, check_one_backward, answer)
    assert not ok and line.startswith("Exercise 4.3: ") and words in line, line


# --- 4.4 -------------------------------------------------------------------------------------


def make_train(retain, carry, detach_where="update"):
    """Variants of the running-mean loop: the leak, half-fixes and the fix."""

    def train(lib, data, ledger):
        w1 = lib.tensor(data.w1.copy(), requires_grad=True)
        w2 = lib.tensor(data.w2.copy(), requires_grad=True)
        running_mean = lib.zeros(data.w1.shape[1], dtype=lib.float64)
        for x_np, y_np in zip(data.xs, data.ys):
            with ledger.step():
                features = (lib.tensor(x_np) @ w1).tanh()
                if detach_where == "before-use":  # a different model: uses this step's mean
                    running_mean = 0.9 * running_mean + 0.1 * features.mean(0)
                loss = ((features - running_mean) @ w2 - lib.tensor(y_np)).pow(2).mean()
                ledger.record(loss)
                w1.grad = w2.grad = None
                loss.backward(retain_graph=retain)
                if detach_where == "before-use":
                    running_mean = running_mean.detach()
                else:
                    carried = features if carry else features.detach()
                    running_mean = 0.9 * running_mean + 0.1 * carried.mean(0)
                with lib.no_grad():
                    w1 -= data.lr * w1.grad
                    w2 -= data.lr * w2.grad
        return w1, w2

    return train


def test_fixed_loop_accepts_the_solution(capsys):
    ok, line = run(capsys, check_fixed_loop, make_train(retain=False, carry=False))
    assert ok and line.startswith("Exercise 4.4: correct ✓")


def test_fixed_loop_accepts_the_reference(capsys):
    ok, line = run(
        capsys, check_fixed_loop, lambda lib, data, ledger: checks_04.reference_train(lib, data)
    )
    assert ok, line


def test_fixed_loop_stub_is_not_done(capsys):
    ok, line = run(capsys, check_fixed_loop, not_done)
    assert not ok and line.startswith("Exercise 4.4: not done yet — ")


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (make_train(retain=True, carry=True), "retain_graph=True"),
        (make_train(retain=False, carry=True), "stopped at step 2"),
        (make_train(retain=True, carry=False), "retain_graph=True"),
        (make_train(retain=False, carry=False, detach_where="before-use"), "final w"),
        (lambda lib, data, ledger: None, "return (w1, w2)"),
    ],
    ids=["leak", "carry", "retain-only", "other-model", "no-return"],
)
def test_fixed_loop_explains_wrong_answers(capsys, answer, words):
    ok, line = run(capsys, check_fixed_loop, answer)
    assert not ok and line.startswith("Exercise 4.4: ") and words in line, line
