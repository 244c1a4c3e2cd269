"""Run by Pyodide (in Node, ``pyodide_assets.mjs``) just before its memory snapshot is taken.

Whatever this leaves in memory, every page restored from the snapshot starts with, for free:
the page's modules imported, markdown-it's and pygments' regexes compiled. Whatever it
leaves out costs the page at first use (an import from the zips, compiled regexes), and
whatever it adds costs bytes on the wire (the heap is snapshotted whole).

The module list is derived, not kept by hand: every module of the packages the page's zip
holds (``pysse`` without its CLI, markdown-it, mdurl), pygments' core and HTML formatter,
and the lexers of the boot languages (``assets.BOOT_LANGUAGES``; any other language's
lexer arrives in a lazy bundle when an answer needs it). ``boot()`` is also what
``trace_imports.py`` calls: the boot set the zips are cut to is what the snapshot holds.

Modules in memory need no file: the page gets "lazy" zips, each zip without them (written
here, next to the snapshot), and zipimport's cached directories are dropped so that the page's
first import from a zip reads the lazy one's. A page booting without the snapshot gets the
full zips.

Rules the loader enforces (``loadPyodide({_makeSnapshot})``): no ``loadPackage``, and no JS
object held by Python unless it is reached as a ``js.`` path.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import pkgutil
import sys
import zipfile
import zipimport

STDLIB_ZIP = f"/lib/python{sys.version_info[0]}{sys.version_info[1]}.zip"  # the loader's path

PACKAGES = ("pysse", "markdown_it", "mdurl")
# command lines, and deprecated paths kept for embedders (they warn when imported): never
# run or imported by the page
SKIP = ("pysse.__main__", "pysse.page", "markdown_it.cli")

SAMPLE = (
    "# Title\n\n*a* **b** ~~c~~ `d` [e](https://example.com)\n\n"
    "| a | b |\n|---|:-:|\n| 1 | 2 |\n\n- x\n- y\n\n1. z\n\n> q\n\n---\n\n"
)


def import_everything() -> list[str]:
    names: list[str] = []
    for pkg in PACKAGES:
        mod = importlib.import_module(pkg)
        names.append(pkg)
        for info in pkgutil.walk_packages(mod.__path__, pkg + "."):
            if info.name.startswith(SKIP):
                continue
            importlib.import_module(info.name)
            names.append(info.name)
    return names


def sample(languages: list[str]) -> str:
    """Markdown that takes every renderer path the page has at boot: headings, emphasis,
    code, tables, lists, quotes, links, and one highlighted fence per boot language."""
    return SAMPLE + "".join(f"```{lang}\nx = 1\n```\n\n" for lang in languages)


def warm_up(languages: list[str]) -> None:
    from pysse.render.highlight import HighlightJob
    from pysse.render.markdown import MarkdownPolicy, make_markdown
    from pysse.render.streaming import StreamingMarkdown

    for lang in languages:  # the lexer imported, its regexes compiled
        assert HighlightJob("x = 1\n", lang).run(), lang
    md = StreamingMarkdown(md=make_markdown(MarkdownPolicy()))
    md.feed(sample(languages))
    md.finish()
    html = md.html
    assert "<table" in html and html.count('class="codeblock"') == len(languages), html[:400]


def boot(languages: list[str]) -> list[str]:
    """What the page's boot imports, and the renderer warmed up for ``languages``: the
    modules the snapshot holds (``trace_imports.py`` calls this too: its boot set is the
    snapshot's)."""
    names = import_everything()
    warm_up(languages)
    return names


def write_lazy_zips(zips: list[str], lazy_dir: str) -> dict[str, int]:
    """Each zip without the modules now in memory: all a restored page can still import from
    it. Written to ``lazy_dir`` under the zip's base name; returns entries left out per zip."""
    used: dict[str, set[str]] = {z: set() for z in (STDLIB_ZIP, *zips)}
    for mod in list(sys.modules.values()):
        origin = getattr(getattr(mod, "__spec__", None), "origin", None) or ""
        for z, names in used.items():
            if origin.startswith(z + "/"):
                names.add(origin[len(z) + 1 :])
    for z, names in used.items():
        out_path = os.path.join(lazy_dir, os.path.basename(z))
        with zipfile.ZipFile(z) as src, zipfile.ZipFile(out_path, "w") as out:
            for info in src.infolist():
                if info.filename not in names:
                    out.writestr(info, src.read(info))
    return {os.path.basename(z): len(names) for z, names in used.items()}


def tidy(stamp: str) -> None:
    # loadPyodide puts "" on sys.path again after a restore
    while "" in sys.path:
        sys.path.remove("")
    sys._pysse_snapshot_stamp = stamp  # type: ignore[attr-defined]
    # The page writes the lazy zips where the full ones were: forget the full ones' directories
    # (zipimport re-reads a zip's directory at its next import from it).
    zipimport._zip_directory_cache.clear()  # type: ignore[attr-defined]
    sys.path_importer_cache.clear()
    gc.collect()


def prepare(zips: list[str], stamp: str, lazy_dir: str, languages: list[str]) -> str:
    """Everything above, in order; the facts as JSON (called by pyodide_assets.mjs)."""
    sys.path[0:0] = zips
    modules = boot(languages)
    left_out = write_lazy_zips(zips, lazy_dir)
    tidy(stamp)
    return json.dumps({"modules": len(modules), "left_out": left_out, "stdlib_fs_path": STDLIB_ZIP})
