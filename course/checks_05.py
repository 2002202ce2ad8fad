"""Checks for the exercises of chapter 05 (create_graph and higher-order derivatives).

Each check runs the learner's function with mini_autograd (the penalty with torch too), compares
what it returns with PyTorch (the Hessian-vector product with finite differences too), and prints
one plain-words line: correct, "not done yet", or what differs and a hint. An ordinary mistake
never escapes as a traceback::

    check_hvp(hvp)                             # 5.2: a Hessian-vector product
    check_gradient_penalty(gradient_penalty)   # 5.3: the WGAN-GP penalty, both libraries
    check_hessian(hessian)                     # 5.4: the full Hessian, row by row

Exercise 5.1 (sigmoid's differentiable backward formula) is no longer checked here: the learner
writes it in exercises/my_autograd.py, checked by the build track (course/specs.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import mini_autograd as ma
from course.check import _difference, verdict

ATOL, RTOL = 1e-6, 1e-5
FREED = "Trying to backward through the graph a second time"
NO_GRAPH = "does not require grad"


class _Mistake(Exception):
    """A mistake found while running the learner's code, already in plain words."""


class _NotDone(Exception):
    """The learner's code still raises NotImplementedError."""


def _label(exercise_id: str) -> str:
    return f"Exercise {exercise_id}"


def _run(exercise_id: str, stub_hint: str, hint: str, body: Callable[[], str]) -> bool:
    """Run one check body; print its single line of feedback; True on success.

    `stub_hint` goes with "not done yet" (a nudge, not the answer); `hint` with a mistake.
    """
    label = _label(exercise_id)
    try:
        success = body()
    except _NotDone:
        print(f"{label}: not done yet — {stub_hint}")
        return False
    except _Mistake as mistake:
        print(f"{label}: {mistake}")
        return False
    except Exception as error:  # anything else the learner's code raised: say so, in one line
        first = str(error).splitlines()[0] if str(error) else ""
        print(f"{label}: your code raised {type(error).__name__}: {first}. Hint: {hint}.")
        return False
    print(f"{label}: correct ✓ — {success}")
    return True


def _array(value, what: str) -> np.ndarray:
    """`value` (a tensor of either library, or an array) as float64 numpy, or a _Mistake."""
    if isinstance(value, (tuple, list)) and len(value) == 1 and hasattr(value[0], "detach"):
        raise _Mistake(
            f"{what} is a tuple holding one tensor; autograd.grad returns a tuple, so unpack it: "
            "`(g,) = ma.autograd.grad(...)`."
        )
    if isinstance(value, (tuple, list)) and value and all(hasattr(v, "detach") for v in value):
        value = np.stack([v.detach().cpu().numpy() for v in value])
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    if value is None:
        raise _Mistake(f"{what} is None; return a tensor.")
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise _Mistake(f"{what} is a {type(value).__name__}, not a tensor.") from None


def _compare(got: np.ndarray, expected: np.ndarray, what: str, hint: str, atol=ATOL) -> None:
    problem = _difference(got, expected, atol, RTOL)
    if problem:
        raise _Mistake(f"{what}: {problem}." + (f" Hint: {hint}." if hint else ""))


def _torch():
    import torch

    return torch


# --- 5.2: a Hessian-vector product -------------------------------------------------------------

HVP_START = (
    "two ma.autograd.grad calls: the gradient of f(x) with its graph kept, then the gradient "
    "of (g * v).sum()"
)
HVP_HINT = (
    "keep the graph of the gradient g (create_graph=True), then differentiate (g * v).sum() "
    "with respect to x"
)


def _hvp_cases(lib):
    """(f, x, v) problems written once for either library."""
    rng = np.random.default_rng(50)
    A = lib.tensor(rng.normal(size=(3, 4)), dtype=lib.float64)

    def quartic(x):
        return (x**4).sum() / 12 + (x[0] * x[1] * x[2])

    def layer(x):
        return (A @ x).tanh().sum() + (x * x.sigmoid()).sum()

    return [
        (quartic, rng.normal(size=3), rng.normal(size=3)),
        (layer, rng.normal(size=4), rng.normal(size=4)),
    ]


def _gradient(lib, f, x_np: np.ndarray) -> np.ndarray:
    x = lib.tensor(x_np, dtype=lib.float64, requires_grad=True)
    (g,) = lib.autograd.grad(f(x), x)
    return g.detach().cpu().numpy()


def _explain_runtime_error(error: RuntimeError, during: str) -> None:
    """Turn the engine's errors that this chapter teaches into plain words (else re-raise)."""
    text = str(error)
    if NO_GRAPH in text:
        raise _Mistake(
            f"{during} raised '{text.splitlines()[0]}': the gradient you differentiate has no "
            "graph. The first autograd.grad call needs create_graph=True."
        ) from None
    if FREED in text:
        raise _Mistake(
            f"{during} raised 'Trying to backward through the graph a second time': the graph "
            "of the gradient is walked again, so the call that goes through it more than once "
            "needs retain_graph=True."
        ) from None
    raise error


