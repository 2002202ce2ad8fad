"""The build track's one runner: a task's programs on PyTorch and on the learner's engine, compared.

    from course import track
    track.check("2.3")      # one exercise: one line, correct ✓ / not done yet / what differs
    track.check_chapter(2)  # every build-track exercise of chapter 2
    track.progress()        # the table of every exercise (also `make progress`)
    lib = track.engine()    # your engine as a module, to run programs on

A program is `program(lib, see)`, written once against the API that torch and my_autograd
share. It calls `see` on what should agree: `see("x.grad", x.grad)` (a tensor, with its dtype,
a number, bool or text), `see.graph("the graph of y", y)` (node names, edges, saved tensors
alive or freed), `see.error("backward twice", lambda: ...)` (the error type and text),
`see.order("order", loss)` (the order backward runs the nodes in) and `see.counts(...)`
(dependency counts). The runner runs each program on both libraries and reports the first
observation that differs, in plain words, with the task's advice for that kind of difference
and its hint. The specs are in `course/specs.py`.
"""

from __future__ import annotations

import contextlib
import functools
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from course import engine_file
from course.check import as_array, verdict
from course.specs import TASKS, Task
from mini_autograd.instruments.graph_walk import graph_nodes
from mini_autograd.instruments.memory import is_tensor
from mini_autograd.instruments.viz import saved_tensors

NUMBERING = (
    " (nodes are numbered from the root, node 0, level by level: the order in which the "
    "pictures draw them, top to bottom)"
)


class _Difference(Exception):
    def __init__(self, kind: str, text: str):
        super().__init__(text + (NUMBERING if "from the top" in text else ""))
        self.kind = kind


SECONDS_PER_PROGRAM = 15  # longer means an endless loop: the check says so instead of hanging


class _TooLong(BaseException):  # not an Exception, for the same reason as _FormulaMistake
    pass


@contextlib.contextmanager
def _time_limit(seconds: float):
    """Raise _TooLong in the body after `seconds`, where SIGALRM exists and this is the main
    thread; an outer timer (course.mutants sets one) is put back with what is left of it."""
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return

    def too_long(*_):
        raise _TooLong

    handler = signal.signal(signal.SIGALRM, too_long)
    outer, _ = signal.setitimer(signal.ITIMER_REAL, seconds)
    start = time.monotonic()
    try:
        yield
    finally:
        left = outer - (time.monotonic() - start)
        signal.setitimer(signal.ITIMER_REAL, max(left, 0.001) if outer else 0)
        signal.signal(signal.SIGALRM, handler)


@contextlib.contextmanager
def _no_recursion_limit_change():
    """While the learner's code runs, sys.setrecursionlimit is a mistake: the pieces that walk
    a graph are asked for a loop, and a deeper graph would overflow any limit."""

    def refuse(limit):
        raise _FormulaMistake(
            f"your code called sys.setrecursionlimit({limit}): a graph deeper than any limit "
            "would still overflow it; walk the graph with a loop and a list of nodes still to visit"
        )

    original, sys.setrecursionlimit = sys.setrecursionlimit, refuse
    try:
        yield
    finally:
        sys.setrecursionlimit = original


class _FormulaMistake(BaseException):  # not an Exception: a program's see.error must not catch it
    """A backward formula of the learner's returned something no formula may return."""


# --- What a program observes, in a form both libraries give alike -------------------------------


def _saved_states(node) -> dict[str, str]:
    """{saved name: 'alive', 'freed' or 'modified'} for the tensors a node saved.

    A learner's saved tensor marked freed that still holds its value is 'freed, its value still
    held': the memory freeing is meant to give back is not given back.
    """
    states = {label: state for label, state, _ in saved_tensors(node)}
    saved = getattr(node, "_saved", None)
    for name, entry in saved.items() if isinstance(saved, dict) else ():
        if name in states and getattr(entry, "freed", False):  # whatever text its error has
            held = getattr(entry, "value", None) is not None
            states[name] = "freed, its value still held" if held else "freed"
    return states


