"""Opening a notebook in JupyterLab, as `make lab` runs it, and saving it changes no byte.

When JupyterLab connects a notebook to its kernel it copies the kernel's ``language_info``
(the Python version included) into the notebook and marks it changed, so autosave writes it.
The stored notebooks hold every field but the version, and `make lab`'s pre-save hook
(course/lab_settings/save_hook.py) keeps the version out. The test starts JupyterLab with the
options of the Makefile's ``lab`` recipe on a temporary copy of a chapter, an exercise notebook
and a solution notebook, opens each in headless Chromium, waits until the kernel's information
has reached the notebook (the tab is marked changed), saves it as autosave does, and compares
the file with the repository's, byte for byte. The checkout itself is never served.
"""

import difflib
import os
import re
import shlex
import shutil
import time
from pathlib import Path

import pytest
from headless_chromium import Chromium
from lab_server import TOKEN, lab_server

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium")
KERNEL_TIMEOUT_S = 90
SAVE_TIMEOUT_S = 30
NOTEBOOKS = [
    min((ROOT / folder).glob("01_*.ipynb")).relative_to(ROOT)
    for folder in ("notebooks", "exercises", "solutions")
]

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed (apt-get install chromium; .ci/run installs it)",
)

# The notebook's tab: is it there, and is it marked changed (unsaved)?
TAB = """(() => {
    const tab = [...document.querySelectorAll('#jp-main-dock-panel .lm-TabBar-tab')]
        .find(t => t.innerText.includes(%r));
    return tab ? {dirty: tab.classList.contains('jp-mod-dirty')} : null;
})()"""

FIRST_CELL = """(() => {
    const box = document.querySelector('.jp-Notebook .jp-Cell').getBoundingClientRect();
    return [box.x + 30, box.y + 10];
})()"""


def lab_options(root: Path) -> list[str]:
    """The options of the Makefile's `make lab` command, for a server that serves ``root``."""
    makefile = (ROOT / "Makefile").read_text("utf-8").replace("\\\n", " ")
    recipe = re.search(r"^lab:.*\n\t(.*)$", makefile, re.M)[1]
    options = []
    for word in shlex.split(recipe):
        if not word.startswith("--"):
            continue  # the program, $(ROOT_FLAG), $(LAB_ARGS)
        name, _, value = word.partition("=")
        if name == "--ServerApp.root_dir":
            value = str(root)
        elif value and (ROOT / value).exists():
            value = str(ROOT / value)  # course/lab_settings, read from the checkout
        options.append(f"{name}={value}" if value else name)
    return options


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab, started as `make lab` starts it, on a copy of the notebooks: (address, root)."""
    root = tmp_path_factory.mktemp("clone")
    for path in NOTEBOOKS:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / path, root / path)
    config, data = tmp_path_factory.mktemp("config"), tmp_path_factory.mktemp("data")
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(config), "JUPYTER_DATA_DIR": str(data)}
    with lab_server(lab_options(root), env) as base:
        yield base, root


def wait(condition, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout_s} s for {what}")
        time.sleep(0.25)
    return value


def save(browser: Chromium) -> None:
    """A click on the notebook's first cell, then Ctrl+S: JupyterLab's save (what autosave runs)."""
    x, y = browser.evaluate(FIRST_CELL)
    for kind in ("mousePressed", "mouseReleased"):
        browser.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)
    for kind in ("rawKeyDown", "keyUp"):
        browser.call(
            "Input.dispatchKeyEvent",
            type=kind,
            modifiers=2,  # Ctrl
            key="s",
            code="KeyS",
            windowsVirtualKeyCode=83,
        )


def saved(browser: Chromium, path: Path, mtime_ns: int) -> bool:
    """Save (again, if a first Ctrl+S came before JupyterLab took it); has the file been written?"""
    save(browser)
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        if path.stat().st_mtime_ns != mtime_ns:
            return True
        time.sleep(0.25)
    return False


def test_lab_options_come_from_the_makefile(tmp_path):
    options = lab_options(tmp_path)
    assert f"--ServerApp.root_dir={tmp_path}" in options
    assert any(o.startswith("--ContentsManager.pre_save_hook=") for o in options), options


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.parts[0] for p in NOTEBOOKS])
def test_opening_and_saving_a_notebook_changes_no_byte(lab, path, tmp_path):
    base, root = lab
    copy = root / path
    before = copy.stat().st_mtime_ns
    with Chromium(CHROMIUM, tmp_path / "profile") as browser:
        browser.open(f"{base}/lab/tree/{path.as_posix()}?reset&token={TOKEN}")
        tab = TAB % path.name
        wait(
            lambda: (browser.evaluate(tab) or {}).get("dirty"),
            KERNEL_TIMEOUT_S,
            "the kernel's language_info to reach the notebook (its tab marked changed)",
        )
        wait(lambda: saved(browser, copy, before), SAVE_TIMEOUT_S, f"{path} to be saved")
        wait(lambda: browser.evaluate(tab) == {"dirty": False}, SAVE_TIMEOUT_S, "a clean tab")
    assert copy.read_bytes() == (ROOT / path).read_bytes(), (
        f"JupyterLab rewrote {path} on open and save; what it changed: "
        + "\n".join(_changed_lines(ROOT / path, copy))
    )


def _changed_lines(stored: Path, saved: Path) -> list[str]:
    diff = difflib.unified_diff(
        stored.read_text("utf-8").splitlines(),
        saved.read_text("utf-8").splitlines(),
        n=1,
        lineterm="",
    )
    return list(diff)[:40]
