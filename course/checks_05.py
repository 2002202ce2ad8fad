"""Checks for the exercises of chapter 05 (create_graph and higher-order derivatives), against
PyTorch (the Hessian-vector product against finite differences too).

    check_hvp(hvp)                             # 5.2: a Hessian-vector product
    check_gradient_penalty(gradient_penalty)   # 5.3: the one-sided gradient penalty, both libraries
    check_hessian(hessian)                     # 5.4: the full Hessian, row by row

Exercise 5.1 is checked by the build track (course/specs.py).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from unittest import mock

import numpy as np

import mini_autograd as ma
from course.check import Feedback, as_array, call, checker, compare, load_torch, named_mistake

FREED = "Trying to backward through the graph a second time"
NO_GRAPH = "does not require grad"


def _array(value, what: str) -> np.ndarray:
    """`value` (a tensor of either library, or an array) as float64 numpy, or Feedback."""
    if isinstance(value, (tuple, list)) and len(value) == 1 and hasattr(value[0], "detach"):
        raise Feedback(
            f"{what} is a tuple holding one tensor; autograd.grad returns a tuple, so unpack it: `(g,) = ma.autograd.grad(...)`."
        )
    if value is None:
        raise Feedback(f"{what} is None; return a tensor.")
    if not hasattr(value, "detach"):
        raise Feedback(
            f"{what} is a {type(value).__name__}, not a tensor: return the tensor your autograd.grad calls give (stack rows with ma.stack), so that it can take part in more computation, a graph included."
        )
    try:
        return as_array(value)
    except (TypeError, ValueError):
        raise Feedback(f"{what} is a {type(value).__name__}, not a tensor.") from None


# --- 5.2: a Hessian-vector product -------------------------------------------------------------

HVP_START = "Hv with ma.autograd.grad alone, from the formula read inside out: the gradient g of f(x), then the gradient of the number g · v"
HVP_HINT = "keep the graph of the gradient g (create_graph=True), then differentiate (g * v).sum() with respect to x"


def _hvp_cases(lib):
    """(f, x, v) problems written once for either library."""
    rng = np.random.default_rng(50)
    A = lib.tensor(rng.normal(size=(3, 4)), dtype=lib.float64)

    quartic = lambda x: (x**4).sum() / 12 + (x[0] * x[1] * x[2])  # noqa: E731
    layer = lambda x: (A @ x).tanh().sum() + (x * x.sigmoid()).sum()  # noqa: E731

    return [
        (quartic, rng.normal(size=3), rng.normal(size=3)),
        (layer, rng.normal(size=4), rng.normal(size=4)),
    ]


def _gradient(lib, f, x_np: np.ndarray) -> np.ndarray:
    x = lib.tensor(x_np, dtype=lib.float64, requires_grad=True)
    (g,) = lib.autograd.grad(f(x), x)
    return as_array(g)


@contextlib.contextmanager
def _grad_calls():
    """Watch mini_autograd's engine while the learner's code runs: the list it yields gets, per
    autograd.grad call (however it was imported), whether it kept the graph of the gradient it
    returned (create_graph=True), or None for a call the library's autograd.functional made."""
    from mini_autograd.core import engine

    original, calls = engine.run_backward, []

    def run_backward(*args, **kwargs):
        if not kwargs.get("accumulate_grad", True):  # autograd.grad, not backward()
            frame, by_library = sys._getframe(1), False  # the frames only: no source lines read
            while frame is not None and not by_library:
                by_library = frame.f_code.co_filename.endswith(LIBRARY_FUNCTIONAL)
                frame = frame.f_back
            calls.append(
                None if by_library else bool(args[3])
            )  # args: roots, grads, retain, create
        return original(*args, **kwargs)

    with mock.patch.object(engine, "run_backward", run_backward):
        yield calls


LIBRARY_FUNCTIONAL = os.path.join("autograd", "functional.py")


def _explain(during, error, freed=None, calls=()):
    """Words for the engine's errors that this chapter teaches, raised `during` the call (those
    of a freed graph in the words `freed` where given; `calls`: whether each autograd.grad call
    kept its graph); None for another error."""
    if NO_GRAPH in str(error) and any(calls):
        return f"{during} raised '{str(error).splitlines()[0]}', though your autograd.grad call had create_graph=True: the gradient it returned had a graph, but what you differentiate next has none. The gradient was detached on the way (.detach(), .data, or a product computed under no_grad): the second derivative goes through the gradient's graph, so keep it attached."
    if NO_GRAPH in str(error):
        return f"{during} raised '{str(error).splitlines()[0]}': the gradient you differentiate has no graph. The first autograd.grad call needs create_graph=True."
    if FREED in str(error):
        return freed or (
            f"{during} raised 'Trying to backward through the graph a second time': the graph of the gradient is walked again, so the call that goes through it more than once needs retain_graph=True."
        )
    return None


