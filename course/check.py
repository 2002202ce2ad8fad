"""Friendly checks for exercise notebooks.

``check`` runs a learner's function on a few inputs, compares the result with a reference
(a numpy function) and with PyTorch (a torch function), and prints one plain-words line:
success, "not done yet", or what went wrong, by how much, and a hint. It never lets an
ordinary mistake escape as a traceback, so an exercise notebook runs top to bottom even
when nothing is filled in::

    check("0.1", tanh_grad, reference_fn=numeric_derivative(np.tanh),
          torch_fn=lambda x: torch.autograd.grad(torch.tanh(x).sum(), x)[0],
          inputs=[np.linspace(-3, 3, 7)], hint="d/dx tanh(x) = 1 - tanh(x)**2")
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

DEFAULT_HINT = "replace the `raise NotImplementedError(...)` line with your code"


class Verdict:
    """What a check found: true when the answer is right, false otherwise.

    Jupyter shows nothing for it, so a check cell ends with the one line the check printed,
    not with an extra `Out[n]: True`.
    """

    __slots__ = ("passed",)

    def __init__(self, passed: bool):
        if not isinstance(passed, bool):
            raise TypeError(f"a check must find True or False, not {passed!r:.60}")
        self.passed = passed

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return f"Verdict(passed={self.passed})"

    def _ipython_display_(self) -> None:
        """Show nothing: the check has printed its line already."""


def verdict(check_fn: Callable[..., bool]) -> Callable[..., Verdict]:
    """Make a check that returns True or False return a Verdict instead."""

    @functools.wraps(check_fn)
    def run(*args: Any, **kwargs: Any) -> Verdict:
        found = check_fn(*args, **kwargs)
        return found if isinstance(found, Verdict) else Verdict(found)

    return run


class Feedback(Exception):
    """A plain-words verdict about the learner's code, raised by a check body, printed as one line."""


def run_check(exercise_id: str, hint: str, body: Callable[[], str]) -> bool:
    """Run `body()`; print one line (correct, not done yet, or the problem); return success."""
    label = f"Exercise {exercise_id}"
    try:
        message = body()
    except NotImplementedError:
        print(f"{label}: not done yet — {hint}")
        return False
    except Feedback as problem:
        print(f"{label}: {problem}")
        return False
    print(f"{label}: correct ✓ — {message}")
    return True


def losses_of(result: Any, n: int, per: str, named: str = "") -> list[float]:
    """The learner's result as a list of n floats (one per `per`), or Feedback saying why not."""
    if result is None:
        raise Feedback(f"your function returned None; return the list of the {n} {named}losses")
    try:
        values = [float(v.item() if hasattr(v, "item") else v) for v in result]
    except (TypeError, ValueError):
        raise Feedback(
            f"return a list of {n} losses (floats, e.g. loss.item()), not {type(result).__name__}"
        ) from None
    if len(values) != n:
        raise Feedback(f"expected {n} losses, one per {per}, got {len(values)}")
    return values


def not_done(exercise_id: str, hint: str) -> bool:
    """Print the one "not done yet" line of an unfilled exercise; return False."""
    print(f"Exercise {exercise_id}: not done yet — {hint}")
    return False


def wrong(exercise_id: str, text: str, hint: str = "") -> bool:
    """Print what is wrong with an answer (and a hint), in one line; return False."""
    print(f"Exercise {exercise_id}: {text}" + (f" Hint: {hint}" if hint else ""))
    return False


def raised(exercise_id: str, error: BaseException, where: str) -> bool:
    """Report an exception from the learner's code in one line instead of a traceback."""
    return wrong(exercise_id, f"your code raised {type(error).__name__}: {error} ({where}).")


def gradient_problem(got: Any, expected: Any, atol: float = 1e-6, rtol: float = 1e-5) -> str | None:
    """How the gradient ``got`` (array or None) differs from ``expected``, or None when it matches."""
    if got is None or expected is None:
        if got is None and expected is None:
            return None
        return "is missing (None)" if got is None else "should be None"
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    if got.shape != expected.shape:
        return f"has shape {got.shape}, expected {expected.shape}"
    if np.allclose(got, expected, atol=atol, rtol=rtol):
        return None
    error = np.abs(got - expected)
    worst = np.unravel_index(np.argmax(np.nan_to_num(error, nan=np.inf)), error.shape)
    index = tuple(int(i) for i in worst)
    return (
        f"differs by up to {float(error[worst]):.3g} (at index {index}: "
        f"expected {float(expected[worst]):.6g}, got {float(got[worst]):.6g})"
    )


def numeric_derivative(f: Callable[[np.ndarray], np.ndarray], eps: float = 1e-6) -> Callable:
    """Return x -> the elementwise central-difference derivative of the elementwise ``f``."""

    def derivative(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        return (f(x + eps) - f(x - eps)) / (2 * eps)

    return derivative


def _as_array(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):  # a torch tensor
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=np.float64)


