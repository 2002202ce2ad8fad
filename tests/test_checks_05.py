"""The checkers of chapter 05 accept the solutions and explain plausible mistakes in one line."""

import pytest

import mini_autograd as ma
from course import checks_05
from tests.exercise_answers import answer, not_done

# --- 5.2 ---------------------------------------------------------------------------------------


hvp_solution = answer("05_create_graph", "hvp")


def hvp_without_create_graph(f, x, v):
    (g,) = ma.autograd.grad(f(x), x)
    (hv,) = ma.autograd.grad((g * v).sum(), x)
    return hv


def hvp_detached_gradient(f, x, v):
    (g,) = ma.autograd.grad(f(x), x, create_graph=True)
    (hv,) = ma.autograd.grad((g.detach() * v).sum(), x, allow_unused=True)
    return hv


def hvp_data_gradient(f, x, v):
    (g,) = ma.autograd.grad(f(x), x, create_graph=True)
    (hv,) = ma.autograd.grad((g.data * v).sum(), x)
    return hv


def hvp_gradient_times_v(f, x, v):
    (g,) = ma.autograd.grad(f(x), x)
    return g * v


def hvp_through_backward(f, x, v):
    (g,) = ma.autograd.grad(f(x), x, create_graph=True)
    (g * v).sum().backward()
    return x.grad


def hvp_tuple(f, x, v):
    (g,) = ma.autograd.grad(f(x), x, create_graph=True)
    return ma.autograd.grad((g * v).sum(), x)


def hvp_through_the_hessian(f, x, v):
    (g,) = ma.autograd.grad(f(x), x, create_graph=True)
    rows = [ma.autograd.grad(g[i], x, retain_graph=True)[0] for i in range(len(g))]
    return (ma.stack(rows) * v).sum(1)


def _gradient_at(f, x):
    x = x.detach().requires_grad_(True)
    return ma.autograd.grad(f(x), x)[0]


def hvp_by_finite_differences(f, x, v, eps=1e-4):
    return (_gradient_at(f, x + eps * v) - _gradient_at(f, x - eps * v)) / (2 * eps)


def hvp_through_backward_reset(f, x, v):
    f(x).backward(create_graph=True)
    g, x.grad = x.grad, None
    (g * v).sum().backward()
    hv, x.grad = x.grad, None
    return hv


ALIAS = ma.autograd.grad  # a name of the learner's own, taken before the check runs


def hvp_through_an_alias(f, x, v):
    (g,) = ALIAS(f(x), x, create_graph=True)
    return ALIAS((g * v).sum(), x)[0]


def hessian_through_an_alias(f, x):
    (g,) = ALIAS(f(x), x, create_graph=True)
    return ma.stack([ALIAS(g[i], x, retain_graph=True)[0] for i in range(x.shape[0])])


def hvp_as_numpy(f, x, v):
    return hvp_solution(f, x, v).detach().numpy()


def hessian_as_a_list(f, x):
    (g,) = ma.autograd.grad(f(x), x, create_graph=True)
    return [ma.autograd.grad(g[i], x, retain_graph=True)[0] for i in range(x.shape[0])]


def test_results_that_are_not_tensors_are_named(one_line):
    assert not checks_05.check_hvp(hvp_as_numpy)
    assert "your result is a ndarray, not a tensor" in one_line("Exercise 5.2: ")
    assert not checks_05.check_hessian(hessian_as_a_list)
    assert "your Hessian is a list, not a tensor" in one_line("Exercise 5.4: ")


def test_grad_under_another_name_is_counted(one_line):
    assert checks_05.check_hvp(hvp_through_an_alias)
    assert "Exercise 5.2: correct ✓" in one_line()
    assert checks_05.check_hessian(hessian_through_an_alias)
    assert "Exercise 5.4: correct ✓" in one_line()


def test_hvp_accepts_the_solution(one_line):
    assert checks_05.check_hvp(hvp_solution)
    assert "Exercise 5.2: correct ✓" in one_line()


@pytest.mark.parametrize(
    "wrong, expected",
    [
        (hvp_without_create_graph, "needs create_graph=True"),
        (hvp_detached_gradient, "though your autograd.grad call had create_graph=True"),
        (hvp_data_gradient, "The gradient was detached on the way"),
        (hvp_gradient_times_v, "equals the gradient times v"),
        (hvp_tuple, "unpack it"),
        (hvp_through_backward, "left a gradient in x.grad"),
        (hvp_through_the_hessian, "a Hessian built row by row costs one backward pass per row"),
        (hvp_by_finite_differences, "no autograd.grad call kept the gradient's graph"),
        (hvp_through_backward_reset, "no ma.autograd.grad call of yours made it"),
        (not_done, "Exercise 5.2: not done yet — "),
    ],
    ids=[
        "no-create-graph",
        "detached",
        "data",
        "gradient-times-v",
        "tuple",
        "backward",
        "hessian",
        "finite-differences",
        "backward-reset",
        "stub",
    ],
)
def test_hvp_explains_mistakes(one_line, wrong, expected):
    assert not checks_05.check_hvp(wrong)
    assert expected in one_line("Exercise 5.2: ")


# --- 5.3 ---------------------------------------------------------------------------------------


penalty_solution = answer("05_create_graph", "gradient_penalty")


def one_sided(norms):
    return ((norms - 1).clamp(min=0) ** 2).mean()


def penalty_without_create_graph(lib, critic, x_hat):
    (g,) = lib.autograd.grad(critic(x_hat).sum(), x_hat)
    return one_sided((g * g).sum(1).sqrt())


def penalty_one_norm_for_the_batch(lib, critic, x_hat):
    (g,) = lib.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    return one_sided((g * g).sum().sqrt())


