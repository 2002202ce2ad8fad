"""Stored notebooks are normalised, their outputs hold no memory addresses, and instructor notes
are folded away from readers."""

import re
from pathlib import Path

import nbformat
import pytest

from course.execute import dumps, normalise
from course.speaker_notes import SUMMARY, is_note, note_text

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(
    p for folder in ("notebooks", "solutions") for p in (ROOT / folder).glob("*.ipynb")
)
ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]+")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(ROOT)) for p in NOTEBOOKS])
def test_notebook_is_stored_normalised(path):
    text = path.read_text("utf-8")
    nb = nbformat.reads(text, as_version=4)
    normalised = dumps(normalise(nb))
    assert normalised == text, f"{path.relative_to(ROOT)} is not stored normalised: " + _fix(
        path, text, normalised
    )


def _fix(path: Path, text: str, normalised: str) -> str:
    """The fastest true fix for a notebook that is not stored normalised."""
    rel = path.relative_to(ROOT)
    if _without_metadata(text) == _without_metadata(normalised):
        return (
            "only its metadata differs (a front end added what the kernel reports, such as the "
            "Python version); `make lab` keeps it out. Undo it with `git restore "
            f"{rel}` if you changed nothing else, or keep your changes and run "
            f"`.venv/bin/python -m course.execute --normalise-only {rel}` (no execution)"
        )
    return (
        f"run `.venv/bin/python -m course.execute --normalise-only {rel}` (no execution: cell "
        "ids, execution counts, cell metadata), or re-execute it with `make notebooks` "
        "(or `make exercises` for solutions/) if its outputs should change too"
    )


def _without_metadata(text: str) -> nbformat.NotebookNode:
    nb = nbformat.reads(text, as_version=4)
    nb.metadata = {}
    return nb


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(ROOT)) for p in NOTEBOOKS])
def test_outputs_hold_no_memory_addresses(path):
    nb = nbformat.read(path, as_version=4)
    for index, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        for output in cell.get("outputs", []):
            text = output.get("text", "") + output.get("data", {}).get("text/plain", "")
            assert not ADDRESS.search(text), f"{path.name} code cell {index}: {text[:200]}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(ROOT)) for p in NOTEBOOKS])
def test_instructor_notes_are_folded_and_only_notes_are(path):
    for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
        if is_note(cell):
            assert cell.cell_type == "markdown", f"{path.name} cell {index}: a note is markdown"
            assert note_text(cell.source), f"{path.name} cell {index}: an empty note"
        else:
            assert SUMMARY not in cell.source, f"{path.name} cell {index}: slide type 'notes'"
