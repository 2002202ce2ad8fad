"""course.check: one plain-words line per check, never a traceback for an ordinary mistake."""

import numpy as np
import pytest
import torch

from course.check import check, named_mistake, numeric_derivative, verdict

POINTS = [np.linspace(-2.0, 2.0, 5), np.array([[0.5, -1.5], [2.5, 0.0]])]


def square(x):
    return x**2


def double(x):
    return 2 * x


def torch_double(x):
    return torch.autograd.grad(torch.sum(x**2), x)[0]


def run(capsys, learner, **kwargs):
    """Call check for d/dx x**2 and return (result, printed lines)."""
    result = check(
        "9.1", learner, numeric_derivative(square), POINTS, torch_fn=torch_double, **kwargs
    )
    return result, capsys.readouterr().out.splitlines()


def test_correct_answer_prints_success(capsys):
    result, lines = run(capsys, double)
    assert result
    assert lines == ["Exercise 9.1: correct ✓ — matches the reference and PyTorch on 2 input(s)."]


def test_wrong_values_say_where_and_by_how_much(capsys):
    result, lines = run(capsys, lambda x: 2 * x + 0.5, hint="d/dx x**2 = 2x")
    assert not result
    assert len(lines) == 1
    assert "does not match the reference on input 1" in lines[0]
    assert "5 of 5 values differ" in lines[0]
    assert "expected -4, got -3.5" in lines[0]
    assert lines[0].endswith("Hint: d/dx x**2 = 2x")


def test_wrong_shape_is_named(capsys):
    result, lines = run(capsys, lambda x: np.sum(2 * x))
    assert not result
    assert "wrong shape: expected (5,), got ()" in lines[0]


def test_crash_is_reported_without_traceback(capsys):
    def crashing(x):
        return x @ np.ones(3)

    result, lines = run(capsys, crashing)
    assert not result
    assert len(lines) == 1
    assert lines[0].startswith("Exercise 9.1: your code raised ValueError:")
    assert "(input 1: array of shape (5,))" in lines[0]
    assert "Traceback" not in lines[0]


def test_unfilled_exercise_prints_one_not_done_line(capsys):
    def unfilled(x):
        raise NotImplementedError("Exercise 9.1: derivative of x**2")

    result, lines = run(capsys, unfilled, hint="use the power rule")
    assert not result
    assert lines == ["Exercise 9.1: not done yet — use the power rule"]


def test_disagreement_with_torch_only_is_caught(capsys):
    result = check("9.2", np.sin, np.sin, POINTS, torch_fn=torch.cos)
    assert not result
    assert "does not match PyTorch" in capsys.readouterr().out


def test_torch_only_check_and_scalar_result(capsys):
    assert check("9.3", np.sum, inputs=POINTS, torch_fn=torch.sum)
    assert not check("9.3", lambda x: np.sum(x) + 1, inputs=POINTS, torch_fn=torch.sum)
    assert "expected 0, got 1" in capsys.readouterr().out


def test_a_check_needs_something_to_compare_with():
    with pytest.raises(ValueError, match="reference_fn, a torch_fn, or both"):
        check("9.4", double, inputs=POINTS)


def test_numeric_derivative_matches_calculus():
    np.testing.assert_allclose(numeric_derivative(np.sin)(POINTS[0]), np.cos(POINTS[0]), atol=1e-8)


def test_a_verdict_is_true_or_false_and_shows_nothing_in_jupyter(capsys):
    right = check("9.4", np.sin, np.sin, POINTS)
    wrong = check("9.4", np.cos, np.sin, POINTS)
    assert (bool(right), bool(wrong)) == (True, False)
    assert right._ipython_display_() is None  # IPython calls it instead of showing Out[n]
    with pytest.raises(TypeError, match="a check must find True or False"):
        verdict(lambda: "correct")()


def test_named_mistake_names_the_first_mistake_the_result_makes():
    mistakes = [("twice", 4.0), ("squared", 9.0), ("also squared", 9.0)]
    same = lambda wrong: np.isclose(9.0, wrong)  # noqa: E731
    assert named_mistake(same, mistakes) == "squared"
    assert named_mistake(lambda wrong: np.isclose(5.0, wrong), mistakes) is None


def test_named_mistake_computes_no_result_after_the_one_that_matches():
    computed = []

    def mistakes():
        for words, value in [("first", 1.0), ("second", 2.0), ("third", 3.0)]:
            computed.append(words)
            yield words, value

    assert named_mistake(lambda wrong: wrong == 2.0, mistakes()) == "second"
    assert computed == ["first", "second"]
