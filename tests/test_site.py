"""The static site and the slide decks, opened in a real browser (Debian's headless Chromium).

Every page loads without console errors and without a request that leaves the disk; every graph
picture (an SVG from Graphviz) is there with a non-zero size; the navigation links the pages in
order; each deck starts reveal.js with the slide count that course.slides prints, keeps its
headings' case, and fits every slide, with all its fragments shown, in the 1280x720 frame (an
arrow key or a clicker cannot scroll). One chapter's screenshot is saved as
build/test-artifacts/chapter-NN.png.
"""

import os
import shutil
from pathlib import Path

import pytest
from headless_chromium import Chromium

from course import site, slides
from course.speaker_notes import SUMMARY, is_note, note_text
from course.vendor import VendorError

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "build" / "test-artifacts"
CHROMIUM = shutil.which("chromium")
PAGES = site.course_pages()
CHAPTERS = sorted((ROOT / "notebooks").glob("*.ipynb"))

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed (apt-get install chromium; .ci/run installs it)",
)

# For each SVG output on the page: [width, height, drawn by Graphviz?]
SVG_SIZES = """[...document.querySelectorAll('.jp-RenderedSVG')].map(output => {
    const svg = output.querySelector('svg');
    const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
    return [box.width, box.height, Boolean(svg && svg.querySelector('g.graph'))];
})"""
# How printed output wraps: [] on a page without any, else white-space and word-break.
OUTPUT_WRAPPING = """(() => {
    const pre = document.querySelector('.jp-OutputArea-output pre');
    if (!pre) return [];
    const style = getComputedStyle(pre);
    return [style.whiteSpace, style.wordBreak];
})()"""
NAV_LINKS = "[...document.querySelectorAll('nav.course-nav a')].map(a => a.getAttribute('href'))"
INDEX_LINKS = "[...document.querySelectorAll('main li a')].map(a => a.getAttribute('href'))"
SCROLL_TO_PICTURE = "document.querySelector('.jp-RenderedSVG')?.scrollIntoView({block: 'center'})"
REVEAL_READY = "new Promise(done => Reveal.isReady() ? done() : Reveal.on('ready', done))"
REVEAL_SLIDES = f"{REVEAL_READY}.then(() => Reveal.getTotalSlides())"
# Every slide with all its fragments shown (no transitions, so nothing moves while measured):
# where reveal.js numbers it (h.v, and the c of the counter c/t), its top and bottom in the
# frame's pixels, its content's height, the zoom the deck gave it, and whether it scrolls inside.
SLIDE_BOXES = f"""{REVEAL_READY}.then(() => {{
    Reveal.configure({{transition: 'none', backgroundTransition: 'none'}});
    const frame = Reveal.getSlidesElement().getBoundingClientRect(), scale = Reveal.getScale();
    return Reveal.getSlides().map(slide => {{
        const {{h, v}} = Reveal.getIndices(slide);
        Reveal.slide(h, v, slide.querySelectorAll('.fragment').length - 1);
        const box = slide.getBoundingClientRect(), zoom = parseFloat(slide.style.zoom || 1);
        return {{number: `${{h + 1}}.${{(v ?? 0) + 1}}`, counter: Reveal.getSlidePastCount(slide) + 1,
                 top: (box.top - frame.top) / scale, bottom: (box.bottom - frame.top) / scale,
                 height: slide.scrollHeight * zoom, zoom: zoom,
                 scrolls: slide.scrollHeight > slide.clientHeight + 1}};
    }});
}})"""
FRAME_HEIGHT, SMALLEST_ZOOM = 720, 0.6
# Every slide with all its fragments shown: its number and the last thing it shows, as the
# outermost visible block (a paragraph, a list item, code, an output, a picture...) and its text.
LAST_BLOCKS = f"""{REVEAL_READY}.then(() => {{
    Reveal.configure({{transition: 'none', backgroundTransition: 'none'}});
    const BLOCKS = 'p, li, pre, table, img, svg, h1, h2, h3, h4, h5, h6, ' +
        'mjx-container[display="true"], .jp-OutputArea-output';
    return Reveal.getSlides().map(slide => {{
        const {{h, v}} = Reveal.getIndices(slide);
        Reveal.slide(h, v, slide.querySelectorAll('.fragment').length - 1);
        const shown = [...slide.querySelectorAll(BLOCKS)].filter(block =>
            !block.closest('aside.notes') && block.getClientRects().length > 0 &&
            !block.parentElement.closest(BLOCKS));
        const last = shown.at(-1);
        return {{number: `${{h + 1}}.${{(v ?? 0) + 1}}`, counter: Reveal.getSlidePastCount(slide) + 1,
                 tag: last ? last.tagName.toLowerCase() : null,
                 text: last ? last.innerText.trim() : ''}};
    }});
}})"""
PRINT_VIEW = f"""{REVEAL_READY}.then(() => ({{
    print_view: Reveal.isPrintView(),
    sheets_without_href: document.querySelectorAll('link[rel="stylesheet"]:not([href])').length,
}}))"""
HEADING_CASE = "getComputedStyle(document.querySelector('.reveal .slides h2')).textTransform"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The site and the decks, built into a temporary folder: (site folder, {deck: SlideCount})."""
    out = tmp_path_factory.mktemp("web")
    try:
        site.build(out / "site")
        decks = slides.build(out / "slides")
    except VendorError as error:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"cannot fetch reveal.js and MathJax: {error}")
    return out / "site", {deck.name: (deck, count) for deck, count in decks.items()}


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """One headless Chromium with a fresh profile, shared by this module's tests."""
    with Chromium(CHROMIUM, tmp_path_factory.mktemp("chromium-profile")) as chromium:
        yield chromium


