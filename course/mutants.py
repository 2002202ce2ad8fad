"""Mutation testing of the build track: do the checks catch the mistakes a learner makes?

    python -m course.mutants            # every piece (also `make mutants`): a table per piece
    python -m course.mutants 2.7 3.3    # only these pieces
    python -m course.mutants --list 2.2 # the surviving mutants of a piece, one per line
    python -m course.mutants --notebooks [5.2 ...]  # the notebook exercises instead (see below)

Each mutant is the complete engine with one change inside one piece's solution region, of the
kinds a learner writes: a statement deleted, `+=` made `=`, the operands of `-`, `/` or `@`
swapped, a comparison or a boolean flipped, a constant off by one, a call such as `_sum_to`,
`.t()` or `.detach()` dropped, a minus sign dropped, a return value dropped. The piece's own
check runs on it; a mutant it passes "survives". A survivor that behaves exactly like the
answer is listed with the reason in `course/mutants_equivalent.py`; any other is a hole in the
check, to be closed with a new program in `course/specs.py`.

The notebook exercises (a function written in an exercise notebook, checked by a check cell
such as `check_hvp(hvp)`) get the same mutants of their regions in `solutions/sources/NN_*.py`.
For each exercise a child process runs the cells before the answer's cell once, as a learner's
notebook does; then, per mutant, a fork of it runs the mutated cell and the cells after it up to
the check cell. The mutant is caught unless the check cell prints only `Exercise N.k: correct ✓`
lines (an error or running past the time limit catches it too). Equivalent survivors are listed
in the same `course/mutants_equivalent.py`; any other is a hole in `course/checks_0N.py`.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import io
import itertools
import os
import re
import signal
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from course import build_exercises, engine_file, specs, track
from course.build_exercises import BEGIN, END
from course.mutants_equivalent import EQUIVALENT

SWAPPED_OPERATORS = (ast.Sub, ast.Div, ast.MatMult)
FLIPPED = {
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE,
    ast.LtE: ast.Gt, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In,
}  # fmt: skip
DROPPED_CALLS = {"_sum_to", "t", "detach", "expand", "reshape"}
SECONDS = 20  # a mutant that runs longer (an endless loop) counts as caught


def regions(source: str) -> dict[str, list[tuple[int, int]]]:
    """{exercise id: [(first line, last line), ...]} of the solution regions in `source`."""
    found: dict[str, list[tuple[int, int]]] = {}
    start = None
    for number, line in enumerate(source.splitlines(), start=1):
        begin = BEGIN.match(line)
        if begin:
            start = (begin["id"], number)
        elif END.match(line) and start:
            found.setdefault(start[0], []).append((start[1], number))
            start = None
    return found


def _inside(node: ast.AST, spans: list[tuple[int, int]]) -> bool:
    line = getattr(node, "lineno", None)
    return line is not None and any(a < line < b for a, b in spans)


def _changes(node: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """(description, replacement) for each mutation of one node."""
    if isinstance(node, ast.stmt) and not isinstance(node, ast.Return):
        yield "statement deleted", ast.Pass()
    if isinstance(node, ast.AugAssign):
        yield "+= made =", ast.Assign(targets=[node.target], value=node.value, lineno=node.lineno)
    if isinstance(node, ast.Return) and node.value is not None:
        yield "return value dropped", ast.Return(value=None)
    if isinstance(node, ast.BinOp) and isinstance(node.op, SWAPPED_OPERATORS):
        yield "operands swapped", ast.BinOp(left=node.right, op=node.op, right=node.left)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
        yield f"{'minus sign' if isinstance(node.op, ast.USub) else 'not'} dropped", node.operand
    if isinstance(node, ast.Compare) and type(node.ops[0]) in FLIPPED:
        flipped = copy.copy(node)
        flipped.ops = [FLIPPED[type(node.ops[0])](), *node.ops[1:]]
        yield "comparison flipped", flipped
    if isinstance(node, ast.BoolOp):
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield "and/or swapped", ast.BoolOp(op=other, values=node.values)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            yield "boolean flipped", ast.Constant(not node.value)
        elif isinstance(node.value, int):
            yield "constant + 1", ast.Constant(node.value + 1)
            yield "constant - 1", ast.Constant(node.value - 1)
        elif node.value is None:
            yield "None made 0", ast.Constant(0)
    if isinstance(node, ast.Call):
        called = (
            node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        )
        if called in DROPPED_CALLS:
            kept = node.func.value if isinstance(node.func, ast.Attribute) else node.args[0]
            yield f"{called}() dropped", kept
    if isinstance(node, ast.If):
        yield "condition negated", ast.If(test=ast.UnaryOp(ast.Not(), node.test), body=node.body,
                                          orelse=node.orelse)  # fmt: skip


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, replacement: ast.AST):
        self.target, self.replacement = target, replacement

    def generic_visit(self, node):
        if node is self.target:
            return self.replacement
        return super().generic_visit(node)

    visit = generic_visit


def mutants(source: str, exercise: str) -> Iterator[tuple[str, str]]:
    """(description with its line, mutated source) for every mutant of one piece."""
    spans = regions(source)[exercise]
    original = ast.parse(source)
    statement = {}  # node -> the statement it belongs to, to name where a change is
    for parent in ast.walk(original):
        for child in ast.iter_child_nodes(parent):
            statement[child] = parent if isinstance(parent, ast.stmt) else statement.get(parent)
    for index, node in enumerate(ast.walk(original)):
        if not _inside(node, spans):
            continue
        for description, replacement in _changes(node):
            tree = ast.parse(source)
            target = next(itertools.islice(ast.walk(tree), index, None))
            tree = _Replace(target, copy.deepcopy(replacement)).visit(tree)
            text = " ".join(ast.unparse(node).split())[:60]
            if not isinstance(node, ast.stmt) and statement.get(node) is not None:
                text = f"{ast.unparse(statement[node]).splitlines()[0][:60]}` at `{text}"
            yield (
                f"`{text}`: {description} (line {node.lineno})",
                ast.unparse(ast.fix_missing_locations(tree)),
            )


class _TimeOut(BaseException):
    pass


def _alarm(*_):
    raise _TimeOut


def judge(task: specs.Task, mutated: str, folder: Path) -> str:
    """'caught' or 'survived': the piece's own check on one mutant."""
    path = folder / "my_autograd.py"
    path.write_text(mutated, "utf-8")
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(SECONDS)
    try:
        status, _ = track._run(task, path)
    except (_TimeOut, Exception):
        status = "caught"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return "survived" if status == "done" else "caught"


