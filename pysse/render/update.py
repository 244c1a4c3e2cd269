"""The contract between ``StreamingMarkdown`` and whatever shows its HTML (a DOM, a string).

An answer is a tree of *containers*: the answer's own element (depth 0), and inside it the
blocks that are still open, innermost last: a list, one of its items, a quote, a table's
body, a code fence's ``<code>``, a long paragraph. Settled HTML is only ever *appended* to
a container, so it is parsed into DOM nodes once and never touched again. Each frame brings
an :class:`Update`:

* ``ops``, in order. ``Op(depth, html)`` appends ``html`` at the end of open container
  ``depth``. First it closes every container deeper than ``depth`` (they are complete).
  With ``opens=True``, ``html`` is one element (an empty ``<ul>``, ``<li>``, ``<table>``
  with its header and an empty ``<tbody>``, a code block ...) that becomes container
  ``depth + 1``: the new children go into its innermost last element. With
  ``replaces=True``, the last element of container ``depth`` (the container ``depth + 1``
  that was open) is removed first: a code fence is replaced once by its highlighted form
  when it closes; a list that turns out to be loose, or a paragraph that turns out to be a
  heading, is replaced once (``html`` may then be empty).
* ``tails``: one HTML string per open container (``len(tails)`` = open containers, which
  also closes any beyond it): what is not settled yet, shown after that container's settled
  children. A tail is replaced on every update; it is small (the open list item, table row,
  code line, or the unsettled end of a paragraph), so work per frame stays flat.

``DomWriter`` (``dom.py``) applies updates to a DOM; :func:`serialize` applies them to a
string, which after ``finish()`` equals a one-shot ``render()`` of the whole text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Op", "Update"]


@dataclass(frozen=True)
class Op:
    """Append ``html`` into open container ``depth`` (see the module docstring)."""

    depth: int
    html: str
    opens: bool = False
    replaces: bool = False


@dataclass
class Update:
    """Settled ``ops`` to apply in order, then the new ``tails`` (one per open container).
    ``final`` after ``finish()``: every container is closed and ``tails == [""]``."""

    ops: list[Op] = field(default_factory=list)
    tails: list[str] = field(default_factory=lambda: [""])
    final: bool = False