def _label(node) -> str:
    return "AccumulateGrad" if node.name().endswith("AccumulateGrad") else node.name()


def graph_summary(tensors) -> list[tuple]:
    """[(name, (edge, ...), saved states)] per node, breadth first; an edge is a position or None."""
    tensors = tensors if isinstance(tensors, (list, tuple)) else [tensors]
    nodes = graph_nodes([t.grad_fn for t in tensors], breadth_first=True)
    position = {node: i for i, node in enumerate(nodes)}
    return [
        (
            _label(node),
            tuple(None if n is None else position[n] for n, _ in node.next_functions),
            _saved_states(node),
        )
        for node in nodes
    ]


class See:
    """Records what a program observes; the runner compares two recordings."""

    def __init__(self, lib, reference):
        self.lib = lib
        self.engine = reference if lib.__name__ == "torch" else lib  # for functions torch lacks
        self.seen: list[tuple[str, str, Any]] = []

    def __call__(self, label: str, value) -> None:
        """Observe a value: a tensor, None, a number, a bool or a text."""
        if value is None or isinstance(value, (bool, str)):
            self.seen.append(("value", label, value))
        elif isinstance(value, (tuple, list)):
            for i, item in enumerate(value):
                self(f"{label}[{i}]", item)
        else:
            self.seen.append(("value", label, as_array(value)))
            if hasattr(value, "dtype") and hasattr(value, "detach"):  # a tensor: its dtype too
                dtype = str(value.dtype).replace("torch.", "")
                self.seen.append(("value", f"the dtype of {label}", dtype))

    def graph(self, label: str, tensors) -> None:
        """Observe the graph behind `tensors`: names, edges, and saved tensors alive or freed."""
        self.seen.append(("graph", label, graph_summary(tensors)))

    def error(self, label: str, action: Callable[[], Any]) -> None:
        """Observe whether `action()` raises, and with which type and text."""
        try:
            action()
        except NotImplementedError:
            raise
        except Exception as error:
            self.seen.append(("error", label, (type(error).__name__, str(error), error)))
            return
        self.seen.append(("error", label, None))

    def order(self, label: str, loss, **backward_options) -> None:
        """Run loss.backward(**backward_options) and observe the order the nodes run in."""
        nodes = graph_nodes([loss.grad_fn], breadth_first=True)
        ran = []
        for node in nodes:
            if self.lib.__name__ == "torch":
                node.register_prehook(lambda grads, node=node: ran.append(node))
            else:  # the learner's loop may not call pre-hooks yet: watch apply itself
                node.apply = _watched(node.apply, node, ran)
        loss.backward(**backward_options)
        names = {node: f"{_label(node)} (node {i} from the top)" for i, node in enumerate(nodes)}
        self.seen.append(("order", label, [names[node] for node in ran]))

    def counts(self, label: str, counts: dict, roots) -> None:
        """Observe a {node: count} dict, naming each node by its place in the graph of `roots`."""
        nodes = graph_nodes(roots, breadth_first=True)
        where = {node: i for i, node in enumerate(nodes)}
        if not isinstance(counts, dict):
            raise _Difference(
                "counts", f"compute_dependencies returned {type(counts).__name__}, not a dict"
            )
        named = {}
        for node, count in counts.items():
            if (
                count == 0
            ):  # a root with no edge into it: listing it at 0 is as good as leaving it out
                continue
            if node not in where:
                raise _Difference(
                    "counts",
                    f"compute_dependencies counted a node that is not in the graph: {node!r}",
                )
            named[f"{_label(node)} (node {where[node]} from the top)"] = count
        self.seen.append(("counts", label, dict(sorted(named.items()))))


def _watched(apply, node, ran):
    def watched(*grads):
        ran.append(node)
        return apply(*grads)

    return watched


# --- Comparing two recordings --------------------------------------------------------------------


def _shown(value) -> str:
    return "a tensor" if isinstance(value, np.ndarray) else repr(value)


