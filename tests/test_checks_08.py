"""course.checks_08: each check accepts right answers and explains likely wrong ones, in a line."""

import pytest
import torch

from course.checks_08 import (
    check_fixed_loop,
    check_linking_tensor,
    doctors_name,
    make_model,
    reference_loop,
    smoothing_data,
)
from tests.exercise_answers import answer, not_done

SOURCE = "08_debugging_your_loop"

# --- 8.1 ---------------------------------------------------------------------------------------


def test_the_doctor_names_previous():
    assert doctors_name() == "previous"


def test_linking_tensor_accepts_the_solution(one_line):
    assert check_linking_tensor(answer(SOURCE, "linking_tensor"))
    assert one_line().startswith("Exercise 8.1: correct ✓")


@pytest.mark.parametrize(
    "answer", ["previous", "`previous`", " previous (its value from the previous iteration) "]
)
def test_linking_tensor_accepts_the_doctors_name(one_line, answer):
    assert check_linking_tensor(lambda: answer)
    assert one_line().startswith("Exercise 8.1: correct ✓ — `previous` keeps")


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("prediction", "`prediction` is what ends up in the tensor that links them"),
        ("loss", "`loss` is made anew in every iteration"),
        ("xs", "`xs` is data, and it does not require grad here"),
        ("model.0.weight", "sounds like the model or a parameter"),
        ("h", "the doctor does not name `h`"),
        (42, "return the name as a string, such as 'loss', not int"),
    ],
)
def test_linking_tensor_explains_wrong_names(one_line, answer, expected):
    assert not check_linking_tensor(lambda: answer)
    line = one_line("Exercise 8.1: ")
    assert expected in line, line
    assert "correct" not in line


def test_linking_tensor_stub_and_exception(one_line):
    assert not check_linking_tensor(not_done)
    assert one_line().startswith("Exercise 8.1: not done yet — run the broken loop under")
    assert not check_linking_tensor(lambda: 1 / 0)
    assert one_line() == "Exercise 8.1: your code raised ZeroDivisionError: division by zero"


# --- 8.2 ---------------------------------------------------------------------------------------


KEEPS_THE_GRAPH = (
    "broken",
    "detach at use",
    "retain",
    "retain, no step",
    "autograd.backward retained",
    "grad retained",
)


def smoothed(xs, ys, model, lr=0.05, smooth=0.1, variant="detach"):
    """The exercise's loop, with the learner's fix (or mistake) `variant`."""
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    previous, losses, total, history = None, [], 0, []
    for x, y in zip(xs, ys):
        if variant == "re-init":
            previous = None
        prediction = model(x)
        if variant == "detached prediction":
            prediction = prediction.detach().requires_grad_()
        loss = torch.nn.functional.mse_loss(prediction, y)
        if previous is not None:
            if variant == "detach at use":
                previous = previous.detach()
            current = prediction.detach() if variant == "detach both" else prediction
            if variant == "no_grad penalty":
                with torch.no_grad():
                    penalty = (prediction - previous).pow(2).mean()
            else:
                penalty = (current - previous).pow(2).mean()
            loss = loss + smooth * penalty
        if variant == "detach the loss":
            loss = loss.detach()
        if variant not in ("no zero_grad", "zero_grad after backward"):
            optimizer.zero_grad()
        if variant == "autograd.backward retained":
            torch.autograd.backward(loss, None, True)  # positional retain_graph
        elif variant == "grad retained":
            params = list(model.parameters())
            for p, g in zip(params, torch.autograd.grad(loss, params, retain_graph=True)):
                p.grad = g
        else:
            loss.backward(
                retain_graph=variant.startswith("retain") or variant == "detach, retained"
            )
        if variant == "zero_grad after backward":
            optimizer.zero_grad()
        if variant not in ("no step", "retain, no step"):
            optimizer.step()
        if variant in KEEPS_THE_GRAPH:  # the broken line
            previous = prediction
        elif variant == "detach_":
            previous = prediction.detach_()
        elif variant == "clone":
            previous = prediction.clone()
        elif variant == "under no_grad":
            with torch.no_grad():
                previous = prediction * 1
        else:
            previous = prediction.detach()
        losses.append(loss.detach() if variant == "tensor losses" else loss.item())
        if variant == "tensor total":
            total = total + loss  # a running total as a tensor: it holds every step's graph
        if variant == "logged pairs":
            history.append((x, prediction))  # each pair holds its step's graph
    if variant == "no return":
        return None
    return losses[:-1] if variant == "too short" else losses