def _to_torch(arg: Any) -> Any:
    import torch

    if isinstance(arg, np.ndarray) and arg.dtype.kind == "f":
        return torch.tensor(arg, dtype=torch.float64, requires_grad=True)
    return arg


def _difference(got: np.ndarray, expected: np.ndarray, atol: float, rtol: float) -> str | None:
    """Describe how ``got`` differs from ``expected`` in plain words, or None when it matches."""
    if got.shape != expected.shape:
        return f"wrong shape: expected {expected.shape}, got {got.shape}"
    if np.allclose(got, expected, atol=atol, rtol=rtol, equal_nan=True):
        return None
    if got.ndim == 0:
        return f"expected {expected.item():.6g}, got {got.item():.6g}"
    error = np.abs(got - expected)
    error = np.where(np.isnan(error), np.inf, error)
    worst = np.unravel_index(np.argmax(error), error.shape)
    wrong = int(np.sum(~np.isclose(got, expected, atol=atol, rtol=rtol, equal_nan=True)))
    return (
        f"{wrong} of {got.size} values differ; the largest difference is at index "
        f"{tuple(int(i) for i in worst)}: expected {expected[worst]:.6g}, got {got[worst]:.6g}"
    )


def _describe(args: tuple) -> str:
    parts = [
        f"array of shape {np.shape(a)}" if isinstance(a, np.ndarray) else repr(a) for a in args
    ]
    return ", ".join(parts)


@verdict
def check(
    exercise_id: str,
    learner_fn: Callable,
    reference_fn: Callable | None = None,
    inputs: Sequence[Any] = (),
    *,
    torch_fn: Callable | None = None,
    atol: float = 1e-6,
    rtol: float = 1e-5,
    hint: str = "",
) -> bool:
    """Run ``learner_fn`` on each input, compare with the reference and PyTorch, print one line.

    ``inputs`` holds one entry per call: a tuple of arguments, or a single argument.
    ``reference_fn`` receives the same numpy arguments; ``torch_fn`` receives them as float64
    tensors with ``requires_grad=True`` (so it may call ``torch.autograd``). At least one of
    the two must be given. Returns True when every result matches within ``atol``/``rtol``.
    """
    if reference_fn is None and torch_fn is None:
        raise ValueError("check() needs a reference_fn, a torch_fn, or both")
    if not inputs:
        raise ValueError("check() needs at least one input")
    label = f"Exercise {exercise_id}"
    hint_line = f" Hint: {hint}" if hint else ""
    calls = [args if isinstance(args, tuple) else (args,) for args in inputs]
    for number, args in enumerate(calls, start=1):
        try:
            got = _as_array(learner_fn(*args))
        except NotImplementedError:
            print(f"{label}: not done yet — {hint or DEFAULT_HINT}")
            return False
        except Exception as error:  # an ordinary mistake: report it, do not raise
            print(
                f"{label}: your code raised {type(error).__name__}: {error} "
                f"(input {number}: {_describe(args)}).{hint_line}"
            )
            return False
        expectations = []
        if reference_fn is not None:
            expectations.append(("the reference", _as_array(reference_fn(*args))))
        if torch_fn is not None:
            torch_args = tuple(_to_torch(a) for a in args)
            expectations.append(("PyTorch", _as_array(torch_fn(*torch_args))))
        for name, expected in expectations:
            problem = _difference(got, expected, atol, rtol)
            if problem:
                print(
                    f"{label}: does not match {name} on input {number} "
                    f"({_describe(args)}): {problem}.{hint_line}"
                )
                return False
    against = " and ".join(
        name for name, fn in [("the reference", reference_fn), ("PyTorch", torch_fn)] if fn
    )
    print(f"{label}: correct ✓ — matches {against} on {len(calls)} input(s).")
    return True


MIXED_LIBRARIES = (
    "in a function that runs with lib=torch and with lib=ma, write `lib.` everywhere, not `ma.` "
    "or `torch.`"
)


def mixed_libraries(error: BaseException) -> str | None:
    """How ``error`` mixes the libraries (a torch tensor given to mini_autograd, or the other
    way round) in plain words, or None when it does not."""
    text = str(error)
    if isinstance(error, AttributeError) and any(
        f"'{name}'" in text for name in ("_data", "_view_base", "_version_counter")
    ):
        return f"a torch tensor reached a mini_autograd function (`ma.`): {MIXED_LIBRARIES}"
    if isinstance(error, TypeError) and "must be Tensor, not Tensor" in text:
        return f"a mini_autograd tensor reached a torch function: {MIXED_LIBRARIES}"
    if isinstance(error, TypeError) and "instead of `ma.`" in text:
        return f"a torch tensor reached a mini_autograd function (`ma.`): {MIXED_LIBRARIES}"
    return None


