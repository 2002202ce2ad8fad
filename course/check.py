"""Friendly checks for exercise notebooks, and the scaffold every course/checks_0N.py stands on.

``check`` runs a learner's function on a few inputs, compares the result with a reference
(a numpy function) and with PyTorch (a torch function), and prints one plain-words line:
success, "not done yet", or what went wrong, by how much, and a hint. It never lets an
ordinary mistake escape as a traceback, so an exercise notebook runs top to bottom even
when nothing is filled in::

    check("0.1", tanh_grad, reference_fn=numeric_derivative(np.tanh),
          torch_fn=lambda x: torch.autograd.grad(torch.tanh(x).sum(), x)[0],
          inputs=[np.linspace(-3, 3, 7)], hint="d/dx tanh(x) = 1 - tanh(x)**2")

A chapter's check is a function decorated with ``checker(exercise_id, todo, hint)``: it returns
the words of success, or raises ``Feedback`` with what is wrong; ``call`` runs the learner's code
and turns its errors into Feedback; ``difference``, ``losses_of`` and ``first_difference`` compare
tensors and losses with a reference; ``named_mistake`` finds the typical mistake (a table of words
and the wrong results they explain) that the learner's result matches; ``Spy`` watches backward
passes, zero_grad and step.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import os
import sys
import types
from collections.abc import Callable, Iterable, Sequence
from typing import Any
from unittest import mock

import numpy as np

from mini_autograd.instruments.memory import as_numpy, is_tensor

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


def load_torch() -> Any:
    """torch, imported when a check first needs it (importing the checks stays cheap)."""
    return importlib.import_module("torch")


# --- the one-line scaffold -----------------------------------------------------------------------


class Feedback(Exception):
    """What is wrong with the learner's answer, in the plain words a check prints (then, with
    ``hint=True``, the check's hint)."""

    def __init__(self, text: str, hint: bool = False):
        super().__init__(text)
        self.hint = hint


def run_check(exercise_id: str, todo: str, body: Callable[[], str], hint: str = "") -> bool:
    """Run ``body()`` and print one line: correct (its words), not done yet (``todo``), or the
    problem (``hint`` after Feedback(hint=True) and after an unexpected error); return success."""
    try:
        line = f"correct ✓ — {body()}"
    except NotImplementedError:
        line = f"not done yet — {todo}"
    except Feedback as problem:
        line = str(problem) + (f" Hint: {hint}" if problem.hint and hint else "")
    except Exception as error:  # an ordinary mistake: report it, do not raise
        line = f"your code raised {describe_error(error)}." + (f" Hint: {hint}" if hint else "")
    print(f"Exercise {exercise_id}: {line}")
    return line.startswith("correct ✓")


def checker(exercise_id: str, todo: str, hint: str = "") -> Callable:
    """Turn a check body (it returns the words of success or raises Feedback) into a check that
    prints one line (see run_check) and returns a Verdict."""

    def decorate(body: Callable[..., str]) -> Callable[..., Verdict]:
        @functools.wraps(body)
        def check_fn(*args: Any, **kwargs: Any) -> Verdict:
            return Verdict(run_check(exercise_id, todo, lambda: body(*args, **kwargs), hint))

        return check_fn

    return decorate


def call(fn: Callable, *args: Any, where: str = "", explain: Callable | None = None) -> Any:
    """``fn(*args)``, the learner's code. NotImplementedError (not done yet) and Feedback pass;
    any other error becomes Feedback, in the words of ``explain(error)`` when it has some."""
    try:
        return fn(*args)
    except (NotImplementedError, Feedback):
        raise
    except Exception as error:  # an ordinary mistake: report it in one line
        words = explain(error) if explain else None
        raise Feedback(
            words or f"your code raised {describe_error(error)}{where}", hint=not words
        ) from None


