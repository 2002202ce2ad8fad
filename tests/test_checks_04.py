"""Chapter 04's checkers (4.2 to 4.4) accept the solutions and explain plausible wrong answers in
words. Exercise 4.1 moved to the build track (course/specs.py)."""

import types

import pytest

from course import checks_04
from course.checks_04 import (
    check_can_backward_twice,
    check_fixed_loop,
    check_one_backward,
)
from tests.exercise_answers import answer, not_done


def run(capsys, check, answer):
    """The result of check(answer) and its single printed line."""
    result = check(answer)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1, lines
    return result, lines[0]


@pytest.mark.parametrize(
    "check, exercise",
    [(check_can_backward_twice, "4.2"), (check_one_backward, "4.3"), (check_fixed_loop, "4.4")],
)
def test_stub_is_not_done(capsys, check, exercise):
    ok, line = run(capsys, check, not_done)
    assert not ok and line.startswith(f"Exercise {exercise}: not done yet — ")


# --- 4.2 -------------------------------------------------------------------------------------


SOURCE = "04_freeing_and_retain_graph"
twice_solution = answer(SOURCE, "can_backward_twice")


def twice_walk(root, saved_anything=False, remember=True):
    """can_backward_twice with a slip: a node's numbers and sizes counted as saved tensors
    (saved_anything), or no memory of the visited nodes (right, but exponential on diamonds)."""
    stack, seen = [root.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        if remember:
            seen.add(node)
        if node._saved if saved_anything else node.saved_tensors_info():
            return False
        stack.extend(n for n, _ in node.next_functions)
    return True


def twice_any_saved(root):
    return twice_walk(root, saved_anything=True)


def twice_without_seen(root):
    return twice_walk(root, remember=False)


def twice_first_branch_only(root):
    node = root.grad_fn
    while node is not None:
        if node.saved_tensors_info():
            return False
        node = node.next_functions[0][0] if node.next_functions else None
    return True


def twice_by_trying(root):
    root.backward(retain_graph=True)
    return True


@pytest.mark.parametrize(
    "text", [text for text, _ in checks_04.TWICE_PROGRAMS + checks_04.BRANCH_PROGRAMS]
)
def test_twice_programs_agree_between_the_libraries(text):
    import torch

    import mini_autograd as ma

    program = dict(checks_04.TWICE_PROGRAMS + checks_04.BRANCH_PROGRAMS)[text]
    assert checks_04.twice_truth(torch, program) == checks_04.twice_truth(ma, program)


def test_twice_accepts_the_solution(capsys):
    ok, line = run(capsys, check_can_backward_twice, twice_solution)
    assert ok and line.startswith("Exercise 4.2: correct ✓")


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (lambda root: not root.grad_fn.saved_tensors_info(), "saved"),
        (twice_any_saved, "numbers and sizes"),
        (twice_by_trying, "ran a backward pass"),
        (lambda root: "no", "return True or False"),
        (twice_first_branch_only, "not on the next_functions[0] path"),
    ],
    ids=["root-only", "any-saved", "trying", "not-bool", "first-branch-only"],
)
def test_twice_explains_wrong_answers(capsys, answer, words):
    ok, line = run(capsys, check_can_backward_twice, answer)
    assert not ok and line.startswith("Exercise 4.2: ") and words in line, line


def test_twice_ladder_agrees_between_the_libraries():
    import torch

    import mini_autograd as ma

    assert checks_04.twice_truth(torch, checks_04._ladder) is True
    assert checks_04.twice_truth(ma, checks_04._ladder) is True


def test_twice_names_a_walk_without_memory(capsys):
    """Without a set of visited nodes the walk is right on every small program, and on the
    ladder of additions it would take 2**30 steps: the check stops it and says why."""
    ok, line = run(capsys, check_can_backward_twice, twice_without_seen)
    assert not ok and "does not remember the nodes it has visited" in line, line
    assert "Keep the visited nodes" in line


# --- 4.3 -------------------------------------------------------------------------------------