def first_line(error: BaseException, width: int = 110) -> str:
    """The first line of ``error``'s message, cut to ``width`` characters ('' when it has none)."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return text if len(text) <= width else text[: width - 3] + "..."


def describe_error(error: BaseException, width: int = 110) -> str:
    """'TypeName: first line of the message', or 'TypeName (how the libraries were mixed)'."""
    mixed = mixed_libraries(error)
    if mixed:
        return f"{type(error).__name__} ({mixed})"
    return f"{type(error).__name__}: {first_line(error, width) or '(no message)'}"


def tensor_note(values: Any) -> str:
    """' (note: ...)' when a result that should be Python floats holds tensors; else ''."""
    items = values if isinstance(values, (list, tuple)) else [values]
    if any(hasattr(v, "item") and hasattr(v, "shape") and hasattr(v, "grad_fn") for v in items):
        return " (note: you returned a tensor where a float is asked; `.item()` gives the float)"
    return ""


def data_note(reads: int) -> str:
    """' (note: ...)' when the learner's code read `.data` (counted by ``counting_data_reads``)."""
    if not reads:
        return ""
    return (
        " (note: your code reads `.data`; use `.detach()`, which keeps the version check that "
        "`.data` skips)"
    )


class counting_data_reads:  # noqa: N801 (a context manager used like a function)
    """Count reads of mini_autograd's ``Tensor.data`` inside a ``with`` block (``.reads``)."""

    def __init__(self) -> None:
        self.reads = 0

    def __enter__(self) -> counting_data_reads:
        from mini_autograd.tensor import Tensor

        self._tensor, self._original = Tensor, Tensor.__dict__["data"]
        original = self._original

        def read(tensor):
            self.reads += 1
            return original.fget(tensor)

        Tensor.data = property(read, original.fset, doc=original.__doc__)
        return self

    def __exit__(self, *exc: Any) -> bool:
        self._tensor.data = self._original
        return False


class StepOrder:
    """Record the order of zero_grad, backward and step in mini_autograd while a block runs.

    ``with StepOrder() as order: ...`` then ``order.events`` is a list such as
    ``["zero_grad", "backward", "step", ...]``. Every backward entry point goes through
    ``engine.run_backward``; zero_grad is that of the optimizers or of a module.
    """

    def __init__(self) -> None:
        self.events: list[str] = []
        self.kept_graph = False  # whether a backward kept its graph (retain_graph=True)

    def _spy(self, event: str, original: Callable) -> Callable:
        def spy(*args: Any, **kwargs: Any) -> Any:
            self.events.append(event)
            if event == "backward":  # run_backward(roots, root_grads, retain_graph, ...)
                self.kept_graph = self.kept_graph or bool(args[2] if len(args) > 2 else False)
            return original(*args, **kwargs)

        return spy

    def __enter__(self) -> StepOrder:
        from contextlib import ExitStack
        from unittest import mock

        import mini_autograd as ma
        from mini_autograd import engine

        self._stack = ExitStack()
        targets = [(engine, "run_backward", "backward")]
        targets += [(ma.optim.Optimizer, "zero_grad", "zero_grad")]
        targets += [(ma.nn.Module, "zero_grad", "zero_grad")]
        targets += [(ma.optim.SGD, "step", "step"), (ma.optim.Adam, "step", "step")]
        for owner, name, event in targets:
            spy = self._spy(event, getattr(owner, name))
            self._stack.enter_context(mock.patch.object(owner, name, spy))
        return self

    def __exit__(self, *exc: Any) -> bool:
        self._stack.close()
        return False


def zero_grad_problem(events: Sequence[str]) -> str | None:
    """Plain words on a missing or misplaced zero_grad in a recorded order of events, or None."""
    if "step" not in events:  # no optimizer step at all: a different mistake
        return None
    dirty = pending = False  # gradients not yet zeroed / not yet used by a step
    for event in events:
        if event == "backward":
            if dirty:
                if "zero_grad" not in events:
                    return (
                        "optimizer.zero_grad() is never called, so each backward adds its "
                        "gradients to those of every earlier one (.grad accumulates): call "
                        "optimizer.zero_grad() before each loss.backward()"
                    )
                return (
                    "optimizer.zero_grad() is not called before every backward, so .grad "
                    "accumulates the gradients of earlier backward passes: call it once per "
                    "step, before loss.backward()"
                )
            dirty = pending = True
        elif event == "zero_grad":
            if pending:
                return (
                    "optimizer.zero_grad() runs between loss.backward() and optimizer.step(), "
                    "so the step finds no gradients and the model does not learn: call "
                    "zero_grad() before loss.backward() (or after step())"
                )
            dirty = False
        elif event == "step":
            pending = False
    return None
