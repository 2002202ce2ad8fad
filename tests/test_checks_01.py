"""course.checks_01: each check accepts the solution, rejects plausible mistakes in plain words,
says "not done yet" once for a stub, and leaves the engine as it found it."""

from collections import deque

import pytest

import mini_autograd as ma
from course import checks_01
from tests.exercise_answers import answer

ORIGINAL_WALK = ma.instruments.viz._walk


def stub(*args):
    raise NotImplementedError("Exercise 1.x: stub")


# --- the solutions, read from solutions/sources/01_the_graph.py ------------------------------

walk = answer("01_the_graph", "walk")
PREDICTIONS = answer("01_the_graph", "my_predictions")()


# --- plausible mistakes -----------------------------------------------------------------------


def walk_depth_first(start_nodes):
    order = []

    def visit(node):
        if node is not None and node not in order:
            order.append(node)
            for child, _ in node.next_functions:
                visit(child)

    for node in start_nodes:
        visit(node)
    return order


def walk_without_seen(start_nodes):
    order = [n for n in start_nodes if n is not None]
    queue = deque(order)
    while queue:
        for child, _ in queue.popleft().next_functions:
            if child is not None:
                order.append(child)
                queue.append(child)
    return order


def walk_by_name(start_nodes):
    """Nodes told apart by name: the second of two MulBackward0 nodes is taken for the first."""
    order = [n for n in start_nodes if n is not None]
    seen = {n.name() for n in order}
    queue = deque(order)
    while queue:
        for child, _ in queue.popleft().next_functions:
            if child is not None and child.name() not in seen:
                seen.add(child.name())
                order.append(child)
                queue.append(child)
    return order


# --- the tests ---------------------------------------------------------------------------------

CHECKS = {
    "1.4": (checks_01.check_walk, walk),
    "1.5": (checks_01.check_leaves, lambda: dict(PREDICTIONS)),
}


def run(capsys, check, answer):
    result = check(answer)
    return result, capsys.readouterr().out.splitlines()


def engine_is_untouched():
    return ma.instruments.viz._walk is ORIGINAL_WALK and ma.is_grad_enabled()


@pytest.mark.parametrize("exercise_id", CHECKS)
def test_solution_is_accepted(capsys, exercise_id):
    check, solution = CHECKS[exercise_id]
    result, lines = run(capsys, check, solution)
    assert result
    assert len(lines) == 1
    assert lines[0].startswith(f"Exercise {exercise_id}: correct ✓")
    assert engine_is_untouched()


@pytest.mark.parametrize("exercise_id", CHECKS)
def test_stub_says_not_done_yet_once(capsys, exercise_id):
    check, _ = CHECKS[exercise_id]
    result, lines = run(capsys, check, stub)
    assert not result
    assert len(lines) == 1
    assert lines[0].startswith(f"Exercise {exercise_id}: not done yet — ")
    assert engine_is_untouched()


@pytest.mark.parametrize(
    ("check", "answer", "expected"),
    [
        (
            checks_01.check_walk,
            walk_depth_first,
            ["position 3 holds ExpBackward0", "breadth first"],
        ),
        (
            checks_01.check_walk,
            walk_without_seen,
            ["MulBackward0 is listed twice", "set of the nodes already seen"],
        ),
        (checks_01.check_walk, lambda start: start, ["missing from your list"]),
        (
            checks_01.check_walk,
            walk_by_name,
            ["MulBackward0", "distinct nodes can share a name", "2 MulBackward0 nodes", "identity"],
        ),
    ],
    ids=[
        "walk-depth-first",
        "walk-duplicates",
        "walk-start-only",
        "walk-by-name",
    ],
)
def test_plausible_mistake_is_explained_in_one_line(capsys, check, answer, expected):
    result, lines = run(capsys, check, answer)
    assert not result
    assert len(lines) == 1, lines
    assert "Traceback" not in lines[0]
    for words in expected:
        assert words in lines[0], lines[0]
    assert engine_is_untouched()


def test_wrong_predictions_are_each_explained(capsys):
    predictions = dict(PREDICTIONS, y_train=(False, True), x_val=(True, False))
    result, lines = run(capsys, checks_01.check_leaves, lambda: predictions)
    assert not result
    assert lines[0] == "Exercise 1.5: 2 of 10 predictions differ from PyTorch:"
    assert lines[1].startswith("  y_train: you said (requires_grad=False, is_leaf=True); it is")
    assert "reaches back through y to x" in lines[1]
    assert lines[2].startswith("  x_val: you said (requires_grad=True, is_leaf=False)")
    assert "no_grad()" in lines[2]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (lambda: [True, False], "return a dict"),
        (lambda: {"x": (True, True)}, "no entry for noise, y, x_train"),
        (lambda: dict(PREDICTIONS, w="yes"), "the entry for w is 'yes'"),
    ],
    ids=["not-a-dict", "missing-names", "not-booleans"],
)
def test_malformed_predictions_are_named(capsys, answer, expected):
    result, lines = run(capsys, checks_01.check_leaves, answer)
    assert not result
    assert len(lines) == 1
    assert expected in lines[0]


def test_leaves_program_agrees_between_libraries():
    import torch

    mine = {n: (t.requires_grad, t.is_leaf) for n, t in checks_01.leaves_program(ma).items()}
    theirs = {n: (t.requires_grad, t.is_leaf) for n, t in checks_01.leaves_program(torch).items()}
    assert mine == theirs == PREDICTIONS