@verdict
def check_hvp(learner_hvp: Callable, exercise_id: str = "5.2") -> bool:
    """Compare the learner's hvp(f, x, v) with torch's, with H @ v and with finite differences."""
    torch = _torch()

    def body():
        for number, ((f, x_np, v_np), (f_t, _, _)) in enumerate(
            zip(_hvp_cases(ma), _hvp_cases(torch)), start=1
        ):
            x = ma.tensor(x_np, dtype=ma.float64, requires_grad=True)
            v = ma.tensor(v_np, dtype=ma.float64)
            try:
                got = learner_hvp(f, x, v)
            except NotImplementedError:
                raise _NotDone() from None
            except RuntimeError as error:
                _explain_runtime_error(error, f"on problem {number}, your hvp")
            got = _array(got, "your result")
            _, expected = torch.autograd.functional.hvp(f_t, torch.tensor(x_np), torch.tensor(v_np))
            expected = expected.numpy()
            if got.shape != x_np.shape:
                raise _Mistake(
                    f"on problem {number} your result has shape {got.shape}; Hv has the shape "
                    f"of x, {x_np.shape}. Hint: {HVP_HINT}."
                )
            g = _gradient(ma, f, x_np)
            for name, wrong in (("the gradient itself", g), ("the gradient times v", g * v_np)):
                if np.allclose(got, wrong, atol=ATOL) and not np.allclose(got, expected, atol=ATOL):
                    raise _Mistake(
                        f"on problem {number} your result equals {name}, not Hv: differentiate "
                        "once more. Hint: " + HVP_HINT + "."
                    )
            _compare(got, expected, f"on problem {number} your Hv differs from PyTorch's", HVP_HINT)
            eps = 1e-5
            finite = (_gradient(ma, f, x_np + eps * v_np) - _gradient(ma, f, x_np - eps * v_np)) / (
                2 * eps
            )
            _compare(
                got, finite, f"on problem {number} your Hv differs from finite differences", ""
            )
        return "your Hv matches PyTorch's hvp and finite differences on 2 problems."

    return _run(exercise_id, HVP_START, HVP_HINT, body)


# --- 5.3: the WGAN-GP gradient penalty ---------------------------------------------------------

PENALTY_START = (
    "the gradient of the scores with respect to x_hat, with its graph kept; one norm per "
    "sample; then the mean of (norm - 1) ** 2"
)
PENALTY_HINT = (
    "keep the graph of the input gradient (create_graph=True); one norm per sample, "
    "(g * g).sum(1).sqrt(); then the mean of (norm - 1) ** 2"
)