def retained_for_nothing(cut: str, whose: str) -> str:
    """The words for a retain_graph=True in a loop that needs none: `cut` says what is carried
    without its graph, `whose` whose graph the flag keeps ("this chunk's")."""
    return f"the losses are right, but a backward keeps its graph (retain_graph=True, or create_graph=True, which turns it on) for nothing: {cut}, so no later backward goes back into {whose} graph, and the flag only holds its saved tensors alive longer. Remove it"


def freed_graph(error: BaseException) -> bool:
    """Whether ``error`` is the engine's "backward through the graph a second time"."""
    return "backward through the graph a second time" in str(error)


def in_place_error(error: BaseException) -> bool:
    """Whether ``error`` is the version check's "modified by an inplace operation"."""
    return "modified by an inplace operation" in str(error)


# --- comparing with a reference ------------------------------------------------------------------


def as_array(value: Any) -> np.ndarray | None:
    """A tensor of any of the libraries (or a list of them), array or number as float64 numpy, or
    None."""
    if isinstance(value, (list, tuple)) and value and all(hasattr(v, "detach") for v in value):
        value = np.stack([as_array(v) for v in value])
    if hasattr(value, "detach"):  # a tensor of torch, mini_autograd or the learner's engine
        value = as_numpy(value)
    return None if value is None else np.asarray(value, dtype=np.float64)


def difference(got: Any, expected: Any, atol: float = 1e-6, rtol: float = 1e-5) -> str | None:
    """How ``got`` differs from ``expected`` (tensors, arrays, numbers or None), or None if not."""
    if got is None or expected is None:
        return None if got is expected else ("got None" if got is None else "expected None")
    got, expected = as_array(got), as_array(expected)
    if got.shape != expected.shape:
        return f"wrong shape: expected {expected.shape}, got {got.shape}"
    if np.allclose(got, expected, atol=atol, rtol=rtol, equal_nan=True):
        return None
    if got.ndim == 0:
        return f"expected {expected.item():.6g}, got {got.item():.6g}"
    error = np.nan_to_num(np.abs(got - expected), nan=np.inf)
    worst = np.unravel_index(np.argmax(error), error.shape)
    wrong = int(np.sum(~np.isclose(got, expected, atol=atol, rtol=rtol, equal_nan=True)))
    return f"{wrong} of {got.size} values differ; the largest difference is at index {tuple(int(i) for i in worst)}: expected {expected[worst]:.6g}, got {got[worst]:.6g}"


def compare(got: Any, expected: Any, what: str, atol=1e-6, rtol=1e-5, hint=True) -> None:
    """Feedback ``what: how they differ`` (and the hint) unless ``got`` matches ``expected``."""
    problem = difference(got, expected, atol, rtol)
    if problem:
        raise Feedback(f"{what}: {problem}.", hint=hint)


def number(value: Any, what: str) -> float:
    """``value`` (a number, or a one-element tensor of either library) as a float, or Feedback."""
    try:
        return float(value.item() if hasattr(value, "item") else value)
    except (TypeError, ValueError, RuntimeError):
        raise Feedback(f"return {what} as a number, not {type(value).__name__}") from None


def losses_of(result: Any, n: int, per: str) -> list[float]:
    """The learner's result as a list of n floats (one per `per`), or Feedback saying why not."""
    if result is None:
        raise Feedback(f"your function returned None; return the list of the {n} losses")
    try:
        values = [float(v.item() if hasattr(v, "item") else v) for v in result]
    except (TypeError, ValueError):
        raise Feedback(
            f"return a list of {n} losses (floats, e.g. loss.item()), not {type(result).__name__}"
        ) from None
    if len(values) != n:
        raise Feedback(f"expected {n} losses, one per {per}, got {len(values)}")
    return values


def first_difference(got, expected, per: str, atol=1e-5, rtol=1e-4, start=0) -> str | None:
    """'the loss of <per> k is a, expected b' for the first loss that differs, or None."""
    for k, (a, b) in enumerate(zip(got, expected), start=start):
        if not np.isclose(a, b, atol=atol, rtol=rtol):
            return f"the loss of {per} {k} is {a:.6g}, expected {b:.6g}"
    return None