def _losses(x, w, head1, head2):
    h = (x @ w).tanh()
    return ((h @ head1) ** 2).mean(), (h @ head2).sigmoid().sum()


def one_list(lib, x, w, head1, head2):
    lib.autograd.backward(list(_losses(x, w, head1, head2)))


def one_halved(lib, x, w, head1, head2):
    loss1, loss2 = _losses(x, w, head1, head2)
    ((loss1 + loss2) / 2).backward()


def one_retained(lib, x, w, head1, head2):
    loss1, loss2 = _losses(x, w, head1, head2)
    (loss1 + loss2).backward(retain_graph=True)


def one_with_create_graph(lib, x, w, head1, head2):
    loss1, loss2 = _losses(x, w, head1, head2)
    (loss1 + loss2).backward(create_graph=True)


def one_grad_only(lib, x, w, head1, head2):
    lib.autograd.grad(sum(_losses(x, w, head1, head2)), [w, head1, head2])


def one_without_retain(lib, x, w, head1, head2):
    loss1, loss2 = _losses(x, w, head1, head2)
    loss1.backward()
    loss2.backward()


@pytest.mark.parametrize("answer", [answer(SOURCE, "one_backward"), one_list], ids=["sum", "list"])
def test_one_backward_accepts_solutions(capsys, answer):
    ok, line = run(capsys, check_one_backward, answer)
    assert ok and line.startswith("Exercise 4.3: correct ✓")


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (checks_04.two_backwards, "2 backward passes"),
        (one_without_retain, "freed-graph error"),
        (one_halved, "w.grad differs"),
        (one_retained, "retain_graph=True"),
        (one_with_create_graph, "or create_graph=True, which turns it on"),
        (one_grad_only, "must land in .grad"),
        (lambda lib, *tensors: None, "never ran a backward pass"),
    ],
    ids=["two-passes", "no-retain", "halved", "retained", "create-graph", "grad-only", "nothing"],
)
def test_one_backward_explains_wrong_answers(capsys, answer, words):
    ok, line = run(capsys, check_one_backward, answer)
    assert not ok and line.startswith("Exercise 4.3: ") and words in line, line


# --- 4.4 -------------------------------------------------------------------------------------


def make_train(retain, carry, detach_where="update", record="before"):
    """Variants of the running-mean loop: the leak, half-fixes and the fix. detach_where="use"
    detaches the running mean only where the loss uses it: the saved bytes stay flat and the
    weights are right, but the running mean itself keeps growing a graph, step after step.
    "use-and-old-mean" also detaches the old mean in the update: the graph no longer grows, but
    the running mean still holds the nodes of its last update and of the step before.
    "features" detaches this step's features before the loss: no gradient reaches w1.
    "batch-mean" detaches the batch's mean, kept in a name of its own, in the update.
    "logged" keeps (step, loss) pairs in a list; "on-object" keeps the running mean as an
    attribute of an object, detached only where it is used."""

    def train(lib, data, ledger):
        w1 = lib.tensor(data.w1.copy(), requires_grad=True)
        w2 = lib.tensor(data.w2.copy(), requires_grad=True)
        running_mean = lib.zeros(data.w1.shape[1], dtype=lib.float64)
        log, stats = [], types.SimpleNamespace(mean=running_mean)
        for step, (x_np, y_np) in enumerate(zip(data.xs, data.ys)):
            with ledger.step():
                features = (lib.tensor(x_np) @ w1).tanh()
                if detach_where == "features":
                    features = features.detach()
                if detach_where == "before-use":  # a different model: uses this step's mean
                    running_mean = 0.9 * running_mean + 0.1 * features.mean(0)
                used = running_mean.detach() if detach_where.startswith("use") else running_mean
                loss = ((features - used) @ w2 - lib.tensor(y_np)).pow(2).mean()
                if record == "before":
                    ledger.record(loss)
                w1.grad = w2.grad = None
                loss.backward(retain_graph=retain)
                if record == "after":
                    ledger.record(loss)
                if detach_where == "before-use":
                    running_mean = running_mean.detach()
                else:
                    carried = features if carry else features.detach()
                    if detach_where == "use-and-old-mean":
                        running_mean = running_mean.detach()
                    if detach_where == "batch-mean":  # a temporary holds this step's graph
                        batch_mean = carried.mean(0)
                        running_mean = 0.9 * running_mean + 0.1 * batch_mean.detach()
                    else:
                        running_mean = 0.9 * running_mean + 0.1 * carried.mean(0)
                if detach_where == "logged":
                    log.append((step, loss))
                if detach_where == "on-object":
                    stats.mean = 0.9 * stats.mean + 0.1 * features.mean(0)
                    running_mean = stats.mean.detach()
                with lib.no_grad():
                    w1 -= data.lr * w1.grad
                    w2 -= data.lr * w2.grad
        return w1, w2

    return train


