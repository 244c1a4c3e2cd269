"""``build.py examples DIR``: the embedding examples (``examples/``) laid out to be served as
they are, every asset local (docs/embedding.md):

    DIR/index.html                 a list of the examples
    DIR/minimal/ pyscript/ worker/ the examples, copied from examples/ unchanged
    DIR/pyodide/VERSION/           Pyodide from npm, micropip beside it (build.vendor_pyodide)
    DIR/pysse/                     pysse's wheels, their simple index, install.js, bridge.js,
                                   dom_writer.js (build.write_wheels)
    DIR/pyscript-core/VERSION/     PyScript's browser build (the npm package's dist/, without
                                   source maps)

The examples refer to these with relative URLs, so DIR can be served from any path.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from .compress import link_or_copy

__all__ = ["EXAMPLES", "write_examples"]

EXAMPLES = ("minimal", "pyscript", "worker")


def write_examples(source: Path, out: Path, pyscript: Path, pyscript_dest: Path) -> None:
    """Copy the examples from ``source`` into ``out`` and PyScript's ``dist/`` (``pyscript``,
    unpacked from npm) into ``pyscript_dest``."""
    for name in EXAMPLES:
        shutil.copytree(source / name, out / name)
    shutil.copyfile(source / "index.html", out / "index.html")
    pyscript_dest.mkdir(parents=True)
    for item in sorted(pyscript.iterdir()):
        if item.is_file() and not item.name.endswith(".map"):
            link_or_copy(item, pyscript_dest / item.name)
