"""The ops: what the page's Python asks its JavaScript view to do, as data.

The page's Python never touches the browser's DOM. It changes a model of it (``dom.py``), and
each change is recorded here as an op: a JSON array whose first item names it. Once per
animation frame (``pysse.browser.host``) the ops recorded since the last frame travel to the
view (``web/view.js``) as one JSON text, in a ``postMessage`` from a Web Worker or a direct
call on the main thread, and the view applies them in order. The same ops drive a model view
in CPython tests: the vocabulary below is the page's whole vocabulary.

Elements are named by *handles* (positive integers, see ``dom.py``). The ops:

====================================  ============================================================
``["new", h, tag]``                   create an element
``["clone", h, src, n]``              deep-clone element ``src``; its ``n`` elements get handles
                                      ``h`` … ``h + n - 1`` in document order
``["attr", h, name, value|null]``     set (null: remove) an attribute
``["prop", h, name, value]``          set a property (``value``, ``checked``)
``["style", h, prop, value]``         set an inline style property (camelCase)
``["text", h, text]``                 replace the children by one text
``["html", h, html, base, n]``        replace the children by parsed ``html``; its ``n``
                                      elements get handles ``base`` …; ``n == 0`` with
                                      ``base == 0``: opaque content, no handles
``["adj", h, html, base, n]``         the same, appended after the children
``["insert", parent, h, ref]``        move or insert ``h`` before child ``ref`` (null: at the end,
                                      0: first)
``["replace", old, h]``               put ``h`` where ``old`` is
``["remove", h]``                     take ``h`` out of the document (the view keeps it)
``["drop", [h, ...]]``                forget handles: Python holds those elements no more
``["listen", h, type, capture]``      forward ``type`` events at ``h`` as event records
``["update", h, ops, tails, final]``  apply a streaming-markdown ``Update`` to opaque ``h``
``["answer", h, text]``               more of the text of answer ``h`` (the view keeps it
                                      whole: Copy, and an answer a dead worker left)
``["focus", h, options]``             focus (options: ``{"ifShown": true}``, ``{"select": true}``)
``["scroll", what, h?]``              scroll following: ``follow``, ``reset``, ``release``,
                                      ``center`` (element ``h`` into the middle), ``hold``/
                                      ``unhold`` (keep the reader's place across a rebuild)
``["observe", h, on]``                report when ``h`` enters or leaves the log's view
``["call", id, name, args]``          a request with a reply event (``confirm``, ``texts``)
``["mark", h, [i, lo, j, hi]]``       mark a search term's range in ``h``'s text (CSS highlight)
``["cite", h, marks]``                 numbered source marks in answer ``h``'s text
                                      (``app/cite_marks.py``: needles and their sources)
``["runs", h, [[i, status, text]]]``  kept runs under answer ``h``'s Python blocks
                                      (``chats/runs.py``), as text
``["download", name, data, mime]``    offer a file (``data`` a text or ``{"$blob": i}``)
``["src", h, {"$blob": i}, mime]``    image ``h`` shows those bytes (a ``blob:`` URL; an
                                      attached image's thumbnail)
``["copy", text]``                    the text a table's Copy asked for (``null``: none)
``["store", key, value]``             ``localStorage`` (settings live on the main thread)
``["status", name, value]``           page-wide state the main thread keeps (``ready``, ...)
====================================  ============================================================

Bytes (a recording saved as ``.sse``, an attached image) travel beside the JSON, as
transferable buffers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["Ops"]

_OP_OVERHEAD = 12  # characters an op costs beyond its strings, roughly (for budgets only)


class Ops:
    """Ops recorded in order, taken a frame's worth at a time."""

    def __init__(self, on_first: Callable[[], object] | None = None) -> None:
        """``on_first`` is called when an op is recorded while none was waiting: whoever
        delivers ops learns there is something to deliver (outside a frame, too)."""
        self._items: list[list[Any]] = []
        self._sizes: list[int] = []
        self.taken = 0  # ops handed to the view so far (stats)
        self.on_first = on_first
        self.urgent = False  # an answer ended: the view applies it and asks for more at once

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def add(self, op: list[Any]) -> None:
        if not self._items and self.on_first is not None:
            self.on_first()
        self._items.append(op)
        self._sizes.append(_size(op))

    def drop(self, handle: int) -> None:
        """An element died in Python: its handle goes in the last ``drop`` op if that is the
        last op, else in a new one (after every op that names it)."""
        if self._items and self._items[-1][0] == "drop":
            self._items[-1][1].append(handle)
            self._sizes[-1] += 8
        else:
            self.add(["drop", [handle]])

    def take(self, budget: int | None = None) -> tuple[list[list[Any]], list[bytes]]:
        """The oldest ops within ``budget`` characters (at least one: an op is never split;
        None: all of them), and the bytes they carry, which ``encode`` numbers."""
        if budget is None:
            n = len(self._items)
        else:
            n, used = 0, 0
            while n < len(self._items) and (n == 0 or used + self._sizes[n] <= budget):
                used += self._sizes[n]
                n += 1
        items = self._items[:n]
        del self._items[:n]
        del self._sizes[:n]
        self.taken += n
        blobs: list[bytes] = []
        for op in items:
            for i, arg in enumerate(op):
                if isinstance(arg, bytes | bytearray | memoryview):
                    op[i] = {"$blob": len(blobs)}
                    blobs.append(bytes(arg))
        return items, blobs

    @staticmethod
    def encode(items: list[list[Any]]) -> str:
        """The JSON text the view parses (compact; non-ASCII kept as it is)."""
        return json.dumps(items, ensure_ascii=False, separators=(",", ":"))


def _size(value: Any) -> int:
    """Roughly how many characters ``value`` adds to the JSON (bytes travel beside it)."""
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, list | tuple):
        return _OP_OVERHEAD + sum(_size(v) for v in value)
    if isinstance(value, dict):
        return _OP_OVERHEAD + sum(len(k) + _size(v) for k, v in value.items())
    return 8  # a number, a bool, null, bytes (a reference to a buffer)
