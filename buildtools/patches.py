"""Build-time patches to third-party wheels, for the page's boot assets only (the wheels a
page installs with micropip, ``build.py wheels``, are never changed).

Both to latex2mathml, both so that math's lazy bundle does not carry half the stdlib:

* **its version lookup**: its ``__init__`` is ``from importlib import metadata`` and
  ``__version__ = metadata.version("latex2mathml")``; ``importlib.metadata`` imports
  ``email``, ``csv``, ``zipfile`` and more (56 modules, ~0.84 MB of snapshot, 340-400 ms of
  import in Pyodide) to read a version string nothing in the page reads. The patched
  ``__init__`` sets ``__version__`` to the wheel's own version (from its file name).
* **``xml.sax.saxutils.unescape``**, imported by its converter for ``convert()`` (pysse
  calls ``convert_to_element``, which never uses it): ``xml.sax.saxutils`` imports
  ``urllib.request`` at module level, and with it ``http.client`` and ``email`` (~100 KB on
  the wire). The patched converter defines the same three-line function itself (a copy of
  the stdlib's, same behaviour for every input).

Each patch replaces an exact text; a later latex2mathml written otherwise is left as it is,
and its math bundle then carries those modules (bigger, still right).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

__all__ = ["patch_wheel"]

_L2M_INIT = "latex2mathml/__init__.py"
_L2M_LOOKUP = 'from importlib import metadata\n\n__version__ = metadata.version("latex2mathml")\n'
_L2M_CONVERTER = "latex2mathml/converter.py"
_SAX_IMPORT = "from xml.sax.saxutils import unescape\n"
# xml.sax.saxutils.unescape, as the stdlib writes it (without its module's imports)
_UNESCAPE = """

def unescape(data, entities={}):  # xml.sax.saxutils.unescape (buildtools/patches.py)
    data = data.replace("&lt;", "<")
    data = data.replace("&gt;", ">")
    for key, value in entities.items():
        data = data.replace(key, value)
    return data.replace("&amp;", "&")

"""


def _latex2mathml(name: str, data: bytes, version: str) -> bytes:
    text = data.decode("utf-8")
    if name == _L2M_INIT and text.strip() == _L2M_LOOKUP.strip():
        return f'__version__ = "{version}"  # buildtools/patches.py wrote it in\n'.encode()
    if name == _L2M_CONVERTER and text.count(_SAX_IMPORT) == 1:
        return text.replace(_SAX_IMPORT, _UNESCAPE).encode()
    return data


def patch_wheel(wheel: Path, out_dir: Path) -> tuple[Path, bool]:
    """``wheel``, patched into ``out_dir`` if a patch applies to it (else ``wheel`` itself);
    and whether one did."""
    dist, version = wheel.name.split("-")[:2]
    if dist != "latex2mathml":
        return wheel, False
    out = out_dir / wheel.name
    changed = False
    tmp = out.with_suffix(".tmp")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            patched = _latex2mathml(info.filename, data, version)
            changed |= patched != data
            dst.writestr(info, patched)
    if not changed:
        tmp.unlink()
        return wheel, False
    tmp.replace(out)
    return out, True