@checker("5.2", HVP_START, HVP_HINT + ".")
def check_hvp(learner_hvp):
    """Compare the learner's hvp(f, x, v) with torch's, with H @ v and with finite differences."""
    torch = load_torch()
    for number, ((f, x_np, v_np), (f_t, _, _)) in enumerate(
        zip(_hvp_cases(ma), _hvp_cases(torch)), start=1
    ):
        x = ma.tensor(x_np, dtype=ma.float64, requires_grad=True)
        v = ma.tensor(v_np, dtype=ma.float64)
        with _grad_calls() as calls:
            explain = functools.partial(_explain, f"on problem {number}, your hvp", calls=calls)
            got = _array(call(learner_hvp, f, x, v, explain=explain), "your result")
        expected = as_array(
            torch.autograd.functional.hvp(f_t, torch.tensor(x_np), torch.tensor(v_np))[1]
        )
        if got.shape != x_np.shape:
            raise Feedback(
                f"on problem {number} your result has shape {got.shape}; Hv has the shape of x, {x_np.shape}.",
                hint=True,
            )
        g = _gradient(ma, f, x_np)
        mistake = not np.allclose(got, expected, atol=1e-6) and named_mistake(
            functools.partial(np.allclose, got, atol=1e-6),
            [("the gradient itself", g), ("the gradient times v", g * v_np)],
        )
        if mistake:
            raise Feedback(
                f"on problem {number} your result equals {mistake}, not Hv: differentiate once more.",
                hint=True,
            )
        if x.grad is not None:
            raise Feedback(
                f"on problem {number} your hvp left a gradient in x.grad: backward() adds into .grad, so every further call would add to it again; take both derivatives with ma.autograd.grad, which returns them and leaves .grad alone."
            )
        compare(got, expected, f"on problem {number} your Hv differs from PyTorch's")
        finite = (
            _gradient(ma, f, x_np + 1e-5 * v_np) - _gradient(ma, f, x_np - 1e-5 * v_np)
        ) / 2e-5
        compare(
            got, finite, f"on problem {number} your Hv differs from finite differences", hint=False
        )
        if not calls or None in calls:
            raise Feedback(
                f"on problem {number} your Hv is right, but no ma.autograd.grad call of yours made it: the exercise takes both derivatives with autograd.grad (differences of gradients only approximate Hv; backward(create_graph=True) leaves a gradient with its graph in x.grad, a reference cycle)."
            )
        if not any(calls):
            raise Feedback(
                f"on problem {number} your Hv is close, but no autograd.grad call kept the gradient's graph (create_graph=True): either Hv was approximated, as finite differences of gradients do, or g came from backward(create_graph=True), which leaves it, graph and all, in x.grad (a reference cycle). Take g with autograd.grad and create_graph=True, and differentiate g · v through its graph: exact, for one more backward pass."
            )
        if len(calls) > 2:
            raise Feedback(
                f"on problem {number} your Hv is right, but it took {len(calls)} autograd.grad calls: a Hessian built row by row costs one backward pass per row (n of them), which is what Hv avoids. Two calls give it: the gradient g, with its graph, then the gradient of the number g · v."
            )
    return "your Hv matches PyTorch's hvp and finite differences on 2 problems."


# --- 5.3: the one-sided gradient penalty ---------------------------------------------------------

PENALTY_START = "the gradient of the scores with respect to x_hat, with its graph kept; one norm per sample; the mean of the squared excess of each norm over 1 (none below 1)"
PENALTY_HINT = "keep the graph of the input gradient (create_graph=True), so that the penalty reaches the weights; take one Euclidean norm per sample, over its features; a norm at or below 1 costs nothing, a norm above 1 costs the square of its excess; average over the samples"


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