def _value_difference(label, mine, theirs) -> str | None:
    if isinstance(theirs, np.ndarray) != isinstance(mine, np.ndarray):
        shown, expected = _shown(mine), _shown(theirs)
        return f"`{label}` is {shown}; PyTorch gives {expected}"
    if not isinstance(theirs, np.ndarray):
        return None if mine == theirs else f"`{label}` is {mine!r}; PyTorch gives {theirs!r}"
    if mine.shape != theirs.shape:
        return f"`{label}` has shape {mine.shape}; PyTorch's has shape {theirs.shape}"
    if np.allclose(mine, theirs, rtol=1e-5, atol=1e-6, equal_nan=True):
        return None
    error = np.where(np.isnan(mine - theirs), np.inf, np.abs(mine - theirs))
    worst = np.unravel_index(np.argmax(error), error.shape) if error.ndim else ()
    at = f" (at index {tuple(int(i) for i in worst)})" if error.ndim else ""
    return (
        f"`{label}` differs from PyTorch's{at}: expected {theirs[worst]:.6g}, got {mine[worst]:.6g}"
    )


def _graph_difference(label, mine, theirs) -> str | None:
    accumulators = [sum(node[0] == "AccumulateGrad" for node in g) for g in (mine, theirs)]
    if accumulators[0] > accumulators[1]:
        return (
            f"{label} has {accumulators[0]} AccumulateGrad nodes; PyTorch's has "
            f"{accumulators[1]}: only a leaf that requires grad has an accumulator, one, made the "
            "first time it is used and reused after; a tensor made by an operation sends its "
            "gradient to its grad_fn, and a constant sends none"
        )
    for i, (node_mine, node_theirs) in enumerate(zip(mine, theirs)):
        if node_mine[0] != node_theirs[0]:
            return f"in {label}, node {i} from the top is {node_mine[0]}; PyTorch's is {node_theirs[0]}"
        if node_mine[1] != node_theirs[1]:
            return (
                f"in {label}, {node_mine[0]} (node {i}) has edges {_edges(node_mine[1], mine)}; "
                f"PyTorch's has {_edges(node_theirs[1], theirs)}"
            )
        if node_mine[2] != node_theirs[2]:
            return (
                f"in {label}, {node_mine[0]} saves {_saved(node_mine[2])}; "
                f"PyTorch's saves {_saved(node_theirs[2])}"
            )
    if len(mine) != len(theirs):
        return f"{label} has {len(mine)} nodes; PyTorch's has {len(theirs)}"
    return None


def _edges(edges, nodes) -> str:
    return (
        "(" + ", ".join("None" if e is None else f"{nodes[e][0]} (node {e})" for e in edges) + ")"
    )


def _saved(states) -> str:
    if not states:
        return "nothing"
    return ", ".join(f"{name} ({state})" for name, state in sorted(states.items()))


def _error_difference(label, mine, theirs) -> str | None:
    if mine is None and theirs is None:
        return None
    if theirs is None:
        return f"{label}: your engine raised {mine[0]}: {_clip(mine[1])}; PyTorch raises nothing"
    if mine is None:
        return (
            f"{label}: PyTorch raises {theirs[0]}: {_clip(theirs[1])}; your engine raised nothing"
        )
    if mine[0] != theirs[0]:
        return f"{label}: your engine raised {mine[0]}: {_clip(mine[1])}; PyTorch raises {theirs[0]}: {_clip(theirs[1])}"
    if mine[1] != theirs[1]:
        start = next((i for i, (a, b) in enumerate(zip(mine[1], theirs[1])) if a != b), None)
        start = min(len(mine[1]), len(theirs[1])) if start is None else start
        if start == 0:  # another text altogether: PyTorch's whole, to write it to the letter
            return f"{label}: the error's text is another from its first character: yours reads {_clip(mine[1])}, PyTorch's reads {_clip(theirs[1], 400)}"
        window = slice(max(0, start - 30), start + 40)
        return (
            f"{label}: the error's text differs from character {start}: yours reads "
            f"{_clip('…' + mine[1][window])}, PyTorch's {_clip('…' + theirs[1][window])}"
        )
    return None


