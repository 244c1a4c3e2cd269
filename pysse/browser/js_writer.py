"""``dom_writer.js`` for an answer that ``stream_chat`` writes into an element on this thread.

The bundled page's writer: an open fence's lines in blocks (the browser lays out the new lines,
not the fence), tails patched in place (it styles and paints the characters that came, not a
new subtree), one JavaScript call per update instead of one Pyodide call per DOM operation. So
an embedder's main thread pays for what changed, as the page's does.

Loaded as the bridge is (``bridge.module_as_function``): the page's own import, if it made one
(``globalThis.pysseDomWriter = (await import("./pysse/dom_writer.js")).DomWriter``), else
pysse's copy evaluated once. Where the page's policy forbids evaluating it, the Python
``DomWriter`` (``pysse.render.dom``) writes the same HTML, without those two savings.
"""

from __future__ import annotations

from typing import Any

import js

from ..render.dom import DomWriter
from ..render.update import Update
from .bridge import module_as_function
from .remote import update_to_js

__all__ = ["JsDomWriter", "dom_writer_class", "writer_for_element"]

_CLASS: list[Any] = []  # dom_writer.js's DomWriter once looked for (None: not loadable here)


def dom_writer_class() -> Any | None:
    """dom_writer.js's ``DomWriter`` class, or None where this page cannot load it."""
    if not _CLASS:
        _CLASS.append(_load())
    return _CLASS[0]


def _load() -> Any | None:
    found = getattr(js, "pysseDomWriter", None)
    if found is not None:
        return found
    from importlib import resources  # (not at import: the page's snapshot would carry it)

    from pyodide.code import run_js
    from pyodide.ffi import JsException

    source = resources.files(__package__).joinpath("dom_writer.js").read_text(encoding="utf-8")
    try:
        return run_js(module_as_function(source)).DomWriter
    except JsException:  # a policy without 'unsafe-eval': the Python writer does it
        return None


class JsDomWriter:
    """Updates applied by dom_writer.js to ``el``."""

    def __init__(self, cls: Any, el: Any) -> None:
        self.writer = cls.new(el)

    def apply(self, update: Update) -> None:
        self.writer.apply(update_to_js(update))


def writer_for_element(el: Any) -> JsDomWriter | DomWriter:
    """The writer for a real element: dom_writer.js's where it loads, else Python's."""
    cls = dom_writer_class()
    return DomWriter(el) if cls is None else JsDomWriter(cls, el)