def named_mistake(same: Callable[[Any], bool], mistakes: Iterable[tuple[str, Any]]) -> str | None:
    """The words of the first typical mistake whose result ``same(result)`` finds equal to the
    learner's: ``mistakes`` holds (words, result) pairs, a generator where results are costly."""
    return next((words for words, result in mistakes if same(result)), None)


# --- check(): a function against numpy and PyTorch ----------------------------------------------


def numeric_derivative(f: Callable[[np.ndarray], np.ndarray], eps: float = 1e-6) -> Callable:
    """Return x -> the elementwise central-difference derivative of the elementwise ``f``."""

    def derivative(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        return (f(x + eps) - f(x - eps)) / (2 * eps)

    return derivative


def _to_torch(arg: Any) -> Any:
    if isinstance(arg, np.ndarray) and arg.dtype.kind == "f":
        torch = load_torch()
        return torch.tensor(arg, dtype=torch.float64, requires_grad=True)
    return arg


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
) -> Verdict:
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
    calls = [args if isinstance(args, tuple) else (args,) for args in inputs]
    against = [("the reference", reference_fn), ("PyTorch", torch_fn)]
    against = [(name, fn) for name, fn in against if fn]

    def body() -> str:
        for k, args in enumerate(calls, start=1):
            shown = ", ".join(
                f"array of shape {np.shape(a)}" if isinstance(a, np.ndarray) else repr(a)
                for a in args
            )
            got = as_array(call(learner_fn, *args, where=f" (input {k}: {shown})"))
            for name, fn in against:
                wanted = fn(*(tuple(_to_torch(a) for a in args) if name == "PyTorch" else args))
                compare(got, wanted, f"does not match {name} on input {k} ({shown})", atol, rtol)
        names = " and ".join(name for name, _ in against)
        return f"matches {names} on {len(calls)} input(s)."

    return Verdict(run_check(exercise_id, hint or DEFAULT_HINT, body, hint))


# --- words for errors and slips ------------------------------------------------------------------

MIXED_LIBRARIES = "in a function that runs with lib=torch and with lib=ma, write `lib.` everywhere, not `ma.` or `torch.`"


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
    """' (note: ...)' when the learner's code read `.data` (``reads``, counted by a Spy)."""
    if not reads:
        return ""
    return " (note: your code reads `.data`; use `.detach()`, which keeps the version check that `.data` skips)"


# --- watching backward, zero_grad and step -------------------------------------------------------


_NOT_HOLDERS = (type, types.ModuleType, types.FunctionType, types.MethodType)


def _tensors_with_graphs(value, depth: int = 4, seen: set | None = None) -> list:
    """The tensors with a grad_fn that `value` holds: itself, or inside its lists, tuples, sets
    and dicts and the attributes of its objects (a model's, a logger's), `depth` levels down."""
    seen = set() if seen is None else seen
    if id(value) in seen or depth < 0:
        return []
    seen.add(id(value))
    if is_tensor(value):
        return [value] if value.grad_fn is not None else []
    if isinstance(value, dict):
        items = list(value.values())
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
    elif hasattr(value, "__dict__") and not isinstance(value, _NOT_HOLDERS):
        items = list(vars(value).values())
    else:
        return []
    found = []
    for item in items[:10_000]:  # a long list of numbers costs little, and holds no graph
        if not isinstance(item, (int, float, str, bytes, np.ndarray)):
            found += _tensors_with_graphs(item, depth - 1, seen)
    return found


def held_graphs(stop, holders: set | None = None) -> dict:
    """{name: the graph nodes reachable from it} for the tensors of either library held by the
    learner's running code (directly, in containers, or as attributes of its objects): the
    frames under `stop`, the check's. The names of containers and objects go into `holders`."""
    import mini_autograd as ma
    from mini_autograd.instruments.graph_walk import graph_nodes

    libraries = [os.path.dirname(module.__file__) + os.sep for module in (ma, load_torch())]
    unwatched = (*libraries, call.__code__.co_filename)
    held, frame = {}, sys._getframe(1)
    while frame is not None and frame is not stop:
        if not frame.f_code.co_filename.startswith(unwatched):
            for name, value in frame.f_locals.items():
                roots = _tensors_with_graphs(value)
                if roots and holders is not None and not is_tensor(value):
                    holders.add(name)
                if roots:
                    nodes = graph_nodes(roots)
                    if len(nodes) > len(held.get(name, ())):
                        held[name] = nodes
        frame = frame.f_back
    return held