def _clip(text, width=90) -> str:
    text = " ".join(text.split())
    return f'"{text}"' if len(text) <= width else f'"{text[:width]}…"'


def _sequence_difference(label, mine, theirs) -> str | None:
    if mine == theirs:
        return None
    for step, (a, b) in enumerate(zip(mine, theirs), start=1):
        if a != b:
            return f"{label}: at step {step} your engine runs {a}; PyTorch runs {b}"
    return f"{label}: your engine runs {len(mine)} nodes; PyTorch runs {len(theirs)}"


def _counts_difference(label, mine, theirs) -> str | None:
    for name in sorted(set(mine) | set(theirs)):
        if mine.get(name) != theirs.get(name):
            if name not in mine:
                return f"{label}: {name} is missing from your counts; the right count is {theirs[name]}"
            if name not in theirs:
                return f"{label}: {name} has count {mine[name]}, but no edge points into it"
            return f"{label}: {name} has count {mine[name]}; the right count is {theirs[name]}"
    return None


_DIFFERENCES = {
    "value": _value_difference,
    "graph": _graph_difference,
    "error": _error_difference,
    "order": _sequence_difference,
    "counts": _counts_difference,
}


def _compare(mine: list, theirs: list) -> None:
    for (kind, label, value), (kind_t, label_t, value_t) in zip(mine, theirs):
        if (kind, label) != (kind_t, label_t):
            if kind == kind_t == "value" and label.startswith(f"{label_t}["):
                raise _Difference(
                    "value",
                    f"`{label_t}` is a tuple or list (its first item is {_shown(value)}); "
                    f"PyTorch gives {_shown(value_t)}",
                )
            if kind == kind_t == "value" and label_t.startswith(f"{label}["):
                raise _Difference(
                    "value", f"`{label}` is {_shown(value)}; PyTorch gives a tuple or list"
                )
            raise _Difference("flow", f"the program stopped early: it never got to {label_t}")
        problem = _DIFFERENCES[kind](label, value, value_t)
        if problem:
            raise _Difference(kind, problem)
    if len(mine) < len(theirs):
        raise _Difference("flow", f"the program stopped before {theirs[len(mine)][1]}")


# --- Running a task ------------------------------------------------------------------------------


def _program_name(program) -> str:
    """The first paragraph of the program's docstring, on one line (its name otherwise)."""
    if not program.__doc__:
        return program.__name__
    return " ".join(program.__doc__.strip().split("\n\n")[0].split())


def run(task: Task, path: Path, results: dict | None = None) -> tuple[str, str]:
    """(status, message) of one task on the engine at `path`: 'done', 'not done' or 'wrong'.

    When the task's programs differ from PyTorch's but its own piece is right on its own (with
    the course's answer for every other exercise), the message names the other piece to fix
    first instead. `results` caches the runs of one progress table.
    """
    results = {} if results is None else results
    key = (task.id, False)
    if key not in results:
        status, message = _run(task, path)
        if status == "wrong":
            status, message = _blame(task, path, results, message) or (status, message)
        results[key] = ("wrong" if status == "unloadable" else status, message)
    return results[key]


def _isolated(task: Task, path: Path, results: dict) -> tuple[str, str]:
    key = (task.id, True)
    if key not in results:
        results[key] = _run(task, path, answered=engine_file.ALL)
    return results[key]