def test_fixed_loop_accepts_the_solution(capsys):
    ok, line = run(capsys, check_fixed_loop, answer(SOURCE, "train"))
    assert ok and line.startswith("Exercise 4.4: correct ✓")


def test_fixed_loop_accepts_the_reference(capsys):
    ok, line = run(
        capsys,
        check_fixed_loop,
        lambda lib, data, ledger: checks_04.reference_train(lib, data, ledger),
    )
    assert ok, line


def test_fixed_loop_names_the_graph_that_grows(capsys):
    ok, line = run(capsys, check_fixed_loop, make_train(False, True, detach_where="use"))
    assert not ok and "detach it where it is updated" in line, line
    assert "at step 2, " in line and "at step 20)" in line, line


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (make_train(retain=True, carry=True), "retain_graph=True"),
        (make_train(retain=False, carry=True), "stopped at step 2"),
        (make_train(retain=True, carry=False), "retain_graph=True"),
        (make_train(retain=False, carry=False, detach_where="before-use"), "final w"),
        (lambda lib, data, ledger: None, "return (w1, w2)"),
        (
            make_train(retain=False, carry=True, detach_where="use"),
            "the running mean still records its own history: `running_mean` carries the graph of every earlier step",
        ),
        (
            make_train(retain=False, carry=True, detach_where="use-and-old-mean"),
            "the running mean still records its own history: at step 2, `running_mean` requires grad, and 6 graph nodes hang from it, down into the graph of step 1.",
        ),
        (
            make_train(retain=False, carry=False, detach_where="features"),
            "at step 1: no gradient reached w1, because the loss's graph does not lead back to it (w1.grad stays None after backward)",
        ),
        (make_train(retain=False, carry=False, record=None), "recorded 0 steps in the ledger"),
        (make_train(retain=False, carry=False, record="after"), "record the loss before backward"),
        (
            make_train(retain=False, carry=False, detach_where="logged"),
            "`log` keeps a tensor of every step with its graph",
        ),
        (
            make_train(retain=False, carry=False, detach_where="on-object"),
            "`stats` keeps a tensor of every step with its graph",
        ),
    ],
    ids=[
        "leak",
        "carry",
        "retain-only",
        "other-model",
        "no-return",
        "detached-where-used",
        "detached-where-used-graph-not-growing",
        "features-detached",
        "no-ledger",
        "recorded-after-backward",
        "logged-losses",
        "running-mean-on-an-object",
    ],
)
def test_fixed_loop_explains_wrong_answers(capsys, answer, words):
    ok, line = run(capsys, check_fixed_loop, answer)
    assert not ok and line.startswith("Exercise 4.4: ") and words in line, line


def test_fixed_loop_accepts_a_temporary_that_holds_the_last_features(capsys):
    """A name other than the running mean that still holds last step's features at backward (until
    it is reassigned) keeps no history of its own: the check does not flag it."""
    train = make_train(retain=False, carry=True, detach_where="batch-mean")
    ok, line = run(capsys, check_fixed_loop, train)
    assert ok and line.startswith("Exercise 4.4: correct ✓"), line
