"""Loading the learner's engine, `exercises/my_autograd.py`, for one check.

A function that still holds an exercise stub (`raise NotImplementedError("Exercise N.k: ...")`)
is replaced by the course's answer (`solutions/my_autograd.py`), except for the exercise being
checked: so each exercise can be checked on its own, in any order, and a later chapter's stubs
never break an earlier chapter's check. The learner's file is read fresh on every load.
"""

from __future__ import annotations

import ast
import functools
import re
import textwrap
import traceback
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LEARNER = ROOT / "exercises" / "my_autograd.py"
REFERENCE = ROOT / "solutions" / "my_autograd.py"
SOURCE = ROOT / "solutions" / "sources" / "my_autograd.py"


def default_path() -> Path:
    """The engine a notebook's check means: `my_autograd.py` beside it, else exercises/'s."""
    here = Path.cwd() / "my_autograd.py"
    if here.parent in (LEARNER.parent, REFERENCE.parent) and here.exists():
        return here
    return LEARNER


_STUB = re.compile(r"Exercise (\d+\.\d+)")


class EngineError(Exception):
    """The learner's file cannot be loaded; the message says where and why, in one line."""


def _stub_id(function: ast.AST) -> str | None:
    """The exercise id of the stub inside `function`, or None when it holds no stub."""
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Raise)
            and isinstance(node.exc, ast.Call)
            and getattr(node.exc.func, "id", None) == "NotImplementedError"
            and node.exc.args
            and isinstance(node.exc.args[0], ast.Constant)
        ):
            match = _STUB.match(str(node.exc.args[0].value))
            if match:
                return match[1]
    return None


def _functions(tree: ast.Module) -> dict[str, ast.AST]:
    """{qualified name: definition} for the module's functions and the methods of its classes."""
    found = {}

    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[prefix + node.name] = node
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    return found


def stubs(source: str) -> dict[str, str]:
    """{qualified function name: exercise id} for every function of `source` that is a stub."""
    found = {}
    for name, node in _functions(ast.parse(source)).items():
        exercise = _stub_id(node)
        if exercise:
            found[name] = exercise
    return found


@functools.cache
def exercise_functions() -> dict[str, str]:
    """{qualified function name: exercise id} of every function that holds an exercise region."""
    source = SOURCE.read_text("utf-8")
    lines = source.splitlines()
    found = {}
    for name, node in _functions(ast.parse(source)).items():
        body = "\n".join(lines[node.lineno - 1 : node.end_lineno])
        match = re.search(r"### BEGIN SOLUTION (\d+\.\d+)", body)
        if match:
            found[name] = match[1]
    return found


def _read(path: Path) -> tuple[str, ast.Module]:
    try:
        source = path.read_text("utf-8")
    except OSError as error:
        raise EngineError(f"cannot read {path.name}: {error.strerror}") from None
    try:
        return source, ast.parse(source, filename=str(path))
    except SyntaxError as error:
        raise EngineError(
            f"{path.name} line {error.lineno}: {error.msg} — fix it and run the check again"
        ) from None


@functools.cache
def _reference_code(name: str) -> types.CodeType:
    """The compiled definition of function `name` from the course's answer (line numbers kept)."""
    source, tree = _read(REFERENCE)
    node = _functions(tree)[name]
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    lines = source.splitlines()[start - 1 : node.end_lineno]
    code = ast.parse(textwrap.dedent("\n".join(lines)))
    ast.increment_lineno(code, start - 1)
    return compile(code, str(REFERENCE), "exec")


def _rebind(module: types.ModuleType, old, new) -> None:
    """Point every name bound to the function `old` (the operator table, `autograd`...) at `new`."""
    seen = set()

    def fix(owner):
        namespace = vars(owner)
        for key, value in list(namespace.items()):
            if value is old:
                setattr(owner, key, new)
            elif isinstance(value, staticmethod) and value.__func__ is old:
                setattr(owner, key, staticmethod(new))
            elif isinstance(value, types.SimpleNamespace) or (
                isinstance(value, type) and value.__module__ == module.__name__
            ):
                if id(value) not in seen:
                    seen.add(id(value))
                    fix(value)

    fix(module)


def load(path: Path = LEARNER, keep: str | None = None, answered=(), stand_in=False):
    """(module, exercise ids answered from the course, functions of `keep` still stubs).

    The engine at `path` is loaded with every stub except those of exercise `keep` replaced by
    the course's answer, and also the functions of the exercises in `answered`, even when
    filled in (`answered=ALL` for every exercise but `keep`). With `stand_in`, the course's
    answer stands in for `keep`'s stubs too (they are still listed), to check the rest of it.
    """
    source, tree = _read(path)
    module = types.ModuleType("my_autograd")
    module.__file__ = str(path)
    try:
        exec(compile(tree, str(path), "exec"), module.__dict__)
    except Exception as error:  # the learner's module-level code: one line, not a traceback
        raise EngineError(f"{path.name} does not import: {describe(error)}") from None
    owned = exercise_functions()
    _check_complete(module, owned, path)
    filled, pending = set(), []
    still_stubs = stubs(source)
    replaced = {**still_stubs}
    replaced.update({n: e for n, e in owned.items() if answered is ALL or e in answered})
    for name, exercise in replaced.items():
        if exercise == keep:
            if name in still_stubs:
                pending.append(name)
            if not (stand_in and name in still_stubs):
                continue
        owner_name, _, attribute = name.rpartition(".")
        owner = module
        for part in owner_name.split(".") if owner_name else ():
            owner = getattr(owner, part)
        namespace = {}
        exec(_reference_code(name), module.__dict__, namespace)
        old = vars(owner).get(attribute)
        setattr(owner, attribute, namespace[attribute])
        if owner is module:
            _rebind(module, old, namespace[attribute])
        filled.add(exercise)
    return module, sorted(filled, key=exercise_key), pending


ALL = object()  # `load(..., answered=ALL)`: the course's answer for every exercise but `keep`


def _check_complete(module: types.ModuleType, owned: dict[str, str], path: Path) -> None:
    """One line when a function of an exercise (or its class) was deleted or renamed."""
    for name, exercise in owned.items():
        owner = module
        for part in name.split("."):
            if part not in vars(owner):
                raise EngineError(
                    f"`{name}` (Exercise {exercise}) is missing from {path.name}: deleted or "
                    "renamed? Put it back as it was (the stub is in the course's exercises/"
                    "my_autograd.py)"
                )
            owner = vars(owner)[part]


def exercise_key(exercise: str) -> tuple[int, ...]:
    """'2.10' -> (2, 10), to sort exercise ids."""
    return tuple(int(n) for n in exercise.split("."))


def describe(error: BaseException) -> str:
    """'TypeError: ... (in _broadcast, my_autograd.py line 12, reached through your apply line
    30, then mul line 9)': an error in one line, where in the learner's file it happened, and
    through which of the learner's functions (the last three) it got there."""
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if Path(frame.filename).name == "my_autograd.py" and frame.filename != str(REFERENCE)
    ]
    where = ""
    if frames:
        where = f" (in {frames[-1].name}, my_autograd.py line {frames[-1].lineno}"
        yours = [f"{f.name} line {f.lineno}" for f in frames[:-1] if f.name in _exercise_names()]
        if yours:
            where += f", reached through your {', then '.join(yours[-3:])}"
        where += ")"
    return f"{type(error).__name__}: {error}{where}"


@functools.cache
def _exercise_names() -> frozenset[str]:
    """The bare names of the functions that hold the learner's pieces ('apply', '_record')."""
    return frozenset(name.rsplit(".", 1)[-1] for name in exercise_functions())