train_smooth = answer(SOURCE, "train_smooth")


def test_fixed_loop_accepts_the_solution(one_line):
    assert check_fixed_loop(train_smooth)
    assert one_line().startswith("Exercise 8.2: correct ✓")


def variant(name, **kwargs):
    return lambda xs, ys, model: smoothed(xs, ys, model, variant=name, **kwargs)


def test_the_reference_is_the_solution_and_the_broken_loop_fails():
    xs, ys = smoothing_data()
    assert reference_loop(xs, ys, make_model()) == train_smooth(xs, ys, make_model())
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        reference_loop(xs, ys, make_model(), variant="broken")


@pytest.mark.parametrize("fix", ["detach", "detach at use", "detach_", "under no_grad"])
def test_fixed_loop_accepts_right_fixes(one_line, fix):
    assert check_fixed_loop(variant(fix))
    line = one_line()
    assert line == (
        "Exercise 8.2: correct ✓ — all 12 steps train with the reference run's losses, and no "
        "backward keeps its graph."
    )


def test_fixed_loop_accepts_data_and_tensor_losses_with_a_note(one_line):
    def with_data(xs, ys, model):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        previous, losses = None, []
        for x, y in zip(xs, ys):
            prediction = model(x)
            loss = torch.nn.functional.mse_loss(prediction, y)
            if previous is not None:
                loss = loss + 0.1 * (prediction - previous).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            previous = prediction.data
            losses.append(loss.item())
        return losses

    assert check_fixed_loop(with_data)
    assert "(note: `.data` works here, but `.detach()` is the safe cut" in one_line()

    def with_a_comment(xs, ys, model):
        return smoothed(xs, ys, model)  # not .data: .detach() keeps the version check

    assert check_fixed_loop(with_a_comment)
    assert "note" not in one_line()
    assert check_fixed_loop(variant("tensor losses"))
    assert "you returned a tensor where a float is asked" in one_line()


@pytest.mark.parametrize(
    ("mistake", "expected"),
    [
        ("retain", "retain_graph=True is the wrong fix here"),
        ("retain", "hence the in-place error"),
        ("autograd.backward retained", "hence the in-place error"),
        ("grad retained", "retain_graph=True is the wrong fix here"),
        ("retain, no step", "it runs, but retain_graph=True is the wrong fix here"),
        ("retain, no step", "memory and time per step grow with every step"),
        ("re-init", "the loop without its smoothness term"),
        ("detach both", "the smoothness term sends no gradient to this step's prediction"),
        ("no_grad penalty", "the smoothness term sends no gradient to this step's prediction"),
        ("no zero_grad", "optimizer.zero_grad() is missing"),
        ("no step", "the model never learns"),
        ("zero_grad after backward", "not between backward and step"),
        ("detach, retained", "the losses are right, but a backward keeps its graph"),
        ("clone", "`clone()` would copy the graph too"),
        ("broken", "still reaches into the first step's freed graph"),
        ("detach the loss", "no gradient reaches the parameters any more"),
        ("no return", "your function returned None; return the list of the 12 losses"),
        ("tensor total", "`total` holds the graph of every earlier step"),
        ("logged pairs", "`history` holds the graph of every earlier step"),
        ("detached prediction", "no backward reaches the model's parameters"),
        ("too short", "expected 12 losses, one per step, got 11"),
    ],
)
def test_fixed_loop_explains_wrong_fixes(one_line, mistake, expected):
    assert not check_fixed_loop(variant(mistake))
    line = one_line("Exercise 8.2: ")
    assert expected in line, line
    assert "correct" not in line and "Traceback" not in line


def test_fixed_loop_other_numbers_and_exceptions(one_line):
    assert not check_fixed_loop(variant("detach", lr=0.1))
    assert "keep the loop as it was (model, data, lr, smooth" in one_line(
        "Exercise 8.2: the loss of step 1 is "
    )

    def planted(xs, ys, model):
        raise ValueError("a planted bug")

    assert not check_fixed_loop(planted)
    assert one_line() == "Exercise 8.2: your code raised ValueError: a planted bug"
    assert not check_fixed_loop(not_done)
    assert one_line().startswith("Exercise 8.2: not done yet — copy broken_train")


def test_the_spy_leaves_torch_as_it_was(capsys):
    originals = torch.autograd.backward, torch.autograd.grad
    check_fixed_loop(variant("retain"))
    capsys.readouterr()
    assert (torch.autograd.backward, torch.autograd.grad) == originals
