"""The README's table of what mini_autograd has ("Your PyTorch code on mini_autograd") is true:
every name it lists exists in mini_autograd and in torch, under the same path."""

import functools
import re
from pathlib import Path

import pytest
import torch

import mini_autograd as ma

README = Path(__file__).resolve().parents[1] / "README.md"


def _table_rows():
    text = README.read_text()
    section = text.split("## Your PyTorch code on mini_autograd", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "`" in line]
    return {row.split("|")[1].strip(): re.findall(r"`([^`]+)`", row.split("|")[2]) for row in rows}


ROWS = _table_rows()


def test_the_table_is_there():
    assert len(ROWS) >= 8 and sum(len(names) for names in ROWS.values()) > 250


@pytest.mark.parametrize("area", list(ROWS))
def test_every_listed_name_exists_in_both_libraries(area):
    missing = []
    for name in ROWS[area]:
        for lib in (ma, torch):
            owner = lib.Tensor if area == "tensor methods" else lib
            try:
                functools.reduce(getattr, name.split("."), owner)
            except AttributeError:
                missing.append(f"{lib.__name__}: {name}")
    assert not missing, f"the README lists names that do not exist: {missing}"