def svg_outputs(path: Path) -> list[str]:
    """The image/svg+xml outputs that the page at ``path`` stores, in order."""
    nb = site.read_page(path)
    cells = [cell for cell in nb.cells if cell.cell_type == "code"]
    outputs = [output for cell in cells for output in cell.outputs]
    return [o.data["image/svg+xml"] for o in outputs if "image/svg+xml" in o.get("data", {})]


@pytest.mark.parametrize("page", PAGES, ids=[page.href for page in PAGES])
def test_page_loads_cleanly_with_its_pictures(built, browser, page):
    assert browser.open((built[0] / page.href).as_uri()) == []
    sizes, svgs = browser.evaluate(SVG_SIZES), svg_outputs(page.source)
    shown, graphs = len(sizes), sum('class="graph"' in svg for svg in svgs)
    assert shown == len(svgs), "every SVG output is on the page"
    assert [size for size in sizes if not (size[0] > 0 and size[1] > 0)] == [], "zero size"
    assert sum(from_graphviz for *_, from_graphviz in sizes) >= graphs, "Graphviz drew them"
    assert browser.evaluate("window.MathJax.version").startswith("3.")
    assert browser.evaluate(OUTPUT_WRAPPING) in ([], ["pre", "normal"]), "lines keep their words"


@pytest.mark.parametrize("index", range(len(PAGES)), ids=[page.href for page in PAGES])
def test_navigation_links_previous_contents_next(built, browser, index):
    browser.open((built[0] / PAGES[index].href).as_uri())
    neighbours = [PAGES[i].href for i in (index - 1, index + 1) if 0 <= i < len(PAGES)]
    links = browser.evaluate(NAV_LINKS)
    assert links[: len(links) // 2] == links[len(links) // 2 :], "the same bar above and below"
    assert set(links) == {"index.html", *neighbours}


def notes_of(path: Path) -> list[str]:
    """The text of each instructor note in the page at ``path``."""
    return [note_text(c.source) for c in site.read_page(path).cells if is_note(c)]


@pytest.mark.parametrize("page", PAGES, ids=[page.href for page in PAGES])
def test_site_leaves_out_instructor_notes(built, browser, page):
    browser.open((built[0] / page.href).as_uri())
    text = browser.evaluate("document.body.innerText")
    first_lines = [note.splitlines()[0] for note in notes_of(page.source)]
    assert [line for line in first_lines if line[:40] in text] == []
    assert "Instructor note" not in text


def test_index_lists_every_page_with_its_title(built, browser):
    assert browser.open((built[0] / "index.html").as_uri()) == []
    assert browser.evaluate(INDEX_LINKS) == [page.href for page in PAGES]
    text = browser.evaluate("document.querySelector('main').innerText")
    assert all(page.title in text for page in PAGES)


def test_screenshot_of_a_chapter(built, browser):
    chapter = (CHAPTERS[1:] or CHAPTERS)[0]  # chapter 01 where it exists, else the welcome
    browser.open((built[0] / f"{chapter.stem}.html").as_uri())
    browser.evaluate(SCROLL_TO_PICTURE)
    shot = browser.screenshot(ARTIFACTS / f"chapter-{chapter.stem[:2]}.png")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[path.stem for path in CHAPTERS])
