"""The browser libraries that the slides and the site load, fetched once from the npm registry.

``npm pack`` downloads a package's tarball; it is unpacked into ``build/vendor/`` and reused on
every later build, so only the first build needs the registry. The decks and pages load their
own copy, so they work offline. Two packages, pinned:

* reveal.js, the slide show (``dist/`` and the speaker-notes plugin);
* MathJax 3, for the ``$...$`` math in markdown cells (one file, TeX to SVG, no fonts to load).
"""

from __future__ import annotations

import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "build" / "vendor"
REVEAL = ("reveal.js", "5.2.1")
MATHJAX = ("mathjax", "3.2.2")
MATHJAX_FILE = "es5/tex-svg-full.js"
# tarfile's "data" filter (no absolute paths, no links out of the folder) where Python has it.
SAFE_EXTRACT = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}


class VendorError(RuntimeError):
    """A browser library could not be fetched (no npm, or the registry is unreachable)."""


def npm_package(name: str, version: str, cache: Path = CACHE) -> Path:
    """Return the unpacked npm package ``name@version``, fetching it into ``cache`` first if needed."""
    folder = cache / f"{name}-{version}"
    if (folder / "package.json").exists():
        return folder
    npm = shutil.which("npm")
    if npm is None:
        raise VendorError(
            f"npm is needed once to fetch {name}@{version} into {cache}: "
            "install Node.js and npm (Debian/Ubuntu: apt install npm; macOS: brew install node)"
        )
    with tempfile.TemporaryDirectory() as tmp:
        command = [npm, "pack", f"{name}@{version}", "--pack-destination", tmp]
        result = subprocess.run(command, capture_output=True, text=True, cwd=tmp)
        if result.returncode != 0:
            raise VendorError(
                f"could not fetch {name}@{version} from the npm registry (offline?); "
                f"`npm pack {name}@{version}` said:\n" + "\n".join(result.stderr.splitlines()[:4])
            )
        with tarfile.open(next(Path(tmp).glob("*.tgz"))) as tar:
            tar.extractall(tmp, **SAFE_EXTRACT)
        folder.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(Path(tmp) / "package"), folder)
    return folder


def copy_reveal(dest: Path) -> Path:
    """Copy reveal.js's ``dist/`` and notes plugin into ``dest`` (the decks' url prefix); return it."""
    source = npm_package(*REVEAL)
    skip = shutil.ignore_patterns("*.map", "*.esm.js")
    shutil.copytree(source / "dist", dest / "dist", ignore=skip, dirs_exist_ok=True)
    shutil.copytree(source / "plugin/notes", dest / "plugin/notes", ignore=skip, dirs_exist_ok=True)
    return dest


def copy_mathjax(dest: Path) -> Path:
    """Copy MathJax's single-file TeX-to-SVG bundle into the folder ``dest``; return the file."""
    target = dest / Path(MATHJAX_FILE).name
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(npm_package(*MATHJAX) / MATHJAX_FILE, target)
    return target
