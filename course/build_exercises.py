"""Generate ``solutions/`` and ``exercises/`` notebooks from ``solutions/sources/*.py``.

Usage: ``python -m course.build_exercises`` regenerates every pair;
``python -m course.build_exercises --check`` only reports stale files (exit status 1).

A source is a jupytext percent-format script. In code cells, a solution region looks like::

    ### BEGIN SOLUTION 0.1: derivative of tanh
    return 1 - np.tanh(x) ** 2
    ### END SOLUTION

``solutions/NN_topic.ipynb`` keeps the region (markers removed) and is executed with its
outputs stored; ``exercises/NN_topic.ipynb`` replaces the region by
``raise NotImplementedError("Exercise 0.1: derivative of tanh")`` and has no outputs.
Both are normalised by :mod:`course.execute`, so regenerating changes no byte.

The build track's engine, ``solutions/sources/my_autograd.py``, is plain Python with the same
regions: it becomes ``solutions/my_autograd.py`` (complete) and ``exercises/my_autograd.py``
(the file the learner fills in), each with a first line saying it is generated.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import jupytext
import nbformat

from course.execute import ROOT, dumps, execute, normalise

BEGIN = re.compile(r"^(?P<indent>\s*)### BEGIN SOLUTION (?P<id>\d+\.\d+): (?P<title>\S.*?)\s*$")
END = re.compile(r"^\s*### END SOLUTION\s*$")


class SourceError(ValueError):
    """A source file whose solution markers are malformed."""


def transform(code: str, *, keep_solution: bool, where: str = "<source>") -> str:
    """Return ``code`` with each solution region kept (markers dropped) or replaced by a stub."""
    out: list[str] = []
    region = None  # the BEGIN match of the open region
    for lineno, line in enumerate(code.splitlines(), start=1):
        begin, end = BEGIN.match(line), END.match(line)
        if "### BEGIN SOLUTION" in line and not begin:
            raise SourceError(f"{where}: line {lineno}: write '### BEGIN SOLUTION N.k: title'")
        if begin:
            if region:
                raise SourceError(f"{where}: line {lineno}: BEGIN inside an open region")
            region = begin
            if not keep_solution:
                message = json.dumps(
                    f"Exercise {begin['id']}: {begin['title']}", ensure_ascii=False
                )
                out.append(f"{begin['indent']}raise NotImplementedError({message})")
        elif end:
            if not region:
                raise SourceError(f"{where}: line {lineno}: END without BEGIN")
            region = None
        elif keep_solution or not region:
            out.append(line)
    if region:
        raise SourceError(f"{where}: region {region['id']} is never closed")
    return "\n".join(out)


def build(source: Path) -> tuple[nbformat.NotebookNode, nbformat.NotebookNode]:
    """Return the (unexecuted) solution and exercise notebooks for one source file."""
    notebooks = []
    for keep_solution in (True, False):
        nb = jupytext.read(source, fmt="py:percent")
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.source = transform(cell.source, keep_solution=keep_solution, where=str(source))
                cell.outputs, cell.execution_count = [], None
        notebooks.append(normalise(nb))
    return notebooks[0], notebooks[1]


ENGINE = "my_autograd.py"
GENERATED = "# Generated from solutions/sources/my_autograd.py by `make exercises`: {what}.\n"


def engine_text(root: Path = ROOT, *, keep_solution: bool) -> str:
    """The learner's engine file: complete (solutions/) or with stubs (exercises/)."""
    source = root / "solutions" / "sources" / ENGINE
    what = (
        "the complete engine"
        if keep_solution
        else "fill in each `raise NotImplementedError(...)` with your code"
    )
    code = transform(source.read_text("utf-8"), keep_solution=keep_solution, where=str(source))
    return GENERATED.format(what=what) + code + "\n"


def engine_paths(root: Path = ROOT) -> dict[bool, Path]:
    """{keep_solution: path} of the two generated engine files."""
    return {True: root / "solutions" / ENGINE, False: root / "exercises" / ENGINE}


def sources(root: Path = ROOT) -> list[Path]:
    """The exercise sources, in chapter order."""
    return sorted((root / "solutions" / "sources").glob("[0-9]*.py"))


def _cell_sources(nb: nbformat.NotebookNode) -> list[tuple[str, str, list[str]]]:
    return [(c.cell_type, c.source, c.metadata.get("tags", [])) for c in nb.cells]


def stale_files(root: Path = ROOT) -> list[str]:
    """Generated files that differ from what their sources produce, or that have no source.

    Exercise notebooks are compared byte for byte; solution notebooks by cell type, source
    and tags (their outputs are checked by nbval).
    """
    stale = []
    names = set()
    for source in sources(root):
        names.add(source.stem)
        solution, exercise = build(source)
        exercise_path = root / "exercises" / f"{source.stem}.ipynb"
        solution_path = root / "solutions" / f"{source.stem}.ipynb"
        if not exercise_path.exists() or exercise_path.read_text("utf-8") != dumps(exercise):
            stale.append(str(exercise_path.relative_to(root)))
        if not solution_path.exists() or _cell_sources(
            nbformat.read(solution_path, as_version=4)
        ) != _cell_sources(solution):
            stale.append(str(solution_path.relative_to(root)))
    for keep_solution, path in engine_paths(root).items():
        if not path.exists() or path.read_text("utf-8") != engine_text(
            root, keep_solution=keep_solution
        ):
            stale.append(str(path.relative_to(root)))
    for folder in ("exercises", "solutions"):
        for path in sorted((root / folder).glob("*.ipynb")):
            if path.stem not in names:
                stale.append(f"{path.relative_to(root)} (no source)")
    return stale


def write(source: Path, root: Path = ROOT) -> None:
    """Generate, execute (solution only) and write the notebook pair for one source."""
    solution, exercise = build(source)
    solutions_dir = root / "solutions"
    (root / "exercises" / f"{source.stem}.ipynb").write_text(dumps(exercise), "utf-8")
    executed = execute(solution, solutions_dir)
    (solutions_dir / f"{source.stem}.ipynb").write_text(dumps(executed), "utf-8")


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report stale files, write nothing")
    parser.add_argument("sources", nargs="*", type=Path, help="only these sources (default: all)")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files()
        for name in stale:
            print(f"stale: {name}")
        if stale:
            print("run `make exercises` to regenerate")
        return 1 if stale else 0
    for keep_solution, path in engine_paths().items():
        path.write_text(engine_text(keep_solution=keep_solution), "utf-8")
    for source in [p.resolve() for p in args.sources] or sources():
        print(f"building {source.relative_to(ROOT)}", flush=True)
        write(source)
    return 0


if __name__ == "__main__":
    sys.exit(main())
