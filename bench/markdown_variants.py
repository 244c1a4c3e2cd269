"""The streaming renderer as it was before the frame budget, side by side with today's, in
one benchmark run (CPython, Pyodide in Node, the page's Pyodide in Chromium).

``before_files()`` reads ``pysse/render/`` at git revision ``BEFORE`` (all its imports are
relative, so it works as a package of its own, ``render_before``); ``LOAD_PY`` is the Python
that writes those files where the interpreter can import them and returns either variant's
``(StreamingMarkdown, render)``. A benchmark sends both as data, so the very same code runs
in every interpreter.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The render package before the frame budget (issue 28; flat: blocks.py was one file): the
# page's update() took all the text appended so far, and finish() did the finishing work
# and the highlighting in one go.
BEFORE = os.environ.get("PYSSE_BENCH_BEFORE", "deb3e59")

LOAD_PY = """
import importlib, os, sys, tempfile

def load_variant(name, files):
    '''(StreamingMarkdown, render) of ``name``: "pysse.render", or a package made of files.'''
    if files:
        root = os.path.join(tempfile.gettempdir(), "pysse-bench-variants")
        os.makedirs(os.path.join(root, name), exist_ok=True)
        for fname, src in files.items():
            with open(os.path.join(root, name, fname), "w") as f:
                f.write(src)
        if root not in sys.path:
            sys.path.insert(0, root)
        importlib.invalidate_caches()
    streaming = importlib.import_module(name + ".streaming")
    markdown = importlib.import_module(name + ".markdown")
    return streaming.StreamingMarkdown, markdown.render

def make_md(cls, budget):
    '''The variant's renderer, with ``budget`` if it has one ("before" has none).'''
    try:
        return cls(budget=budget)
    except TypeError:
        return cls()
"""


def before_files() -> dict[str, str] | None:
    """``pysse/render/*.py`` at ``BEFORE``, or None when git or the revision is missing."""
    try:
        names = subprocess.run(
            ["git", "-C", str(ROOT), "ls-tree", "--name-only", BEFORE, "pysse/render/"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        files = {}
        for name in names:
            if not name.endswith(".py"):
                continue
            files[Path(name).name] = subprocess.run(
                ["git", "-C", str(ROOT), "show", f"{BEFORE}:{name}"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
    except (OSError, subprocess.CalledProcessError):
        print(f"(the 'before' renderer at {BEFORE} is not available: no comparison)")
        return None
    return files or None


def variants() -> list[tuple[str, str, dict[str, str] | None]]:
    """(label, package, files) for each variant to run: before (when available), after."""
    files = before_files()
    out: list[tuple[str, str, dict[str, str] | None]] = []
    if files:
        out.append(("before", "render_before", files))
    out.append(("after", "pysse.render", None))
    return out