def run(ids: list[str] | None = None, show=print) -> dict[str, dict]:
    """{piece: {'caught': n, 'equivalent': [...], 'survived': [...]}}, with a table printed."""
    source = engine_file.SOURCE.read_text("utf-8")
    tasks = [t for t in specs.TASKS if not ids or t.id in ids]
    table = {}
    show(f"{'piece':<6} {'mutants':>7} {'caught':>6} {'equiv.':>6} {'survive':>7} {'caught %':>8}")
    totals = {"caught": 0, "equivalent": [], "survived": []}
    with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # `x is 0`: a mutant, not a learner's line
        for task in tasks:
            row = _tally(
                task.id,
                (
                    (description, judge(task, mutated, Path(folder)))
                    for description, mutated in mutants(source, task.id)
                ),
            )
            table[task.id] = row
            show(_row(task.id, row))
            for key in totals:
                totals[key] += row[key]
    show(_row("all", totals) + "  (caught % counts the non-equivalent mutants)")
    return table


def _tally(piece: str, verdicts) -> dict:
    """{'caught': n, 'equivalent': [...], 'survived': [...]} from (description, verdict) pairs."""
    row = {"caught": 0, "equivalent": [], "survived": []}
    for description, verdict in verdicts:
        if verdict == "caught":
            row["caught"] += 1
        elif _equivalent(piece, description):
            row["equivalent"].append(description)
        else:
            row["survived"].append(description)
    return row


def _row(label: str, row: dict) -> str:
    """One line of the table: mutants, caught, equivalent, surviving, and the caught share."""
    caught, equivalent, survived = row["caught"], len(row["equivalent"]), len(row["survived"])
    share = 100 * caught / (caught + survived) if caught + survived else 100
    return (
        f"{label:<6} {caught + equivalent + survived:>7} {caught:>6} {equivalent:>6} "
        f"{survived:>7} {share:>7.1f}%"
    )


def _equivalent(exercise: str, description: str) -> bool:
    return any(
        exercise == piece and description.rsplit(" (line", 1)[0] == change
        for piece, change, _ in EQUIVALENT
    )


# --- the notebook exercises ---------------------------------------------------------------------

CELL = re.compile(r"^# %%")


@dataclass
class Exercise:
    """A notebook exercise: its id, the code cells of its source, the cell holding its answer
    (``region``) and its check cell (``check``), as indexes into ``cells``."""

    id: str
    source: Path
    cells: list[str]
    region: int
    check: int


def code_cells(source: str) -> list[str]:
    """The code cells of a percent-format source, each padded with empty lines so that its line
    numbers are those of the source."""
    lines = source.splitlines()
    starts = [n for n, line in enumerate(lines) if CELL.match(line)] + [len(lines)]
    return [
        "\n" * (a + 1) + "\n".join(lines[a + 1 : b])
        for a, b in itertools.pairwise(starts)
        if "[markdown]" not in lines[a]
    ]


def _check_call(cell: str, answer: set[str]) -> bool:
    """Whether the cell calls a check (`check(...)`, `check_*(...)`) on a name in ``answer``."""
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id.startswith("check")
        and {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} & answer
        for node in ast.walk(ast.parse(cell))
    )


