"""Apply ``StreamingMarkdown`` updates to a DOM element: settled HTML is appended and parsed
once; only the tails (the unsettled ends of the open containers) are replaced each frame.

Pure Python and duck-typed: ``root`` is anything with the DOM's ``insertAdjacentHTML``,
``childNodes.length``, ``lastChild``, ``lastElementChild`` and ``remove()``. In the page that
is a Pyodide proxy of a real element (``pysse/browser/turn.py``); in tests, a small
pure-Python DOM. Short enough for an embedder to port to JavaScript.
"""

from __future__ import annotations

from typing import Any

from .update import Update

__all__ = ["DomWriter"]


class DomWriter:
    """Per open container: its element, how many of its child nodes are settled (the nodes
    after those are its tail), and how many child nodes its parent had before the ``Op``
    that opened it (what ``replaces`` removes)."""

    def __init__(self, root: Any) -> None:
        self.boxes: list[Any] = [root]
        self.settled: list[int] = [0]
        self.marks: list[int] = [0]
        self.tails: list[str] = [""]

    def apply(self, update: Update) -> None:
        tails = update.tails
        # Tails that change, and those of containers the ops touch, come off first.
        touched = min([op.depth for op in update.ops] + [len(tails) - 1])
        for k in range(len(self.boxes) - 1, -1, -1):
            if k >= touched or k >= len(tails) or tails[k] != self.tails[k]:
                self._remove_after(k, self.settled[k])
                self.tails[k] = ""
        for op in update.ops:
            if op.replaces:
                self.replace(op.depth)
            self._close_below(op.depth)
            box = self.boxes[op.depth]
            mark = box.childNodes.length
            if op.html:
                box.insertAdjacentHTML("beforeend", op.html)
            self.settled[op.depth] = box.childNodes.length
            if op.opens:  # its deepest last element is where its children go
                el = box.lastElementChild
                while _is_element(el.lastElementChild):
                    el = el.lastElementChild
                self.boxes.append(el)
                self.settled.append(el.childNodes.length)
                self.marks.append(mark)
                self.tails.append("")
        self._close_below(len(tails) - 1)
        for k, html in enumerate(tails):
            if html != self.tails[k]:  # removed above, or unchanged and left in place
                self.boxes[k].insertAdjacentHTML("beforeend", html)
                self.tails[k] = html

    def replace(self, depth: int) -> None:
        """Remove what the ``Op`` that opened container ``depth + 1`` inserted (its tails were
        removed first, so nothing after it is settled)."""
        self._remove_after(depth, self.marks[depth + 1])

    def _close_below(self, depth: int) -> None:
        for stack in (self.boxes, self.settled, self.marks, self.tails):
            del stack[depth + 1 :]

    def _remove_after(self, k: int, n: int) -> None:
        box = self.boxes[k]
        while box.childNodes.length > n:
            box.lastChild.remove()


def _is_element(node: Any) -> bool:
    """Whether ``node`` is an element. Not ``is not None``: under Pyodide a JavaScript null
    arrives as ``pyodide.ffi.jsnull``, not as None (and importing pyodide here would tie this
    module to the browser)."""
    return getattr(node, "nodeType", None) == 1
