"""Holding the reader's view still where the engine does not (issue #27). Pure: the browser
glue (``pysse.browser.scroll``) measures, this decides.

A reader who scrolled up to read an earlier part of a streaming answer must see it stay where
it is while the answer grows. Chromium and Firefox do that themselves (CSS scroll anchoring:
when content above the view changes height, they move ``scrollTop`` by as much). WebKit, so
Safari and every browser on an iPhone, has no ``overflow-anchor``: there an answer's table
re-flowing, an allowed image loading or a highlighted block above the view pushes the text
the reader is on down or up. So where the engine has no anchoring, the page keeps one anchor
of its own: the element at the middle of the view, with its distance from the log's top. After
each change of the content it measures the anchor again and scrolls by the difference.

Only while the reader is away from the bottom (following, the view goes to the bottom anyway)
and only for an anchor still in the document (a tail replaced by the next render is gone:
then the next anchor is taken and nothing moves this time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Anchor", "ViewHold"]


@dataclass(frozen=True)
class Anchor:
    """An element (opaque here) and its top, in px from the top of the scrolling log."""

    node: Any
    top: float


class ViewHold:
    """One log's anchor. ``native``: the engine anchors by itself (then this never acts)."""

    def __init__(self, native: bool, tolerance: float = 0.5) -> None:
        self.native = native
        self.tolerance = tolerance
        self.anchor: Anchor | None = None
        self.corrections = 0  # scrolls made to hold the view (for tests and the inspector)

    def active(self, following: bool) -> bool:
        """Whether the page must hold the view itself now."""
        return not self.native and not following

    def remember(self, node: Any, top: float) -> None:
        """The element now at the middle of the view, and where it is."""
        self.anchor = None if node is None else Anchor(node, top)

    def forget(self) -> None:
        self.anchor = None

    def correction(self, node_top_now: float | None) -> float:
        """How far to scroll (px, added to ``scrollTop``) so the anchor is back where the
        reader saw it; ``node_top_now`` is its top now (None: it left the document)."""
        if self.anchor is None or node_top_now is None:
            return 0.0
        shift = node_top_now - self.anchor.top
        if abs(shift) < self.tolerance:
            return 0.0
        self.corrections += 1
        return shift
