"""The README and the pages in docs/ say what is true.

The library page's table of what mini_autograd has ("Your PyTorch code on mini_autograd"): every
name it lists exists in mini_autograd and in torch, under the same path. Every Python example
runs, each in a fresh process as the file train.py; where a ```text block follows it (with at
most prose between), that is what it prints: each line of the block appears in the output, in
order, a line "..." stands for any lines, and a line ending in " ..." for the rest of its line.
"""

import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import mini_autograd as ma

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "docs" / "library.md"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
EXAMPLE_TIMEOUT_S = 120


def _table_rows():
    text = LIBRARY.read_text()
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
    assert not missing, f"docs/library.md lists names that do not exist: {missing}"


def examples() -> list[tuple[str, str, str | None]]:
    """(where, code, expected output or None) of every ```python block of the README and docs/."""
    found = []
    for page in PAGES:
        blocks = list(FENCE.finditer(page.read_text("utf-8")))
        for index, block in enumerate(blocks):
            if block[1] != "python":
                continue
            line = page.read_text("utf-8")[: block.start()].count("\n") + 1
            following = blocks[index + 1] if index + 1 < len(blocks) else None
            expected = following[2] if following and following[1] == "text" else None
            found.append((f"{page.relative_to(ROOT)}:{line}", block[2], expected))
    return found


EXAMPLES = examples()


def shown_in(expected: str, printed: str) -> list[str]:
    """The lines of ``expected`` that ``printed`` does not show, in order (see the docstring)."""
    lines, at, missing = printed.splitlines(), 0, []
    for want in expected.splitlines():
        if want.strip() == "...":
            continue
        prefix = want[:-4] if want.endswith(" ...") else None
        for offset, line in enumerate(lines[at:]):
            if line == want or (prefix is not None and line.startswith(prefix)):
                at += offset + 1
                break
        else:
            missing.append(want)
    return missing


def test_the_readme_and_docs_have_examples_with_outputs():
    assert sum(expected is not None for *_, expected in EXAMPLES) >= 3
    assert any("ma.doctor()" in code for where, code, _ in EXAMPLES if where.startswith("README"))


@pytest.mark.parametrize("where, code, expected", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_every_example_runs_and_prints_what_the_page_shows(tmp_path, where, code, expected):
    (tmp_path / "train.py").write_text(code, "utf-8")
    run = subprocess.run(
        [sys.executable, "train.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=EXAMPLE_TIMEOUT_S,
    )
    printed = run.stdout + run.stderr
    if expected is None:
        assert run.returncode == 0, f"{where}: the example fails:\n{printed[-2000:]}"
    else:
        missing = shown_in(expected, printed)
        assert not missing, f"{where}: not printed: {missing}\nprinted:\n{printed[-3000:]}"


def test_the_expected_output_rule_can_fail():
    assert shown_in("a\n...\nc ...", "a\nb\nc d") == []
    assert shown_in("c\na", "a\nc") == ["a"], "order counts"
    assert shown_in("<MulBackward0 object #3>", "<MulBackward0 object #2>") != []
