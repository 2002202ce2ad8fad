"""What Jupyter is given for a graph picture: the DOT text, an SVG, and a PNG beside it.

A notebook opened from a fresh clone is untrusted, and JupyterLab (like Binder, Colab and
every other host) then refuses to render SVG outputs, showing the DOT text instead. PNG is a
safe type, so the PNG copy shows there, while trusted notebooks and the course's web site use
the sharper SVG. `text/plain` is always the DOT text: it is what the notebook tests compare,
since SVG and PNG bytes differ between Graphviz versions. Without Graphviz (the `graphviz`
package or its `dot` program) a picture is its DOT text and one line on installing it.
"""

import base64
import html
import io
import re
import struct
import sys

DOT_MISSING_HINT = (
    "Graphviz `dot` not found: install it (apt install graphviz / brew install graphviz / "
    "conda install graphviz) to see the picture."
)

PNG_DPI = 144  # drawn at 1.5 times the size it is shown at, so it stays sharp on dense screens
SHOWN_DPI = 96  # Graphviz's own size for bitmaps, the size the SVG shows at
GAP_PT, TITLE_PT = 18.0, 16.0  # between pictures of a row, and the height of their titles


def render(source, fmt):
    """DOT `source` drawn by Graphviz: `fmt` "svg" gives text, "png" bytes; None without it."""
    try:
        import graphviz
    except ImportError:
        return None
    if fmt == "png":
        source = source.replace("{", f"{{\n\tdpi={PNG_DPI}", 1)
    try:
        drawn = graphviz.Source(source).pipe(format=fmt)
    except graphviz.ExecutableNotFound:
        return None
    if fmt == "svg":
        svg = drawn.decode("utf-8")
        return svg[svg.find("<svg") :]  # drop the XML prologue so it can sit inside HTML
    return drawn


def png_width(png):
    """The width in pixels of PNG bytes (read from the header)."""
    return struct.unpack(">I", png[16:20])[0]


def bundle(text, svg, png):
    """The (data, metadata) pair for IPython: DOT text, SVG, and the PNG shown at SVG's size."""
    if svg is None or png is None:
        return without_dot(text)
    data = {"text/plain": text, "image/svg+xml": svg}
    if not png:  # a row of pictures on a machine without Pillow: SVG only
        return data, {}
    data["image/png"] = base64.b64encode(png).decode("ascii")
    return data, {"image/png": {"width": round(png_width(png) * SHOWN_DPI / PNG_DPI)}}


def without_dot(text):
    """The text/plain-only output for a machine without Graphviz; the install hint goes to stderr."""
    print(DOT_MISSING_HINT.strip(), file=sys.stderr)
    return {"text/plain": text}, {}


def svg_row(items):
    """One SVG holding (title, svg) items side by side, as wide as the cell allows.

    It stays an image/svg+xml output, which the notebook tests leave out of the comparison
    (its bytes differ between Graphviz versions); HTML would be compared.
    """
    x, height, parts = 0.0, 0.0, []
    for title, svg in items:
        size = re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', svg)
        width, h = (float(size.group(1)), float(size.group(2))) if size else (200.0, 200.0)
        label = html.escape(title)
        parts.append(
            f'<text x="{x:.0f}" y="12" font-family="Helvetica" font-size="11" font-weight="bold">{label}</text>'
        )
        # Inside the outer picture, sizes are in its user units (1 unit = 1pt of the outer frame).
        inner = svg.replace(size.group(0), f'width="{width}" height="{h}"', 1) if size else svg
        parts.append(inner.replace("<svg ", f'<svg x="{x:.0f}" y="{TITLE_PT:.0f}" ', 1))
        x += width + GAP_PT
        height = max(height, h)
    total_width, total_height = max(x - GAP_PT, 1.0), height + TITLE_PT
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
        f'width="{total_width:.0f}pt" height="{total_height:.0f}pt" '
        f'viewBox="0 0 {total_width:.0f} {total_height:.0f}" '
        f'style="max-width: 100%; height: auto">' + "".join(parts) + "</svg>"
    )


def png_row(items):
    """One PNG holding (title, png) items side by side; b"" when Pillow is not installed."""
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:
        return b""
    scale = PNG_DPI / 72  # pixels per point
    gap, title = round(GAP_PT * scale), round(TITLE_PT * scale)
    pictures = [(t, Image.open(io.BytesIO(png))) for t, png in items]
    width = sum(p.width for _, p in pictures) + gap * (len(pictures) - 1)
    height = title + max(p.height for _, p in pictures)
    row = Image.new("RGB", (max(width, 1), height), "white")
    draw, font = ImageDraw.Draw(row), _title_font(ImageFont, round(11 * scale))
    x = 0
    for text, picture in pictures:
        draw.text((x, 0), text, fill="black", font=font)
        row.paste(picture, (x, title))
        x += picture.width + gap
    out = io.BytesIO()
    row.save(out, format="PNG", optimize=True)
    return out.getvalue()


def _title_font(image_font, size):
    """Pillow's own font at `size` pixels (older Pillow: its fixed bitmap font)."""
    try:
        return image_font.load_default(size=size)
    except TypeError:
        return image_font.load_default()