def _critic(lib, arrays):
    """A tiny critic, x -> linear(tanh(linear(x))), with the given weights, in either library."""

    class Critic(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w1, self.b1, self.w2, self.b2 = (
                lib.nn.Parameter(lib.tensor(a, dtype=lib.float64)) for a in arrays
            )

        def forward(self, x):
            F = lib.nn.functional
            return F.linear(F.linear(x, self.w1, self.b1).tanh(), self.w2, self.b2)

    return Critic()


def _penalty_problem():
    rng = np.random.default_rng(53)
    arrays = [rng.normal(size=(6, 3)), rng.normal(size=6), rng.normal(size=(1, 6)), np.zeros(1)]
    real, fake = rng.normal(size=(5, 3)), rng.normal(loc=1.5, size=(5, 3))
    mix = rng.uniform(size=(5, 1))
    return arrays, mix * real + (1 - mix) * fake


def _reference_penalty(arrays, x_hat_np):
    """(penalty, {name: grad}, variants) from torch, with a known-correct implementation."""
    torch = _torch()
    critic = _critic(torch, arrays)
    x_hat = torch.tensor(x_hat_np, requires_grad=True)
    (g,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    norms = g.pow(2).sum(1).sqrt()
    penalty = ((norms - 1) ** 2).mean()
    penalty.backward()
    grads = {n: None if p.grad is None else p.grad.numpy() for n, p in critic.named_parameters()}
    g_np = g.detach().numpy()
    variants = {
        "one norm for the whole batch instead of one per sample: sum over dim 1 only": (
            (np.sqrt((g_np**2).sum()) - 1) ** 2
        ),
        "the squared norm instead of the norm: take .sqrt() of the sum of squares": (
            ((g_np**2).sum(1) - 1) ** 2
        ).mean(),
        "the sum over samples instead of the mean: use .mean()": (
            ((np.sqrt((g_np**2).sum(1)) - 1) ** 2).sum()
        ),
    }
    return penalty.item(), grads, variants


@verdict
def check_gradient_penalty(learner_penalty: Callable, exercise_id: str = "5.3") -> bool:
    """Run the learner's gradient_penalty(lib, critic, x_hat) with both libraries; compare."""
    arrays, x_hat_np = _penalty_problem()
    expected, expected_grads, variants = _reference_penalty(arrays, x_hat_np)

    def body():
        for lib in (ma, _torch()):
            name = lib.__name__
            critic = _critic(lib, arrays)
            x_hat = lib.tensor(x_hat_np, dtype=lib.float64, requires_grad=True)
            try:
                penalty = learner_penalty(lib, critic, x_hat)
            except NotImplementedError:
                raise _NotDone() from None
            if not hasattr(penalty, "detach"):
                raise _Mistake(
                    f"with {name} your function returned a {type(penalty).__name__}; return the "
                    "penalty as a tensor (no .item()), so that it can be backwarded."
                )
            got = _array(penalty, "your penalty")
            if got.size != 1:
                raise _Mistake(
                    f"with {name} your penalty has shape {got.shape}; it should be one number: "
                    "the mean over the samples."
                )
            filled = [n for n, p in critic.named_parameters() if p.grad is not None]
            if filled:
                raise _Mistake(
                    f"with {name} your function filled the critic's .grad ({', '.join(filled)}): "
                    "it used backward(); use lib.autograd.grad, which returns the input gradient "
                    "and leaves the weights' .grad alone."
                )
            value = got.item()
            if not np.isclose(value, expected, atol=ATOL, rtol=RTOL):
                for mistake, wrong in variants.items():
                    if np.isclose(value, wrong, atol=ATOL, rtol=RTOL):
                        raise _Mistake(
                            f"with {name} your penalty is {value:.6g}, expected {expected:.6g}: "
                            f"it looks like {mistake}."
                        )
                raise _Mistake(
                    f"with {name} your penalty is {value:.6g}, expected {expected:.6g}. "
                    f"Hint: {PENALTY_HINT}."
                )
            try:
                penalty.backward()
            except RuntimeError as error:
                if NO_GRAPH in str(error):
                    raise _Mistake(
                        f"with {name} the penalty's value is right, but penalty.backward() says "
                        f"'{str(error).splitlines()[0]}': the penalty does not depend on the "
                        "weights, because the input gradient was computed without "
                        "create_graph=True."
                    ) from None
                raise
            for pname, p in critic.named_parameters():
                want = expected_grads[pname]
                if p.grad is None or want is None:
                    if (p.grad is None) != (want is None):
                        has = "no gradient" if p.grad is None else "a gradient"
                        raise _Mistake(
                            f"with {name} the weight {pname} gets {has}, unlike in the reference."
                        )
                    continue
                _compare(
                    _array(p.grad, pname),
                    want,
                    f"with {name} the penalty's gradient for {pname} differs",
                    PENALTY_HINT,
                )
        return (
            "same penalty and same weight gradients as the reference, with mini_autograd and "
            "with torch."
        )

    return _run(exercise_id, PENALTY_START, PENALTY_HINT, body)


# --- 5.4: the full Hessian, row by row ---------------------------------------------------------

HESSIAN_START = (
    "the gradient g of f(x) with its graph kept, then one autograd.grad call per entry g[i]; "
    "each gives one row"
)
HESSIAN_HINT = (
    "keep the graph of the gradient g (create_graph=True); row i is the gradient of g[i] with "
    "respect to x; stack the rows with ma.stack"
)


def _hessian_cases(lib):
    rng = np.random.default_rng(54)
    A = lib.tensor(rng.normal(size=(2, 3)), dtype=lib.float64)

    def cubic(x):
        return (x**3).sum() / 6 + x[0] * x[1] ** 2

    def layer(x):
        return (A @ x).tanh().sum() + (x**4).sum() / 12

    return [(cubic, rng.normal(size=2)), (layer, rng.normal(size=3))]


@verdict
def check_hessian(learner_hessian: Callable, exercise_id: str = "5.4") -> bool:
    """Compare the learner's hessian(f, x) with torch.autograd.functional.hessian."""
    torch = _torch()

    def body():
        for number, ((f, x_np), (f_t, _)) in enumerate(
            zip(_hessian_cases(ma), _hessian_cases(torch)), start=1
        ):
            x = ma.tensor(x_np, dtype=ma.float64, requires_grad=True)
            try:
                got = learner_hessian(f, x)
            except NotImplementedError:
                raise _NotDone() from None
            except RuntimeError as error:
                if FREED in str(error):
                    raise _Mistake(
                        f"on problem {number} your code raised 'Trying to backward through the "
                        "graph a second time': every row walks the gradient's graph again, and "
                        "the first row's call freed it. Pass retain_graph=True to the row calls."
                    ) from None
                _explain_runtime_error(error, f"on problem {number}, your hessian")
            got = _array(got, "your Hessian")
            expected = torch.autograd.functional.hessian(f_t, torch.tensor(x_np)).numpy()
            n = x_np.shape[0]
            if got.shape != (n, n):
                raise _Mistake(
                    f"on problem {number} your Hessian has shape {got.shape}; for x of shape "
                    f"({n},) it is ({n}, {n}), one row per entry of x. Hint: {HESSIAN_HINT}."
                )
            _compare(
                got,
                expected,
                f"on problem {number} your Hessian differs from PyTorch's",
                HESSIAN_HINT,
            )
        return "your Hessians match torch.autograd.functional.hessian on 2 problems."

    return _run(exercise_id, HESSIAN_START, HESSIAN_HINT, body)