def _reference_penalty(arrays, x_hat_np):
    """(penalty, {name: grad}, variants) from torch, with a known-correct implementation."""
    torch = load_torch()
    critic = _critic(torch, arrays)
    x_hat = torch.tensor(x_hat_np, requires_grad=True)
    (g,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    norms = g.pow(2).sum(1).sqrt()
    penalty = ((norms - 1).clamp(min=0) ** 2).mean()
    penalty.backward()
    grads = {n: as_array(p.grad) for n, p in critic.named_parameters()}
    squares = (as_array(g) ** 2).sum(1)  # one per sample

    def cost(norm):  # the one-sided cost of each norm
        return np.maximum(norm - 1, 0) ** 2

    batch, squared = cost(np.sqrt(squares.sum())), cost(squares).mean()
    summed = cost(np.sqrt(squares)).sum()
    per_feature = cost(np.sqrt((as_array(g) ** 2).sum(0))).mean()
    two_sided = ((np.sqrt(squares) - 1) ** 2).mean()
    variants = {
        "the two-sided penalty of the chapter (WGAN-GP), which also charges the norms below 1: here a norm at or below 1 costs nothing, only the excess above 1 is squared": two_sided,
        "one norm per feature (over the batch) instead of one per sample: dimension 0 runs over the samples, dimension 1 over the features of one sample, and each sample's gradient gets its own norm": per_feature,
        "one norm for the whole batch instead of one per sample: sum over dim 1 only": batch,
        "the squared norm instead of the norm: take .sqrt() of the sum of squares": squared,
        "the sum over samples instead of the mean: use .mean()": summed,
    }
    return penalty.item(), grads, variants


@checker("5.3", PENALTY_START, PENALTY_HINT + ".")
def check_gradient_penalty(learner_penalty):
    """Run the learner's gradient_penalty(lib, critic, x_hat) with both libraries; compare."""
    rng = np.random.default_rng(53)
    # the output weights scaled so that some samples' gradient norms fall below 1, some above
    arrays = [
        rng.normal(size=(6, 3)),
        rng.normal(size=6),
        0.6 * rng.normal(size=(1, 6)),
        np.zeros(1),
    ]
    real, fake, mix = (
        rng.normal(size=(5, 3)),
        rng.normal(1.5, size=(5, 3)),
        rng.uniform(size=(5, 1)),
    )
    x_hat_np = mix * real + (1 - mix) * fake
    expected, expected_grads, variants = _reference_penalty(arrays, x_hat_np)
    for lib in (ma, load_torch()):
        name = lib.__name__
        critic = _critic(lib, arrays)
        x_hat = lib.tensor(x_hat_np, dtype=lib.float64, requires_grad=True)
        with _grad_calls() as calls:  # what ma.autograd.grad was asked (torch's is not watched)
            penalty = call(learner_penalty, lib, critic, x_hat)
        if not hasattr(penalty, "detach"):
            raise Feedback(
                f"with {name} your function returned a {type(penalty).__name__}; return the penalty as a tensor (no .item()), so that it can be backwarded."
            )
        got = _array(penalty, "your penalty")
        if got.size != 1:
            raise Feedback(
                f"with {name} your penalty has shape {got.shape}; it should be one number: the mean over the samples."
            )
        filled = [n for n, p in critic.named_parameters() if p.grad is not None]
        if filled:
            raise Feedback(
                f"with {name} your function filled the critic's .grad ({', '.join(filled)}): it used backward(); use lib.autograd.grad, which returns the input gradient and leaves the weights' .grad alone."
            )
        value = got.item()
        if not np.isclose(value, expected, atol=1e-6, rtol=1e-5):
            text = f"with {name} your penalty is {value:.6g}, expected {expected:.6g}"
            same = functools.partial(np.isclose, value, atol=1e-6, rtol=1e-5)
            mistake = named_mistake(same, variants.items())
            raise Feedback(
                f"{text}: it looks like {mistake}." if mistake else f"{text}.", hint=not mistake
            )
        try:
            penalty.backward()
        except RuntimeError as error:
            if NO_GRAPH not in str(error):
                raise
            said = f"with {name} the penalty's value is right, but penalty.backward() says '{str(error).splitlines()[0]}': the penalty does not depend on the weights"
            if any(calls):
                raise Feedback(
                    f"{said}. Your autograd.grad call had create_graph=True, so the input gradient had a graph, but the penalty lost it on the way (.detach(), .data, numpy, or a step under no_grad): keep every step a tensor operation."
                ) from None
            raise Feedback(
                f"{said}, because the input gradient was computed without create_graph=True."
            ) from None
        for pname, p in critic.named_parameters():  # None where the reference has None
            compare(
                p.grad,
                expected_grads[pname],
                f"with {name} the penalty's gradient for {pname} differs",
            )
    return "same penalty and same weight gradients as the reference, with mini_autograd and with torch."


# --- 5.4: the full Hessian, row by row ---------------------------------------------------------

HESSIAN_START = "the gradient g of f(x) with its graph kept, then one autograd.grad call per entry g[i]; each gives one row"
HESSIAN_HINT = "keep the graph of the gradient g (create_graph=True); row i is the gradient of g[i] with respect to x; stack the rows with ma.stack"


def _hessian_cases(lib):
    rng = np.random.default_rng(54)
    A = lib.tensor(rng.normal(size=(2, 3)), dtype=lib.float64)

    cubic = lambda x: (x**3).sum() / 6 + x[0] * x[1] ** 2  # noqa: E731
    layer = lambda x: (A @ x).tanh().sum() + (x**4).sum() / 12  # noqa: E731

    return [(cubic, rng.normal(size=2)), (layer, rng.normal(size=3))]


@checker("5.4", HESSIAN_START, HESSIAN_HINT + ".")
def check_hessian(learner_hessian):
    """Compare the learner's hessian(f, x) with torch.autograd.functional.hessian."""
    torch = load_torch()
    for number, ((f, x_np), (f_t, _)) in enumerate(
        zip(_hessian_cases(ma), _hessian_cases(torch)), start=1
    ):
        x = ma.tensor(x_np, dtype=ma.float64, requires_grad=True)
        freed = f"on problem {number} your code raised 'Trying to backward through the graph a second time': every row walks the gradient's graph again, and the first row's call freed it. Pass retain_graph=True to the row calls."
        forward_runs = []

        def counted_f(x, f=f, runs=forward_runs):
            runs.append(1)
            return f(x)

        with _grad_calls() as calls:
            explain = functools.partial(
                _explain, f"on problem {number}, your hessian", freed=freed, calls=calls
            )
            got = _array(call(learner_hessian, counted_f, x, explain=explain), "your Hessian")
        expected = torch.autograd.functional.hessian(f_t, torch.tensor(x_np))
        n = x_np.shape[0]
        if got.shape != (n, n):
            raise Feedback(
                f"on problem {number} your Hessian has shape {got.shape}; for x of shape ({n},) it is ({n}, {n}), one row per entry of x.",
                hint=True,
            )
        if not np.allclose(got, expected, atol=1e-6) and np.allclose(
            got, np.cumsum(as_array(expected), axis=0), atol=1e-6
        ):
            raise Feedback(
                f"on problem {number} each row of your Hessian is the sum of the rows so far: backward() adds into x.grad, so every row read from it holds the earlier ones too. Take each row with ma.autograd.grad, which returns it and leaves .grad alone."
            )
        compare(got, expected, f"on problem {number} your Hessian differs from PyTorch's")
        if x.grad is not None:
            raise Feedback(
                f"on problem {number} your Hessian is right, but it left a gradient in x.grad: backward() adds into .grad, so the next call would start from it; take the rows with ma.autograd.grad, which returns them and leaves .grad alone."
            )
        if not calls or None in calls:
            raise Feedback(
                f"on problem {number} your Hessian is right, but no ma.autograd.grad call of yours made it (a library function, backward(), or finite differences did): the exercise is to build it yourself from the gradient's graph, one autograd.grad call per row."
            )
        if not any(calls):
            raise Feedback(
                f"on problem {number} your Hessian is close, but no autograd.grad call kept the gradient's graph (create_graph=True): either the rows were approximated, as finite differences of gradients do, or g came from backward(create_graph=True), which leaves it, graph and all, in x.grad (a reference cycle). Take g with autograd.grad and create_graph=True, and row i as the gradient of g[i] through its graph."
            )
        if len(forward_runs) > 1 or len(calls) > n + 1:
            raise Feedback(
                f"on problem {number} your Hessian is right, but f ran {len(forward_runs)} times and autograd.grad was called {len(calls)} times for x of {n} entries: the gradient g was computed again for every row. Compute g once, with its graph (create_graph=True), and take every row from that one graph (retain_graph=True): 1 forward and {n + 1} autograd.grad calls."
            )
    return "your Hessians match torch.autograd.functional.hessian on 2 problems."
