"""pytest plugin: keep machine-dependent notebook outputs out of nbval's comparison.

nbval compares every key of a cell's outputs except those in ``IPyNbFile.skip_compare``;
for a stream output the key is the stream name. This plugin adds

* ``image/svg+xml`` — Graphviz renders different SVG bytes per version; graph pictures
  carry their stable DOT source as ``text/plain``, which is still compared;
* ``image/png`` and ``image/jpeg`` — plots differ per matplotlib/freetype version
  (nbval skips them only without ``--nbdime``; we skip them always);
* ``stderr`` — warnings that appear on some machines only.

Loaded by the root ``conftest.py``; ``pytest -p course.nbval_plugin`` loads it elsewhere.
"""

from __future__ import annotations

import pytest

NOT_COMPARED = ("image/svg+xml", "image/png", "image/jpeg", "stderr")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Extend ``skip_compare`` of every collected notebook by :data:`NOT_COMPARED`."""
    try:
        from nbval.plugin import IPyNbFile
    except ImportError:  # nbval not installed: no notebooks to adjust
        return
    for notebook in {item.parent for item in items if isinstance(item.parent, IPyNbFile)}:
        if not isinstance(getattr(notebook, "skip_compare", None), tuple):
            raise RuntimeError("nbval no longer has IPyNbFile.skip_compare; update this plugin")
        notebook.skip_compare = tuple(dict.fromkeys(notebook.skip_compare + NOT_COMPARED))
