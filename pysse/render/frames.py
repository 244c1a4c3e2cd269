"""Markdown blocks -> frames and scrolling: when to render, and where the reader's view goes.

Pure logic with the browser injected, so it runs and is tested in CPython:

* :class:`FrameScheduler` coalesces any number of deltas into at most one render per
  animation frame, renders synchronously when the answer ends (never waiting on a frame that a
  hidden tab will not deliver), and renders once on return to a visible tab.
* :class:`FrameLoop` is the one frame callback every streaming answer of a page (or worker)
  shares; whoever runs it supplies how to ask for a frame and whether the page is hidden.
* :class:`ScrollFollower` follows the bottom only while the reader is there: only the
  reader's scrolling up releases it (a gesture: a scroll event alone may be the browser's),
  scrolling back down re-arms it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from .. import faults

__all__ = ["MAX_SPAN", "FrameLoop", "FrameScheduler", "Scheduled", "ScrollFollower"]

# The most frames one render may catch up with (a 60 Hz frame's budget each): the page's
# slowest cadence (100 ms) is six. More would make one update a long task on a phone.
MAX_SPAN = 6.0


class FrameScheduler:
    """At most one ``render()`` per frame, however often ``request()`` is called.

    ``request_frame(cb)`` must arrange for ``cb`` to be called on the next animation frame
    (``requestAnimationFrame``); ``is_hidden()`` says whether the page is hidden, in which
    case no frame is requested at all (rAF does not run in hidden tabs) and the pending work
    is rendered by ``on_visible()`` or ``flush()``.
    """

    def __init__(
        self,
        render: Callable[[], object],
        request_frame: Callable[[], object],
        is_hidden: Callable[[], bool] = lambda: False,
    ) -> None:
        self._render = render
        self._request_frame = request_frame
        self._is_hidden = is_hidden
        self.frame_pending = False
        self.dirty = False
        self.renders = 0
        self.requests = 0
        self.closed = False

    def request(self) -> None:
        """New content arrived: render it on the next frame (once)."""
        if self.closed:
            return
        self.requests += 1
        self.dirty = True
        if self.frame_pending or self._is_hidden():
            return
        self.frame_pending = True
        self._request_frame()

    def on_frame(self) -> None:
        """The animation frame callback."""
        self.frame_pending = False
        if self.dirty and not self.closed:
            self._do_render()

    def on_visible(self) -> None:
        """The tab became visible again: show what arrived meanwhile, once."""
        if self.dirty and not self.closed:
            self._do_render()

    def flush(self) -> None:
        """End of stream (done, error, Stop): render the final state now, synchronously."""
        if not self.closed:
            self._do_render()
        self.closed = True

    def _do_render(self) -> None:
        self.dirty = False
        self.renders += 1
        self._render()


class Scheduled(Protocol):
    """What the frame loop tells a streaming answer."""

    def on_frame(self) -> None: ...

    def on_visible(self) -> None: ...

    def on_hidden(self) -> None: ...

    def on_page_return(self, persisted: bool) -> None: ...


class FrameLoop:
    """One frame callback for every answer streaming in a page or a worker.

    Each answer has a ``FrameScheduler`` that decides *whether* to render; this loop owns the
    one frame request they share, so ten answers streaming at once still cost one frame
    callback, and it tells them when a hidden page becomes visible again or comes back from
    the back-forward cache (its connections may be dead). ``request_frame()`` asks whoever
    drives the loop for one call of ``on_frame()`` (``requestAnimationFrame`` in a page; the
    main thread's frame message in a worker); ``hidden`` is kept by the driver
    (``set_hidden``).
    """

    def __init__(self, request_frame: Callable[[], object] = lambda: None) -> None:
        self.request_frame = request_frame
        self.frames = 0  # frame callbacks run (the page's stats)
        self.span = 1.0  # display frames this callback stands for (``on_frame``)
        self.hidden = False
        self._waiting: list[Scheduled] = []
        self._live: list[Scheduled] = []  # told when the page becomes visible again
        self.pending = False

    def add(self, who: Scheduled) -> None:
        """``who`` is streaming: tell it when the page becomes visible again."""
        if who not in self._live:
            self._live.append(who)

    def remove(self, who: Scheduled) -> None:
        if who in self._live:
            self._live.remove(who)
        if who in self._waiting:
            self._waiting.remove(who)

    def request(self, who: Scheduled) -> None:
        """Call ``who.on_frame()`` on the next frame (once, however often asked)."""
        if who not in self._waiting:
            self._waiting.append(who)
        if not self.pending:
            self.pending = True
            self.request_frame()

    def is_hidden(self) -> bool:
        return self.hidden

    def on_frame(self, span: float = 1.0) -> None:
        """A frame: each answer waiting renders. ``span`` is how many display frames it
        stands for (the page renders at a cadence of its own: ``web/view.js``'s
        ``RENDER_GAP_MS``, six frames of 60 Hz), so that an answer's update takes that many
        frames' budget of text and keeps up with the stream; at most ``MAX_SPAN``."""
        self.frames += 1
        self.span = min(MAX_SPAN, max(1.0, span))
        self.pending = False
        waiting, self._waiting = self._waiting, []
        for who in waiting:
            self._tell(who, "on_frame")

    def set_hidden(self, hidden: bool) -> None:
        """The page was hidden (no frames from now on) or shown again."""
        if hidden == self.hidden:
            return
        self.hidden = hidden
        for who in list(self._live):
            self._tell(who, "on_hidden" if hidden else "on_visible")

    def page_return(self) -> None:
        """Back from the back-forward cache: its connections were closed meanwhile."""
        for who in list(self._live):
            self._tell(who, "on_page_return", True)

    def _tell(self, who: Scheduled, name: str, *args: object) -> None:
        """One answer's frame work, isolated: an exception ends that answer's frames (it is
        reported, and the loop forgets it) while the others render on. Raised out of here it
        would reach the worker's message handler and read as the death of the page's
        Python, ending every answer (issue #40). A ``ChatCall`` catches its own render's
        faults first and ends itself as an error; this is the second line."""
        try:
            getattr(who, name)(*args)
        except Exception as exc:
            faults.report(f"an answer's {name}", exc)
            self.remove(who)


HEIGHTS_KEPT_MS = 1000.0  # how long ScrollFollower remembers the content's heights
GESTURE_SLACK_MS = 50.0  # about three frames: the scroll was clamped to a frame already drawn


class ScrollFollower:
    """Decides whether a render should keep the view pinned to the bottom.

    Feed it every scroll event (``on_scroll``) and the reader's gestures, and ask
    ``target_after_render`` after each render. Only the reader releases it: a gesture upwards
    (``on_user_intent_up``: a wheel, a key) or a scroll event away from the bottom while the
    reader's hand is on the view (``hold(True)``: a finger dragging, the scrollbar pressed). A
    scroll event alone never does: the browser moves the view too (content grown while the
    view was pinned, a clamp, scroll anchoring), and that event can come before the render's
    re-pin (issue #41). Reaching the bottom, by any means, or ``jump`` re-arms it. The same
    rules as the page's ``Follower`` (web/view.js).
    """

    def __init__(self, threshold: float = 8.0) -> None:
        self.threshold = threshold
        self.following = True
        self.show_jump = False
        self.held = False
        self._height_at_down: float | None = None
        self._heights: list[tuple[float, float]] = []  # (when, height), the last second's

    def at_bottom(self, top: float, height: float, client: float) -> bool:
        return height - top - client <= self.threshold

    def on_scroll(self, top: float, height: float, client: float) -> None:
        gap = height - top - client
        # A downward gesture that reached where the bottom was when it started counts as
        # reaching the bottom: the text kept growing while the scroll animated.
        grown = height - self._height_at_down if self._height_at_down is not None else 0.0
        if gap <= self.threshold or (
            self._height_at_down is not None and gap <= self.threshold + grown
        ):
            self._follow()
        elif self.held:
            self.following = False  # the reader moved it away from the bottom
        # (else the browser moved it: the next render pins it again)

    def hold(self, on: bool) -> None:
        """The reader's hand is on the view (a finger dragging, the scrollbar pressed), or
        let go."""
        self.held = on

    def on_user_intent_up(self) -> None:
        """A wheel/key gesture upwards: release at once, before the scroll event."""
        self.following = False
        self._height_at_down = None

    def seen(self, height: float, now: float) -> None:
        """The content was ``height`` tall at ``now`` (ms): kept for a second, so that a
        gesture can be measured from when it began, not from when its event arrived."""
        self._heights.append((now, height))
        while len(self._heights) > 2 and self._heights[0][0] < now - HEIGHTS_KEPT_MS:
            del self._heights[0]

    def height_since(self, when: float, height: float) -> float:
        """The least the content was tall from just before ``when`` until now (``height``).

        A wheel's event is passive: the browser scrolls first, clamped to the bottom it had
        then, and the event reaches the page later, after the text may have grown. Growth
        is measured from the gesture's own time stamp (less one frame's slack: the scroll
        was clamped to the last frame drawn), never from when the page heard of it."""
        least = height
        before: float | None = None
        for at, seen in self._heights:
            if at < when - GESTURE_SLACK_MS:
                before = seen
            else:
                least = min(least, seen)
        return least if before is None else min(least, before)

    def on_user_intent_down(self, height: float, since: float | None = None) -> None:
        """A wheel/key gesture downwards begins while the content is ``height`` tall (or,
        given the gesture's time stamp ``since``, as tall as it was then)."""
        if self._height_at_down is None:
            self._height_at_down = height if since is None else self.height_since(since, height)

    def target_after_render(self, height: float, client: float) -> float | None:
        """Where to scroll after content changed: the bottom while following, else None."""
        if not self.following:
            self.show_jump = True
            return None
        return max(0.0, height - client)

    def jump(self, height: float, client: float) -> float:
        """The reader pressed "Jump to latest" (or sent a message): follow again."""
        self._follow()
        return max(0.0, height - client)

    def _follow(self) -> None:
        self.following = True
        self.show_jump = False
        self._height_at_down = None
