"""Chat text -> HTML -> frames: streaming markdown (settled content rendered once at any
depth, hold-back of incomplete syntax, safe by default), the update contract and a DOM writer
for it, and the frame/scroll logic that paces it onto a page.

Pure Python (markdown-it-py, optionally pygments); no ``js``. The browser package binds it to
the DOM. Names are imported lazily: the page needs ``frames`` at once but markdown-it only
after it is ready (its import costs ~150 ms in Pyodide).

Block structure is settled incrementally (``blocks/``); why that is exact, and linear:

* **The rule.** CommonMark decides block structure line by line, and reference definitions
  (the one construct that reaches backwards) are disabled. So a block that is followed by
  another block starting on a complete line can no longer change: it is *settled*, rendered
  once, and appended. That holds at every depth: a list item followed by the next item, a
  table row, a quote's paragraph followed by its next block, a code line (final as soon as
  it is complete). Table rows and code lines are settled as soon as they are complete.
* **Containers stay open.** The last block at each depth may still grow; if it is a container
  (list, list item, quote, table body, code fence, and a long paragraph - ``paragraph.py``)
  it is *opened*: its empty element goes into the DOM once and its children are appended
  into it as they settle. The open containers form a stack of boxes (``blocks/boxes.py``).
* **Re-parse only the open end.** Each update parses only from the start of the innermost
  open child, with markdown-it's own block parser. The containers around it are recreated by
  *opener lines*: the real first line of each open list item truncated after its marker
  with a stand-in ``#`` (an empty heading: a closed block that keeps the item's content
  column, tabs included), a table's header and delimiter rows, a fence's opening line.
  Quote markers and indentation are on the real lines themselves. The parse therefore sees
  exactly the container context markdown-it would have seen, and costs O(open child), not
  O(answer).
* **What a fresh parse cannot see** is kept by the settler: a list's tightness (a blank line
  between two long-settled items makes the whole list loose), read from markdown-it's own
  decision per item (``observe.py``); whether the previous sibling ended in a hidden (tight)
  paragraph, which changes the line feeds of the next block.
* **Replaced once, never again**: a list that turns loose after some of its items were
  settled tight is replaced once (re-rendered loose, ``blocks/lists.py``); a code fence is
  replaced once by its highlighted form when it closes (it streams unhighlighted, line by
  line, until then: ``blocks/fences.py``).
* **A safety net**: if a partial parse ever disagrees with the open containers (a case this
  package did not foresee), the top-level block is replaced and re-rendered whole from then
  on, as a plain tail: slower for that block, never wrong.
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
