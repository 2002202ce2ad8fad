"""nbval is configured to compare DOT text and stdout, but not SVG/PNG renderings or stderr.

Each case edits one stored output of tests/fixtures/nbval_outputs.ipynb, then a single
``pytest --nbval`` subprocess (with this repository's plugin and sanitize file) runs all
edited copies; a case passes or fails exactly as the table below says.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
FIXTURE = TESTS / "fixtures" / "nbval_outputs.ipynb"


def _picture(nb):
    return nb["cells"][1]["outputs"][0]["data"]


def _stream(nb, name):
    return next(o for o in nb["cells"][2]["outputs"] if o.get("name") == name)


EDITS = {  # case -> (edit of the stored notebook, should nbval still pass?)
    "unchanged": (lambda nb: None, True),
    "svg_differs": (lambda nb: _picture(nb).update({"image/svg+xml": ["<svg>v2</svg>"]}), True),
    "png_differs": (lambda nb: _picture(nb).update({"image/png": "iVBORw0KGgo="}), True),
    "stderr_differs": (lambda nb: _stream(nb, "stderr").update(text=["other warning\n"]), True),
    "dot_text_differs": (lambda nb: _picture(nb).update({"text/plain": ["digraph { y }"]}), False),
    "stdout_differs": (lambda nb: _stream(nb, "stdout").update(text=["edited by hand\n"]), False),
}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """Run nbval once over one edited copy of the fixture per case; map case -> passed."""
    folder = tmp_path_factory.mktemp("nbval")
    (folder / "pytest.ini").write_text("[pytest]\n")  # isolate from the repository's config
    for case, (edit, _) in EDITS.items():
        nb = json.loads(FIXTURE.read_text("utf-8"))
        edit(nb)
        (folder / f"{case}.ipynb").write_text(json.dumps(nb), "utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "course.nbval_plugin", "-p", "no:cacheprovider",
         "-p", "no:xdist", "--nbval", "--nbval-current-env",
         f"--nbval-sanitize-with={TESTS / 'nbval_sanitize.cfg'}", "-rA", str(folder)],
        cwd=folder, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    results = {}
    for status, case in re.findall(r"^(PASSED|FAILED|ERROR) (\w+)\.ipynb::", result.stdout, re.M):
        results[case] = results.get(case, True) and status == "PASSED"
    assert set(results) == set(EDITS), result.stdout + result.stderr
    return results


@pytest.mark.parametrize("case", EDITS)
def test_nbval_compares_only_stable_outputs(outcomes, case):
    assert outcomes[case] is EDITS[case][1]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<Node object at 0x7f3a2c1d9e50>", "<Node object at 0xADDRESS>"),
        ("backward took 1.23 ms, forward 12.7µs", "backward took TIME, forward TIME"),
        ("done in 0.5 s.", "done in TIME."),
        ("saved to /home/ada/course/out.svg", "saved to PATH"),
        ("saved to C:\\Users\\ada\\out.svg", "saved to PATH"),
        ("x / 2 and 3/4 stay", "x / 2 and 3/4 stay"),
    ],
)
def test_sanitize_file_replaces_what_varies(text, expected):
    from nbval.plugin import get_sanitize_patterns

    patterns = get_sanitize_patterns((TESTS / "nbval_sanitize.cfg").read_text("utf-8"))
    for regex, replacement in patterns:
        text = re.sub(regex, replacement, text)
    assert text == expected
