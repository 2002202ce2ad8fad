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
    assert dumps(normalise(nbformat.reads(text, as_version=4))) == text, (
        f"{path.name}: re-execute with `make notebooks` (or `make exercises`)"
    )


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
