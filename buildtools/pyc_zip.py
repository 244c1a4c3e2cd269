"""Run by Pyodide (in Node, ``pyodide_assets.mjs``) at build time, never by the page.

Compile Python sources to bytecode with the very interpreter the page runs (Pyodide's CPython,
so the ``.pyc`` magic and bytecode match) and write a ``.pyc``-only zip for ``zipimport``.

Why: Pyodide's ``python_stdlib.zip`` and the wheels hold ``.py`` sources only, so every boot
compiled ~150 modules from source in wasm: 85-90% of the old 2-3 s main-thread freeze.

The zip is ZIP_STORED (HTTP brotli/gzip then compresses across files, ~35% smaller on the
wire than deflate per entry, and zipimport skips zlib), with fixed timestamps and sorted
entries so the same inputs give the same bytes (content-addressed, cacheable). ``.pyc`` files
use ``UNCHECKED_HASH``: zipimport never compares them with a source mtime.
"""

from __future__ import annotations

import compileall
import os
import py_compile
import shutil
import zipfile

EPOCH = (2020, 1, 1, 0, 0, 0)


def extract(sources: list[str], tree: str) -> None:
    """Unpack zips/wheels into ``tree`` (later ones win on a clash)."""
    for src in sources:
        with zipfile.ZipFile(src) as z:
            z.extractall(tree)


def write_pyc_zip(tree: str, out: str, keep: tuple[str, ...] = ()) -> int:
    """Compile ``tree`` and write ``out``: bytecode where it compiled, other files as they are
    (data files, ``.dist-info``); a ``.py`` is kept only when it did not compile or matches
    ``keep`` (path prefixes). Returns the number of entries."""
    compileall.compile_dir(
        tree,
        quiet=2,
        legacy=True,  # foo.pyc beside foo.py: what zipimport looks for
        workers=1,
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    )
    n = 0
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for root, dirs, files in os.walk(tree):
            dirs.sort()
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in sorted(files):
                full = os.path.join(root, name)
                rel = os.path.relpath(full, tree)
                compiled = name.endswith(".py") and os.path.exists(full + "c")
                if compiled and not rel.startswith(keep):
                    continue
                info = zipfile.ZipInfo(rel, date_time=EPOCH)
                with open(full, "rb") as fh:
                    z.writestr(info, fh.read())
                n += 1
    shutil.rmtree(tree)
    return n
