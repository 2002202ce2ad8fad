"""Stored notebooks are normalised and their outputs hold no memory addresses."""

import re
from pathlib import Path

import nbformat
import pytest

from course.execute import dumps, normalise

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
