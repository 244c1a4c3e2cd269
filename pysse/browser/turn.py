"""One assistant answer in the page: its stream, its markdown, its DOM element, its state.

The JS bridge (``web/bridge.js``) calls the ``on_*`` methods synchronously from its read loop;
the frame scheduler calls ``render`` at most once per animation frame. The answer's state is
``streaming`` and then one of the ``Outcome`` values (``completed``, ``truncated``, ``error``,
``aborted``), shown as the article's ``data-state``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import js

from ..chat import ChatStream
from ..events import ChatEvent, Finish, Outcome, TextDelta, Usage
from ..inspector import timing_summary
from ..page.settings import image_hosts
from ..providers import error_message
from ..render.dom import DomWriter
from ..render.frames import FrameScheduler
from .dom import q

if TYPE_CHECKING:
    from .app import App

__all__ = ["STATE_TEXT", "Turn"]

STATE_TEXT = {
    Outcome.COMPLETED: "Done",
    Outcome.TRUNCATED: "Truncated",
    Outcome.ERROR: "Error",
    Outcome.ABORTED: "Stopped",
}


class Turn:
    """One assistant answer: its stream, its markdown, its DOM, its state."""

    def __init__(
        self, app: App, history: list[tuple[str, str]], el: Any, replay: bool = False
    ) -> None:
        self.app = app
        self.replay = replay
        self.history = history  # the conversation this answer replies to
        self.el = el
        # The answer's HTML grows inside .settled: settled nodes are appended, never replaced;
        # each open container's unsettled tail follows its settled children (render/dom.py).
        self.writer = DomWriter(q(".settled", el))
        self.status_el = q(".status", el)
        self.usage_el = q(".usage", el)
        s = app.settings
        self.format = s["format"]
        self.cs = ChatStream(self.format)
        from ..render.streaming import StreamingMarkdown  # see App.md_for

        self.md = StreamingMarkdown(md=app.md_for(image_hosts(s)))
        self.chunks: list[tuple[float, bytes]] = []  # raw bytes + arrival ms, for the inspector
        self.t0 = js.performance.now()
        self.t_first_text: float | None = None
        self.t_end: float | None = None
        self.longest_render_ms = 0.0
        self.render_ms: list[float] = []
        self.handle: Any = None
        self.state = "streaming"
        self.sched = FrameScheduler(self.render, app.request_frame, app.is_hidden)

    # -- from the JS bridge (called synchronously by its read loop) ------------------------------

    def on_chunk(self, u8: Any) -> None:
        self.feed_bytes(u8.to_bytes())

    def feed_bytes(self, data: bytes) -> None:
        self.chunks.append((js.performance.now() - self.t0, data))
        if self.state == "streaming":
            self._apply(self.cs.feed(data))

    def on_end(self) -> None:
        self._apply(self.cs.close())

    def on_http_error(self, status: int, retry_after: Any, content_type: str, text: str) -> None:
        message = f"HTTP {status}"
        detail = error_message(text)
        if detail:
            message += f": {detail}"
        if retry_after:
            message += f" (retry after {retry_after} s)"
        self._apply(self.cs.fail("http", message, status))

    def on_wrong_type(self, status: int, content_type: str, text: str) -> None:
        self._apply(
            self.cs.fail(
                "not_a_stream",
                f"the relay answered {status} with {content_type or 'no content type'}, not "
                "text/event-stream: the relay URL probably points at the wrong thing",
                status,
            )
        )

    def on_network_error(self, name: str, message: str) -> None:
        if self.state == "streaming":
            self._apply(self.cs.fail("network", f"could not reach the relay ({name}: {message})"))

    def on_read_error(self, name: str, message: str) -> None:
        if self.state == "streaming":  # else Stop already ended this answer
            # The connection broke mid-body: exactly a truncation, never a completion.
            self._apply(self.cs.close())

    def on_timeout(self, kind: str, seconds: float) -> None:
        what = "no first byte" if kind == "first-byte" else "no bytes"
        self._apply(self.cs.fail("timeout", f"timed out: {what} for {seconds:g} s"))

    # -- from the page -------------------------------------------------------------------------

    def stop(self) -> None:
        if self.state != "streaming":
            return
        if self.handle is not None:
            self.handle.abort()
        self._apply(self.cs.abort())

    # -- internals -----------------------------------------------------------------------------

    def _apply(self, events: list[ChatEvent]) -> None:
        grew = False
        for ev in events:
            if isinstance(ev, TextDelta):
                if self.t_first_text is None:
                    self.t_first_text = js.performance.now() - self.t0
                self.md.append(ev.text)
                grew = True
            elif isinstance(ev, Usage):
                self._show_usage(ev)
            elif isinstance(ev, Finish):  # a ProviderError is always followed by its Finish
                self._finish(ev)
                return
        if grew:
            self.sched.request()

    def render(self) -> None:
        t = js.performance.now()
        update = self.md.update() if self.state == "streaming" else self.md.finish()
        self.writer.apply(update)
        if self.state == "streaming" and self.md.busy:
            self.sched.request()  # highlighting a closed code fence, a slice per frame
        self.el.dataset.renders = str(self.sched.renders)
        took = js.performance.now() - t
        self.render_ms.append(round(took, 1))
        self.longest_render_ms = max(self.longest_render_ms, took)
        self.app.after_render()

    def _finish(self, fin: Finish) -> None:
        state = fin.outcome
        self.state = state.value
        self.t_end = js.performance.now() - self.t0
        self.sched.flush()  # the final state, synchronously: never wait on a frame
        self.el.dataset.state = state.value
        note = STATE_TEXT[state]
        if state == Outcome.ERROR and self.cs.error is not None:
            note = f"Error: {self.cs.error.message}"
        elif state == Outcome.TRUNCATED and fin.detail:
            note = "Truncated: " + fin.detail.removeprefix("truncated: ")
        self.status_el.textContent = note
        self.el.dataset.text = self.cs.text  # the exact concatenated deltas, for tests and tools
        q("[data-role=retry]", self.el).hidden = state == Outcome.COMPLETED or self.replay
        self.app.turn_finished(self)

    def _show_usage(self, usage: Usage) -> None:
        u = self.cs.usage or usage
        parts = []
        if u.input_tokens is not None:
            parts.append(f"{u.input_tokens} in")
        if u.output_tokens is not None:
            parts.append(f"{u.output_tokens} out")
        self.usage_el.textContent = " · ".join(parts) + " tokens" if parts else ""

    def raw(self) -> bytes:
        return b"".join(c for _, c in self.chunks)

    def timing(self) -> dict[str, Any]:
        total = self.t_end if self.t_end is not None else js.performance.now() - self.t0
        sched = self.sched
        return {
            **timing_summary(self.chunks, self.t_first_text, total, self.cs),
            "renders": sched.renders,
            "deltas_per_render": sched.requests / sched.renders if sched.renders else None,
            "longest_render_ms": self.longest_render_ms,
            "render_ms": self.render_ms,
            "outcome": self.state,
            "detail": self.cs.finish_detail or (self.cs.error.message if self.cs.error else ""),
            "format": self.cs.detected_format,
        }