def penalty_one_norm_per_feature(lib, critic, x_hat):
    (g,) = lib.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    return one_sided((g * g).sum(0).sqrt())


def penalty_two_sided(lib, critic, x_hat):
    """The chapter's WGAN-GP penalty, which also charges the norms below 1."""
    (g,) = lib.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    return (((g * g).sum(1).sqrt() - 1) ** 2).mean()


def penalty_squared_norm(lib, critic, x_hat):
    (g,) = lib.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    return one_sided((g * g).sum(1))


def penalty_detached_norm(lib, critic, x_hat):
    (g,) = lib.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    return one_sided((g * g).sum(1).sqrt().detach())


def penalty_with_backward(lib, critic, x_hat):
    critic(x_hat).sum().backward(create_graph=True)
    g = x_hat.grad
    return one_sided((g * g).sum(1).sqrt())


def test_gradient_penalty_accepts_the_solution(one_line):
    assert checks_05.check_gradient_penalty(penalty_solution)
    assert "Exercise 5.3: correct ✓" in one_line()


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@pytest.mark.parametrize(
    "wrong, expected",
    [
        (penalty_without_create_graph, "computed without create_graph=True"),
        (penalty_one_norm_for_the_batch, "one norm for the whole batch"),
        (
            penalty_one_norm_per_feature,
            "it looks like one norm per feature (over the batch) instead of one per sample",
        ),
        (penalty_two_sided, "the two-sided penalty of the chapter"),
        (penalty_squared_norm, "the squared norm instead of the norm"),
        (penalty_with_backward, "filled the critic's .grad"),
        (penalty_detached_norm, "the penalty lost it on the way"),
        (not_done, "Exercise 5.3: not done yet — "),
    ],
    ids=[
        "no-create-graph",
        "batch-norm",
        "per-feature-norm",
        "two-sided",
        "squared-norm",
        "backward",
        "detached-norm",
        "stub",
    ],
)
def test_gradient_penalty_explains_mistakes(one_line, wrong, expected):
    assert not checks_05.check_gradient_penalty(wrong)
    assert expected in one_line("Exercise 5.3: ")


# --- 5.4 ---------------------------------------------------------------------------------------


hessian_solution = answer("05_create_graph", "hessian")


def hessian_without_retain_graph(f, x):
    (g,) = ma.autograd.grad(f(x), x, create_graph=True)
    return ma.stack([ma.autograd.grad(g[i], x)[0] for i in range(x.shape[0])])


def hessian_without_create_graph(f, x):
    (g,) = ma.autograd.grad(f(x), x)
    return ma.stack([ma.autograd.grad(g[i], x, retain_graph=True)[0] for i in range(x.shape[0])])


def hessian_detached_gradient(f, x):
    (g,) = ma.autograd.grad(f(x), x, create_graph=True)
    g = g.detach()
    return ma.stack([ma.autograd.grad(g[i], x, retain_graph=True)[0] for i in range(x.shape[0])])


def hessian_gradient_per_row(f, x):
    rows = []
    for i in range(x.shape[0]):
        (g,) = ma.autograd.grad(f(x), x, create_graph=True)
        rows.append(ma.autograd.grad(g[i], x)[0])
    return ma.stack(rows)


def hessian_by_finite_differences(f, x, eps=1e-4):
    steps = eps * ma.eye(x.shape[0], dtype=x.dtype)
    return ma.stack([(_gradient_at(f, x + e) - _gradient_at(f, x - e)) / (2 * eps) for e in steps])


def hessian_rows_through_backward(f, x):
    (g,) = ma.autograd.grad(f(x), x, create_graph=True)
    rows = []
    for i in range(x.shape[0]):
        g[i].backward(retain_graph=True)
        rows.append(x.grad.clone())  # .grad adds up: row i holds rows 0 to i
    return ma.stack(rows)


def hessian_leaving_grad(f, x):
    (g,) = ma.autograd.grad(f(x), x, create_graph=True)
    rows = []
    for i in range(x.shape[0]):
        x.grad = None
        g[i].backward(retain_graph=True)
        rows.append(x.grad.clone())
    return ma.stack(rows)


def hessian_from_the_library(f, x):
    return ma.autograd.functional.hessian(f, x)


def hessian_returns_gradient(f, x):
    (g,) = ma.autograd.grad(f(x), x)
    return g


def test_hessian_accepts_the_solution(one_line):
    assert checks_05.check_hessian(hessian_solution)
    assert "Exercise 5.4: correct ✓" in one_line()


@pytest.mark.parametrize(
    "wrong, expected",
    [
        (hessian_without_retain_graph, "Pass retain_graph=True"),
        (hessian_without_create_graph, "needs create_graph=True"),
        (hessian_detached_gradient, "The gradient was detached on the way"),
        (hessian_returns_gradient, "one row per entry of x"),
        (hessian_gradient_per_row, "the gradient g was computed again for every row"),
        (hessian_from_the_library, "no ma.autograd.grad call of yours made it"),
        (hessian_by_finite_differences, "no autograd.grad call kept the gradient's graph"),
        (hessian_rows_through_backward, "the sum of the rows so far"),
        (hessian_leaving_grad, "it left a gradient in x.grad"),
        (not_done, "Exercise 5.4: not done yet — "),
    ],
    ids=[
        "no-retain-graph",
        "no-create-graph",
        "detached",
        "gradient",
        "per-row",
        "library",
        "finite-differences",
        "grad-adds-up",
        "grad-left",
        "stub",
    ],
)
def test_hessian_explains_mistakes(one_line, wrong, expected):
    assert not checks_05.check_hessian(wrong)
    assert expected in one_line("Exercise 5.4: ")