def _blame(task: Task, path: Path, results: dict, first: str) -> tuple[str, str] | None:
    """The message for a task that fails only together with the learner's other pieces.

    Each of the learner's other pieces is swapped in turn for the course's answer; the one
    whose swap makes the task pass is named.
    """
    alone = _isolated(task, path, results)
    if alone[0] != "done":  # wrong with the course's other pieces too: the first message stands
        return None
    source = path.read_text("utf-8")
    written = set(engine_file.exercise_functions().values()) - set(
        engine_file.stubs(source).values()
    )
    for other in TASKS:
        if other.id in written and other.id != task.id:
            if _run(task, path, answered={other.id})[0] == "done":
                results.setdefault(("breaks", other.id), []).append(task.id)
                own = _isolated(other, path, results)[0] == "wrong"
                return (
                    "wrong",
                    f"your piece is right on its own, but your Exercise {other.id} ({other.where}) "
                    "makes these programs differ from PyTorch's"
                    + (" (its own check says so too)" if own else ", though its own check passes")
                    + f": fix Exercise {other.id} first. What differs: {_without_advice(task, first)}",
                )
    return None


@functools.cache
def _reference_engine():
    """The course's engine, loaded once: torch's programs call its functions torch lacks."""
    return engine_file.load(engine_file.REFERENCE)[0]


def _run(task: Task, path: Path, answered=()) -> tuple[str, str]:
    try:
        engine, _filled, pending = engine_file.load(path, keep=task.id, answered=answered)
        reference = _reference_engine()
    except engine_file.EngineError as error:
        return "unloadable", str(error)
    todo = ""
    if pending:
        where = " and ".join(f"`{name}`" for name in pending)
        todo = f'write {where} in {path.name} (search for "Exercise {task.id}")'
        if len(pending) == list(engine_file.exercise_functions().values()).count(task.id):
            return "not done", todo
        # some of the piece is written: check it, with the course's answer for the rest
        engine = engine_file.load(path, keep=task.id, answered=answered, stand_in=True)[0]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.filterwarnings("ignore", "Using backward.. with create_graph=True", UserWarning)
        status, message = _compare_programs(task, engine, reference)
    if todo and status == "done":
        return "not done", f"{todo}; what you wrote matches PyTorch so far"
    return status, message


def _torch_seen(program, reference) -> list:
    """What `program` observes on torch: computed once per program (torch's answer never changes)."""
    key = (program, id(reference))
    if key not in _TORCH_SEEN:
        import torch

        theirs = See(torch, reference)
        program(torch, theirs)
        _TORCH_SEEN[key] = theirs.seen
    return _TORCH_SEEN[key]


_TORCH_SEEN: dict = {}


def _compare_programs(task: Task, engine, reference) -> tuple[str, str]:
    _guard_formulas(engine)
    for program in task.programs:
        name = _program_name(program)
        theirs = _torch_seen(program, reference)
        mine = See(engine, reference)
        try:
            with _time_limit(SECONDS_PER_PROGRAM), _no_recursion_limit_change():
                program(engine, mine)
            _compare(mine.seen, theirs)
        except NotImplementedError as error:
            if str(error).startswith("Exercise "):
                return "not done", f"{error} is still a stub"
            return "not done", f"your code raised NotImplementedError({str(error)!r}): finish it"
        except RecursionError:
            return (
                "wrong",
                f"{name}: your code hit Python's recursion limit (RecursionError): use a loop with a list of nodes still to visit."
                + _advice(task, "recursion", program),
            )
        except _TooLong:
            return (
                "wrong",
                f"{name}: your code ran for more than {SECONDS_PER_PROGRAM} s without finishing: an endless loop? (a node that never leaves the list of nodes still to visit, or a count that never reaches zero)."
                + _advice(task, "too long", program),
            )
        except _FormulaMistake as mistake:
            said = str(mistake).rstrip(".")
            return "wrong", f"{name}: {said}.{_advice(task, 'formula', program)}"
        except _Difference as difference:
            return "wrong", f"{name}: {difference}.{_advice(task, difference.kind, program)}"
        except Exception as error:  # an ordinary mistake in the learner's code: report, don't raise
            try:  # a difference seen before the crash is the first thing that went wrong
                _compare(mine.seen, theirs[: len(mine.seen)])
            except _Difference as difference:
                return "wrong", f"{name}: {difference}.{_advice(task, difference.kind, program)}"
            described = engine_file.describe(error)
            heap = isinstance(error, TypeError) and "'<' not supported" in str(error)
            return (
                "wrong",
                f"{name}: your engine raised {described}"
                + _advice(task, "heap" if heap else "raised", program),
            )
    count = len(task.programs)
    return "done", f"matches PyTorch on {count} program{'s' if count > 1 else ''}"