def growing_graph(sizes: Sequence[dict]) -> tuple | None:
    """(name, (first step, nodes), (last step, nodes)) for the first variable whose graph is
    larger at its middle step than at its first, and larger again at its last (`sizes`: one
    {name: graph nodes} a step), or None."""
    for name in sorted({name for step in sizes for name in step}):
        counts = [(k, step[name]) for k, step in enumerate(sizes, start=1) if name in step]
        if len(counts) >= 3 and counts[-1][1] > counts[len(counts) // 2][1] > counts[0][1]:
            return name, counts[0], counts[-1]
    return None


def kept_graphs(sizes: Sequence[dict]) -> str | None:
    """Plain words on a variable of the learner's that keeps every step's graph, or None."""
    grown = growing_graph(sizes)
    if grown is None:
        return None
    name, (first, a), (last, b) = grown
    return f"`{name}` holds the graph of every earlier step ({a} graph nodes reachable from it at step {first}, {b} at step {last}): a tensor kept from one step to the next (a loss added up as a tensor, a list of loss tensors) keeps each step's whole graph, and what it saved, alive. Keep Python numbers instead (`loss.item()`), or detach what you keep"


class Spy(contextlib.ExitStack):
    """Watch the backward passes of both libraries, and mini_autograd's zero_grad, step and
    reads of ``Tensor.data``, while a ``with`` block runs (entered again, what it saw adds up).

    ``retains``: whether each backward pass kept its graph (retain_graph, which defaults to
    create_graph), in order; ``events``: "zero_grad", "backward" and "step" in mini_autograd, in
    order; ``data_reads``: how many times ``.data`` was read; ``on_backward(roots)`` runs before
    each mini_autograd pass; with ``watch_graphs``, ``graph_sizes`` gets the size of the graph
    each variable of the learner's code holds at each pass of either library (see
    ``kept_graphs``). Every mini_autograd entry point goes through engine.run_backward; torch's
    Tensor.backward calls torch.autograd.backward, so wrapping it and grad sees them all.
    """

    def __init__(self, on_backward: Callable | None = None, watch_graphs: bool = False) -> None:
        super().__init__()
        self.events: list[str] = []
        self.retains: list[bool] = []
        self.data_reads = 0
        self.passes = self.no_parameter = 0  # backward passes; those reaching no nn.Parameter
        self.on_backward = on_backward
        self.graph_sizes: list[dict] = []  # with watch_graphs: {name: graph nodes} a pass
        self._stop = sys._getframe(1) if watch_graphs else None  # the check's frame

    @property
    def retained(self) -> bool:
        """True once a backward pass of either library kept its graph."""
        return any(self.retains)

    def _measure_graphs(self) -> None:
        if self._stop is not None:
            held = held_graphs(self._stop)
            self.graph_sizes.append({name: len(nodes) for name, nodes in held.items()})

    def _note_parameters(self, roots: Any) -> None:
        roots = [roots] if is_tensor(roots) else list(roots)
        self.passes += 1
        self.no_parameter += not _reaches_a_parameter(roots)

    def _ma(self, event: str, original: Callable) -> Callable:
        def spy(*args: Any, **kwargs: Any) -> Any:
            self.events.append(event)
            if event == "backward":  # run_backward(roots, root_grads, retain_graph, ...)
                self.retains.append(bool(args[2]))
                self._note_parameters(args[0])
                if self.on_backward:
                    self.on_backward(args[0])
                self._measure_graphs()
            return original(*args, **kwargs)

        return spy

    def _torch(self, original: Callable) -> Callable:
        signature = inspect.signature(original)  # backward and grad place retain_graph apart

        def entry(*args: Any, **kwargs: Any) -> Any:
            try:
                given = signature.bind(*args, **kwargs).arguments
            except TypeError:
                return original(*args, **kwargs)  # torch's own error for wrong arguments
            retain = given.get("retain_graph")
            self.retains.append(
                bool(given.get("create_graph", False) if retain is None else retain)
            )
            self._note_parameters(given.get("tensors", given.get("outputs", ())))
            self._measure_graphs()
            return original(*args, **kwargs)

        return entry

    def __enter__(self) -> Spy:
        import mini_autograd as ma
        from mini_autograd.core import engine
        from mini_autograd.core.tensor import Tensor

        torch = load_torch()
        targets = [(engine, "run_backward", "backward")]
        targets += [(ma.optim.Optimizer, "zero_grad", "zero_grad")]
        targets += [(ma.nn.Module, "zero_grad", "zero_grad")]
        targets += [(ma.optim.SGD, "step", "step"), (ma.optim.Adam, "step", "step")]
        for owner, name, event in targets:
            spy = self._ma(event, getattr(owner, name))
            self.enter_context(mock.patch.object(owner, name, spy))
        for name in ("backward", "grad"):
            spy = self._torch(getattr(torch.autograd, name))
            self.enter_context(mock.patch.object(torch.autograd, name, spy))
        data = Tensor.__dict__["data"]

        def read(tensor: Any) -> Any:
            self.data_reads += 1
            return data.fget(tensor)

        reading = property(read, data.fset, doc=data.__doc__)
        self.enter_context(mock.patch.object(Tensor, "data", reading))
        return self


def _reaches_a_parameter(roots) -> bool:
    """Whether the graph of the tensors `roots` (of either library) leads back to a model's
    parameter."""
    import mini_autograd as ma
    from mini_autograd.instruments.graph_walk import graph_nodes

    parameters = (ma.nn.Parameter, load_torch().nn.Parameter)
    nodes = graph_nodes([t for t in roots if is_tensor(t)])
    return any(isinstance(getattr(n, "variable", None), parameters) for n in nodes)


def no_weight_reached(spy: Spy) -> str | None:
    """Plain words when no backward pass the spy saw reached a model's parameter, or None."""
    if spy.passes and spy.no_parameter == spy.passes:
        return "no backward reaches the model's parameters: the loss's graph ends before them, so their .grad stays None and the optimizer has nothing to apply. Something on the path from the weights to the loss was detached (the prediction, or the loss): detach only what is carried to the next step"
    return None


def zero_grad_problem(events: Sequence[str]) -> str | None:
    """Plain words on a missing or misplaced zero_grad in a recorded order of events, or None."""
    if "step" not in events:  # no optimizer step at all: a different mistake
        return None
    if "backward" in events and events.index("step") < events.index("backward"):
        return "optimizer.step() runs before loss.backward(): each step applies the gradients of the step before (none, the first time), so the updates lag one step behind: call step() after backward()"
    dirty = pending = False  # gradients not yet zeroed / not yet used by a step
    for event in events:
        if event == "backward":
            if pending and dirty:
                return "loss.backward() runs twice before one optimizer.step(), so the second pass adds its gradients to the first's (.grad accumulates) and the step takes their sum: one backward per step"
            if dirty:
                if "zero_grad" not in events:
                    return "optimizer.zero_grad() is never called, so each backward adds its gradients to those of every earlier one (.grad accumulates): call optimizer.zero_grad() before each loss.backward()"
                return "optimizer.zero_grad() is not called before every backward, so .grad accumulates the gradients of earlier backward passes: call it once per step, before loss.backward()"
            dirty = pending = True
        elif event == "zero_grad":
            if pending:
                return "optimizer.zero_grad() runs between loss.backward() and optimizer.step(), so the step finds no gradients and the model does not learn: call zero_grad() before loss.backward() (or after step())"
            dirty = False
        elif event == "step":
            pending = False
    return None