def test_deck_runs_offline_with_every_slide(built, browser, chapter):
    deck, count = built[1][f"{chapter.stem}.slides.html"]
    assert browser.open(deck.as_uri()) == []
    assert browser.evaluate(REVEAL_SLIDES) == count.views, (
        "reveal.js shows what course.slides counts"
    )
    asides = browser.evaluate("[...document.querySelectorAll('aside.notes')].map(a => a.innerText)")
    assert len(asides) == len(notes_of(chapter)), "every note goes to the speaker view"
    assert not any(SUMMARY in aside or "Instructor note" in aside for aside in asides), "unfolded"
    assert browser.evaluate(HEADING_CASE) == "none", "headings keep their case (not the theme's)"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[path.stem for path in CHAPTERS])
def test_deck_fits_every_slide_in_its_frame(built, browser, chapter):
    deck, _ = built[1][f"{chapter.stem}.slides.html"]
    browser.open(deck.as_uri())
    boxes = browser.evaluate(SLIDE_BOXES)
    too_tall = [
        f"slide {box['number']} ({box['counter']}/{len(boxes)}): "
        f"{box['height']:.0f} px{', scrolls inside' if box['scrolls'] else ''}"
        for box in boxes
        if box["top"] < -1 or box["bottom"] > FRAME_HEIGHT + 1 or box["scrolls"]
    ]
    assert not too_tall, (
        f"{len(too_tall)} of {len(boxes)} slides pass 1280x720: {'; '.join(too_tall)}"
    )
    zoomed = [f"slide {box['number']}: {box['zoom']:.2f}" for box in boxes if box["zoom"] < 1]
    assert min(box["zoom"] for box in boxes) >= SMALLEST_ZOOM, f"zoomed out too far: {zoomed}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[path.stem for path in CHAPTERS])
def test_no_slide_ends_with_a_line_that_introduces_the_next(built, browser, chapter):
    """A paragraph ending with ":" introduces what follows; it must not be left at a slide's end
    (or be all it shows) while what it introduces is on the next slide or not shown at all."""
    deck, _ = built[1][f"{chapter.stem}.slides.html"]
    browser.open(deck.as_uri())
    slides = browser.evaluate(LAST_BLOCKS)
    stranded = [
        f'slide {s["number"]} ({s["counter"]}/{len(slides)}) ends with "...{s["text"][-70:]}"'
        for s in slides
        if s["tag"] == "p" and s["text"].endswith(":")
    ]
    assert not stranded, (
        f"{len(stranded)} slide(s) end with a lead-in whose subject is not on them: "
        + "; ".join(stranded)
        + " (give the lead-in the slide type of what it introduces, e.g. skip, or keep them together)"
    )


def test_print_pdf_view_loads_without_an_empty_stylesheet_link(built, browser):
    deck, _ = built[1][f"{CHAPTERS[0].stem}.slides.html"]
    assert browser.open(deck.as_uri() + "?print-pdf") == []
    assert browser.evaluate(PRINT_VIEW) == {"print_view": True, "sheets_without_href": 0}