def _guard_formulas(engine) -> None:
    """Wrap every backward formula of the learner's engine so a wrong kind of result is named."""
    for cls in [c for c in vars(engine).values() if isinstance(c, type)]:
        if issubclass(cls, engine.Node) and "apply" in vars(cls):
            cls.apply = _guarded(cls.__name__, vars(cls)["apply"], engine)
    if hasattr(engine, "_sum_to"):  # the formulas call it by its global name
        engine._sum_to = _guarded_sum_to(engine._sum_to, engine)


def _guarded_sum_to(sum_to: Callable, engine) -> Callable:
    def checked(grad, shape):
        out = sum_to(grad, shape)
        if engine._GradMode.enabled and getattr(grad, "requires_grad", False):
            if is_tensor(out) and not out.requires_grad:
                raise _FormulaMistake(
                    "under create_graph, _sum_to returned a gradient outside the graph: it summed "
                    "the numpy array (`._data`), which autograd cannot differentiate again; sum "
                    "with tensor operations"
                )
        return out

    return checked


def _guarded(name: str, apply: Callable, engine) -> Callable:
    def checked(node, *grads):
        out = apply(node, *grads)
        inputs = len(node.next_functions)
        if not isinstance(out, tuple):
            got = "None (a missing return?)" if out is None else f"a {type(out).__name__}"
            raise _FormulaMistake(
                f"{name}.apply returned {got}, not a tuple: return one gradient per input, "
                f"in a tuple, even for a node with one input"
            )
        if len(out) != inputs:
            raise _FormulaMistake(f"{name}.apply returned {len(out)} gradients for {inputs} inputs")
        if engine._GradMode.enabled and _in_graph(grads, node):
            for grad, (edge, _) in zip(out, node.next_functions):
                if edge is not None and is_tensor(grad) and not grad.requires_grad:
                    raise _FormulaMistake(
                        f"under create_graph, {name}.apply returned a gradient outside the graph: "
                        "it was computed on numpy arrays (`._data`), or on a saved value read "
                        "without the node's saved(), and autograd cannot differentiate it again; "
                        "write the formula with tensor operations on what saved() gives back"
                    )
        return out

    return checked


def _in_graph(grads, node) -> bool:
    """True when a formula's inputs (g or a saved tensor) are in the graph, so its result must be."""
    saved = [s for s in node._saved.values() if getattr(s, "unpack_hook", 1) is None]
    kept = [s for s in saved if not getattr(s, "freed", True)]
    if any(getattr(s, "is_output", False) for s in kept):  # in the graph, though kept without it
        return True
    values = [getattr(s, "value", None) for s in kept]
    return any(is_tensor(v) and v.requires_grad for v in [*grads, *values])


def _without_advice(task: Task, message: str) -> str:
    """`message` without the task's own advice and hint: they speak of this piece, not the culprit."""
    message = message.split(" Hint:")[0]
    for advice in task.advice.values():
        message = message.replace(f" {advice}", "")
    return message


def _advice(task: Task, kind: str, program=None) -> str:
    advice = task.advice.get(getattr(program, "__name__", ""), "") or task.advice.get(kind, "")
    return (f" {advice}" if advice else "") + f" Hint: {task.hint}"


def _task(exercise_id: str) -> Task:
    task = next((t for t in TASKS if t.id == exercise_id), None)
    if task is None:
        raise ValueError(f"no build-track exercise {exercise_id}")
    return task


