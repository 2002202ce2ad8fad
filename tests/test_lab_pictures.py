"""A learner's first look: chapter 04 in JupyterLab, as a fresh clone opens it, shows pictures.

A cloned notebook is untrusted, and JupyterLab does not render the SVG outputs of an untrusted
notebook; the graph pictures must still show, from the PNG stored beside each SVG, and never
as DOT text. The server runs with an empty Jupyter data folder, so no notebook is trusted (as
on a new machine, Binder or Colab), and with the course's JupyterLab settings (as `make lab`),
which turn off the question about Jupyter news. A screenshot is saved as
build/test-artifacts/lab-04.png.
"""

import os
import shutil
import time
from pathlib import Path

import nbformat
import pytest
from headless_chromium import Chromium
from lab_server import TOKEN, lab_server

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = ROOT / "notebooks" / "04_freeing_and_retain_graph.ipynb"
ARTIFACTS = ROOT / "build" / "test-artifacts"
CHROMIUM = shutil.which("chromium")
LAB_SETTINGS = ROOT / "course" / "lab_settings"
START_TIMEOUT_S = 60

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed (apt-get install chromium; .ci/run installs it)",
)

OUTPUTS = """(() => {
    const texts = [...document.querySelectorAll('.jp-OutputArea-output.jp-RenderedText')];
    return {
        cells: document.querySelectorAll('.jp-Notebook .jp-Cell').length,
        png: [...document.querySelectorAll('.jp-RenderedImage img')]
            .filter(img => img.src.startsWith('data:image/png') && img.naturalWidth > 0).length,
        svg: document.querySelectorAll('.jp-RenderedSVG').length,
        dot_as_text: texts.filter(t => t.innerText.includes('digraph autograd {')).length,
        news_question: document.body.innerText.includes('Jupyter news'),
    };
})()"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab serving a copy of chapter 04 with no trusted notebooks: its base address."""
    root, data = tmp_path_factory.mktemp("clone"), tmp_path_factory.mktemp("jupyter-data")
    shutil.copy(CHAPTER, root / CHAPTER.name)
    options = [f"--ServerApp.root_dir={root}", f"--LabApp.app_settings_dir={LAB_SETTINGS}"]
    with lab_server(options, {**os.environ, "JUPYTER_DATA_DIR": str(data)}) as base:
        yield base


def stored_images() -> tuple[int, int]:
    """How many outputs of the chapter hold a PNG image, and how many of them are graph pictures."""
    cells = nbformat.read(CHAPTER, as_version=4).cells
    outputs = [o.get("data", {}) for c in cells if c.cell_type == "code" for o in c.outputs]
    images = [data for data in outputs if "image/png" in data]
    return len(images), sum("digraph autograd {" in data.get("text/plain", "") for data in images)


def test_chapter_04_shows_its_graphs_as_pictures_in_an_untrusted_notebook(lab, tmp_path):
    expected, graphs = stored_images()  # the graph pictures and the chapter's plots
    assert graphs >= 5, "chapter 04 draws its graphs"
    with Chromium(CHROMIUM, tmp_path / "profile") as browser:
        browser.open(f"{lab}/lab/tree/{CHAPTER.name}?token={TOKEN}")
        deadline, seen = time.monotonic() + START_TIMEOUT_S, {}
        while time.monotonic() < deadline:
            seen = browser.evaluate(OUTPUTS)
            if seen["cells"] and seen["png"] + seen["dot_as_text"] >= expected:
                break
            browser.evaluate("document.querySelector('.jp-WindowedPanel-outer')?.scrollBy(0, 800)")
            time.sleep(0.5)
        browser.evaluate("document.querySelector('.jp-RenderedImage')?.scrollIntoView()")
        browser.screenshot(ARTIFACTS / "lab-04.png")
    assert seen["svg"] == 0, "JupyterLab renders no SVG in an untrusted notebook"
    assert seen["dot_as_text"] == 0, "no picture shows as DOT text"
    assert seen["png"] == expected, "every stored image (the graph pictures and the plots) shows"
    assert not seen["news_question"], "course/lab_settings turns JupyterLab's news question off"