def notebook_exercises(ids=None, skipped=None) -> list[Exercise]:
    """The notebook exercises with a check of the learner's function; ``skipped`` (a dict), when
    given, receives {id: why} for the others."""
    found = []
    for source in build_exercises.sources():
        cells = code_cells(source.read_text("utf-8"))
        for region, cell in enumerate(cells):
            for exercise in regions(cell):
                if ids and exercise not in ids:
                    continue
                tree = ast.parse(cell)
                answer = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
                check = next(
                    (k for k in range(region + 1, len(cells)) if _check_call(cells[k], answer)),
                    None,
                )
                if check is None:
                    if skipped is not None:
                        skipped[exercise] = "no cell after it checks the function it defines"
                    continue
                found.append(Exercise(exercise, source, cells, region, check))
    return found


def _passes(exercise: Exercise, cell: str) -> bool:
    """In a fork of the notebook's state: run ``cell`` in place of the answer's cell, then the
    cells up to the check; whether the check printed only `correct ✓` lines."""
    for code in [cell, *exercise.cells[exercise.region + 1 : exercise.check]]:
        exec(compile(code, str(exercise.source), "exec"), _NAMESPACE)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(exercise.cells[exercise.check], str(exercise.source), "exec"), _NAMESPACE)
    lines = printed.getvalue().strip().splitlines()
    return bool(lines) and all(
        line.startswith(f"Exercise {exercise.id}: correct ✓") for line in lines
    )


_NAMESPACE: dict = {}


def _in_child(work, seconds: float | None = None) -> int:
    """Run ``work()`` in a forked child with its output silenced and return its value (an int
    from 0 to 255); 255 when it raised, ran past ``seconds`` or died."""
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 255
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            if seconds:
                signal.signal(signal.SIGALRM, _alarm)
                signal.alarm(int(seconds))
            code = work()
        except BaseException:  # noqa: BLE001 -- any failure of a mutant catches it
            code = 255
        finally:
            os._exit(code)
    deadline = None if seconds is None else time.monotonic() + seconds + 10
    while True:
        done, status = os.waitpid(pid, 0 if deadline is None else os.WNOHANG)
        if done:
            return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 255
        if time.monotonic() > deadline:  # stuck where the alarm cannot reach (inside a C call)
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return 255
        time.sleep(0.02)


def _verdicts(exercise: Exercise, cells: list[str]) -> list[str]:
    """'caught' or 'survived' for each version of the answer's cell, from one child that runs the
    cells before it once and forks per version."""
    reading, writing = os.pipe()

    def serve() -> int:
        import torch

        torch.set_num_threads(1)  # forks of a process that ran threads may hang
        os.chdir(engine_file.ROOT / "exercises")  # where the learner's notebook runs
        _NAMESPACE.clear()
        _NAMESPACE["__name__"] = "__main__"
        for code in exercise.cells[: exercise.region]:
            exec(compile(code, str(exercise.source), "exec"), _NAMESPACE)
        verdicts = "".join(
            "s" if _in_child(lambda cell=cell: 0 if _passes(exercise, cell) else 1, SECONDS) == 0
            else "c"
            for cell in cells
        )  # fmt: skip
        os.write(writing, verdicts.encode())
        return 0

    _in_child(serve)
    os.close(writing)
    with os.fdopen(reading) as pipe:
        answer = pipe.read()
    return ["survived" if v == "s" else "caught" for v in answer.ljust(len(cells), "c")]


def run_notebooks(ids: list[str] | None = None, show=print) -> dict[str, dict]:
    """The notebook exercises' table (see `run`); an exercise whose answer fails its own check
    gets 'error' in its row."""
    skipped: dict[str, str] = {}
    exercises = notebook_exercises(ids, skipped)
    table = {}
    show(f"{'exer.':<6} {'mutants':>7} {'caught':>6} {'equiv.':>6} {'survive':>7} {'caught %':>8}")
    totals = {"caught": 0, "equivalent": [], "survived": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        for exercise in exercises:
            cell = exercise.cells[exercise.region]
            changed = list(mutants(cell, exercise.id))
            answer, *verdicts = _verdicts(exercise, [cell] + [m for _, m in changed])
            row = _tally(exercise.id, zip([d for d, _ in changed], verdicts))
            if answer != "survived":
                row["error"] = "the answer itself does not pass its check"
            table[exercise.id] = row
            show(_row(exercise.id, row) + (f"  ({row['error']})" if "error" in row else ""))
            for key in totals:
                totals[key] += row[key]
    show(_row("all", totals) + "  (caught % counts the non-equivalent mutants)")
    for exercise, why in skipped.items():
        show(f"skipped {exercise}: {why}")
    return table


def main(argv: list[str] | None = None) -> int:
    """`python -m course.mutants [--notebooks] [--list] [id ...]`; exit status 1 when a mutant
    survives."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pieces", nargs="*", help="exercise ids such as 2.7 (default: all)")
    parser.add_argument("--list", action="store_true", help="print each survivor")
    parser.add_argument(
        "--notebooks", action="store_true", help="the notebook exercises, not the build track"
    )
    args = parser.parse_args(argv)
    table = (run_notebooks if args.notebooks else run)(args.pieces)
    if args.list:
        for piece, row in table.items():
            for description in row["survived"]:
                print(f"{piece}: {description}")
    return 1 if any(row["survived"] or "error" in row for row in table.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