@verdict
def check(exercise_id: str, path: Path | None = None) -> bool:
    """Run one build-track exercise's check and print its one line; True when it passes."""
    task = _task(exercise_id)
    status, message = run(task, path or engine_file.default_path())
    prefix = f"Exercise {task.id} ({task.where})"
    if status == "done":
        several = " and " in task.where or "," in task.where
        print(
            f"Exercise {task.id}: correct ✓ — {task.where} {message.replace('matches', 'match') if several else message}."
        )
    elif status == "not done":
        print(f"Exercise {task.id}: not done yet — {message}. Hint: {task.hint}")
    else:
        print(f"{prefix}: {message}")
    return status == "done"


@verdict
def check_chapter(chapter: int, path: Path | None = None) -> bool:
    """Check every build-track exercise of one chapter, one line each."""
    results = [check(t.id, path) for t in TASKS if t.id.split(".")[0] == str(chapter)]
    return all(results)


def progress(path: Path | None = None) -> None:
    """Print a table of every build-track exercise: done, not done, or wrong with the first message."""
    progress_rows(path)


def progress_rows(path: Path | None = None) -> list[tuple[str, str, str]]:
    """Print the progress table; return (exercise, status, message) per exercise."""
    path = path or engine_file.default_path()
    results = {}
    rows = [(t.id, t.title, *run(t, path, results)) for t in TASKS]
    for i, (exercise, title, status, message) in enumerate(rows):
        broken = results.get(("breaks", exercise))
        if status == "done" and broken:
            message = (
                f"passes its own check, but breaks {', '.join(sorted(set(broken)))}: "
                "their programs match PyTorch with the course's answer in place of yours"
            )
            rows[i] = (exercise, title, "wrong", message)
    chapter, width = None, max(len(title) for _, title, _, _ in rows) + 1
    for exercise, title, status, message in rows:
        if exercise.split(".")[0] != chapter:
            chapter = exercise.split(".")[0]
            done = sum(1 for r in rows if r[0].split(".")[0] == chapter and r[2] == "done")
            total = sum(1 for r in rows if r[0].split(".")[0] == chapter)
            print(f"Chapter {int(chapter):02d}: {done} of {total} done")
        shown = {"done": "done ✓", "not done": "not done", "wrong": "wrong"}[status]
        detail = f" — {message}" if status == "wrong" else ""
        print(f"  {exercise:<5} {title:<{width}} {shown}{detail}")
    return [(exercise, status, message) for exercise, _, status, message in rows]


def engine(path: Path | None = None):
    """Your engine as a module: your file, with the course's answer for each piece not yet written."""
    path = path or engine_file.default_path()
    try:
        module, filled, _ = engine_file.load(path)
    except engine_file.EngineError as error:
        print(f"{error}; using the course's engine, solutions/my_autograd.py, until then")
        module, filled, _ = engine_file.load(engine_file.REFERENCE)
    if filled:
        print(
            f"(your engine, with the course's answer for what you have not written yet: {', '.join(filled)})"
        )
    return module


def freed_in_graph(tensor) -> str:
    """One line on the nodes of `tensor`'s graph whose saved tensors an earlier backward freed."""
    freed = [
        _label(n)
        for n in graph_nodes([tensor.grad_fn], breadth_first=True)
        if "freed" in _saved_states(n).values()
    ]
    if not freed:
        return "nothing in this graph has been freed: backward can run"
    counts = {name: freed.count(name) for name in dict.fromkeys(freed)}
    listed = ", ".join(f"{name} ×{count}" for name, count in counts.items())
    return (
        f"{len(freed)} node(s) of this graph were freed by an earlier backward ({listed}): "
        "this graph reaches into one that an earlier backward already went through"
    )


def main() -> int:
    """`python -m course.track [path]`: the progress table of the learner's engine."""
    import sys

    path = Path(sys.argv[1]) if len(sys.argv) > 1 else engine_file.LEARNER
    print(
        f"Build-track progress of {path.relative_to(engine_file.ROOT) if path.is_absolute() and path.is_relative_to(engine_file.ROOT) else path}"
    )
    progress(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
