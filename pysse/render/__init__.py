"""Chat text -> HTML -> frames: streaming markdown (settled content rendered once at any
depth, hold-back of incomplete syntax, safe by default), the update contract and a DOM writer
for it, and the frame/scroll logic that paces it onto a page.

Pure Python (markdown-it-py, optionally pygments); no ``js``. The browser package binds it to
the DOM. Names are imported lazily: the page needs ``frames`` at once but markdown-it only
after it is ready (its import costs ~150 ms in Pyodide).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .dom import DomWriter
    from .frames import FrameScheduler, ScrollFollower
    from .holdback import hold_back
    from .markdown import MarkdownPolicy, make_markdown, render
    from .streaming import StreamingMarkdown
    from .update import Op, Update

__all__ = [
    "DomWriter",
    "FrameScheduler",
    "MarkdownPolicy",
    "Op",
    "ScrollFollower",
    "StreamingMarkdown",
    "Update",
    "hold_back",
    "make_markdown",
    "render",
]

_HOME = {
    "DomWriter": "dom",
    "FrameScheduler": "frames",
    "ScrollFollower": "frames",
    "hold_back": "holdback",
    "MarkdownPolicy": "markdown",
    "make_markdown": "markdown",
    "render": "markdown",
    "StreamingMarkdown": "streaming",
    "Op": "update",
    "Update": "update",
}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_HOME[name]}", __name__), name)
