"""One assistant answer in the page: its stream, its markdown, its DOM element, its state.

The JS bridge (``web/bridge.js``) calls the ``on_*`` methods synchronously from its read loop;
the frame scheduler calls ``render`` at most once per animation frame. The answer's state is
``streaming`` and then one of the ``Outcome`` values (``completed``, ``truncated``, ``error``,
``aborted``), shown as the article's ``data-state``.

Resuming (issue #12): when the relay gave the answer an id (``answer_id``), a connection that
drops is not the end. The bridge asks ``on_drop`` how long to wait (``pysse.page.reconnect``),
shows "Reconnecting…", asks the relay for the bytes after the ones already here, and feeds them
into the same ``ChatStream``: the parse continues exactly where it was, mid-line or
mid-character. Only when reconnecting fails does the answer end ``truncated``, with the reason.
A body that ends cleanly before the format's terminal signal is a drop too (WebKit reports a
cut that way), and so is a dead or silent connection when the page comes back into view
(``on_page_return``); the rules are ``pysse.page.reconnect``'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import js

from ..chat import ChatStream
from ..events import ChatEvent, Finish, Outcome, ReasoningDelta, TextDelta, Usage
from ..inspector import timing_summary
from ..page import diagnose
from ..page.continuation import Joiner
from ..page.reconnect import (
    Drop,
    Reconnect,
    early_end_is_drop,
    relay_reason,
    revive_on_return,
)
from ..page.recording import Recording
from ..page.settings import image_hosts
from ..page.speed import SpeedMeter
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
        self.relay_ended = ""  # why the relay ended this answer itself, if it said so
        self.cs = ChatStream(self.format, on_comment=self._on_comment)
        from ..render.streaming import StreamingMarkdown  # see App.md_for

        self.md = StreamingMarkdown(md=app.md_for(image_hosts(s)))
        self.chunks: list[tuple[float, bytes]] = []  # raw bytes + arrival ms, for the inspector
        self.t0 = js.performance.now()
        self.t_first_text: float | None = None
        self.t_end: float | None = None
        self.longest_render_ms = 0.0
        self.render_ms: list[float] = []
        self.handle: Any = None
        self.url = ""
        self.body_format = ""  # the format the request body was written in
        self.sent_headers: dict[str, str] = {}
        self.advertised = ""  # the relay's X-Pysse-Format, if it sent one
        self.from_relay = False  # the answer carried X-Pysse-Relay
        self.state = "streaming"
        self.answer_id = ""  # the relay's id for this answer (X-Pysse-Answer-Id): resumable
        self.saved_text = ""  # reattached after a reload: the text saved before it
        self.reconnect = Reconnect()
        self.resumes: list[tuple[int, int, float, int]] = []  # chunk index, byte, ms, try
        self.sched = FrameScheduler(self.render, app.request_frame, app.is_hidden)
        self.speed = SpeedMeter()
        self.chat_id = ""  # the conversation and message this answer is (none for a replay)
        self.message_id = ""
        self.joiner: Joiner | None = None  # set when this answer continues a cut-off one
        self.joined: list[str] = []  # ... and then the pieces of its whole text
        self.last_note = ""

    def continue_from(self, partial: str) -> None:
        """This answer continues ``partial``: show it at once and join the new text to it."""
        self.joiner = Joiner(partial)
        self.joined = [self.joiner.base]
        self.md.append(self.joiner.base)
        self.render()  # now, not on the next frame: the answer never blinks empty

    @property
    def text(self) -> str:
        """The whole answer: for a continued one, the partial answer joined to the rest."""
        if self.joiner is None:
            return self.cs.text
        return "".join(self.joined)

    def now(self) -> float:
        return float(js.performance.now() - self.t0)

    def recording(self) -> Recording:
        return Recording(
            list(self.chunks),
            format=self.format,
            state=self.state,
            timing=self.timing(),
            answer_id=self.answer_id,
        )

    # -- from the JS bridge (called synchronously by its read loop) ------------------------------

    def on_chunk(self, u8: Any) -> bool:
        """Feed a chunk; True if it completed chat content (keep-alives do not count: the
        bridge's no-content timer is re-armed only on True)."""
        return self.feed_bytes(u8.to_bytes())

    def feed_bytes(self, data: bytes) -> bool:
        t = js.performance.now() - self.t0
        self.chunks.append((t, data))
        if self.reconnect.reconnecting and data:
            self.reconnect.on_bytes()
            self._show_reconnecting(False)
        if self.state == "streaming":
            events = self.cs.feed(data)
            self.speed.on_bytes(t, content=bool(events))
            self._apply(events)
            return bool(events)
        return False

    def on_end(self) -> bool:
        """The body ended cleanly (``done: true``). True: that was a drop (the terminal
        signal never came and the relay keeps the answer), and the bridge resumes it; False:
        the answer ended here."""
        if self.state != "streaming":
            return False
        if early_end_is_drop(resumable=bool(self.answer_id), relay_ended=bool(self.relay_ended)):
            return True
        self._apply(self.cs.close(reason=self._relay_detail()))
        return False

    def _on_comment(self, text: str) -> None:
        why = relay_reason(text)
        if why is not None:
            self.relay_ended = why

    def _relay_detail(self) -> str | None:
        return f"the relay ended it: {self.relay_ended}" if self.relay_ended else None

    def on_open(
        self, status: int, content_type: str, fmt: str, relay: str, answer_id: str = ""
    ) -> None:
        """The response's head arrived: remember what the relay says it speaks, and the id
        that makes this answer resumable."""
        self.advertised = str(fmt or "")
        self.from_relay = bool(relay)
        self.answer_id = str(answer_id or "")
        if self.answer_id:
            self.el.dataset.answerId = self.answer_id
            if not self.replay:  # saved at once: a reload from now on can reattach
                self.app.answers.save_in_flight(self)
        if self.advertised:
            self.app.learn_format(self.url, self.advertised)

    def on_http_error(self, status: int, retry_after: Any, content_type: str, text: str) -> None:
        message = diagnose.http_failure(
            status,
            text,
            content_type,
            url=self.url,
            retry_after=str(retry_after or ""),
            from_relay=self.from_relay,
        )
        mismatch = diagnose.format_mismatch(self.format, None, self.advertised)
        if mismatch:
            message += f" — {mismatch}"
        elif self.advertised and self.body_format and self.advertised != self.body_format:
            message += (
                f" — the request was written as {diagnose.label(self.body_format)} but this "
                f"relay speaks {diagnose.label(self.advertised)}: Regenerate sends it in that "
                "format"
            )
        self._apply(self.cs.fail("http", message, status))

    def on_wrong_type(self, status: int, content_type: str, text: str) -> None:
        self._apply(
            self.cs.fail(
                "not_a_stream", diagnose.not_a_stream(status, content_type, text, self.url), status
            )
        )

    def on_network_error(self, name: str, message: str, probe: str = "") -> None:
        if self.state == "streaming":
            text = diagnose.unreachable(
                self.url,
                str(js.location.origin),
                self.sent_headers,
                diagnose.Probe.from_json(probe),
            )
            self._apply(self.cs.fail("network", text))

    def on_read_error(self, name: str, message: str) -> None:
        if self.state == "streaming":  # else Stop already ended this answer
            # The connection broke mid-body: exactly a truncation, never a completion.
            self._apply(self.cs.close())

    def on_drop(self, kind: Drop, name: str, message: str) -> float:
        """The connection of a resumable answer failed (``kind``): milliseconds to wait
        before resuming, or -1 when it is time to give up (the answer then ends here)."""
        if self.state != "streaming":
            return -1
        delay = self.reconnect.on_drop(js.performance.now(), kind, self.cs.bytes_fed, self.cs.retry)
        if delay is None:
            why = self.reconnect.why
            if kind == "idle":
                idle = int(self.app.settings["idle_s"])
                self._apply(self.cs.fail("timeout", f"timed out: no bytes for {idle:g} s ({why})"))
            elif kind == "early-end":  # the relay has no more: the answer's own ending
                self._apply(self.cs.close(reason=self._relay_detail()))
            else:
                self._apply(self.cs.close(reason=f"the connection broke and {why} ({name})"))
            return -1
        self._show_reconnecting(True)
        return delay

    def on_resumed(self, offset: int) -> None:
        """The relay took the resume: the bytes after ``offset`` come next."""
        at = js.performance.now() - self.t0
        self.resumes.append((len(self.chunks), int(offset), at, self.reconnect.total))
        self.el.dataset.resumes = str(len(self.resumes))

    def on_resume_failed(self, status: int, text: str) -> None:
        """The relay refused the resume (410: the answer expired there; 416, 404...)."""
        if self.state != "streaming":
            return
        self._show_reconnecting(False)
        message = error_message(str(text), 400) or f"the relay answered {status}"
        self._apply(self.cs.close(reason=f"could not resume: {message}"))

    def resume_marks(self) -> dict[int, str]:
        """Where the answer was resumed, for the inspector's raw view."""
        return {
            index: f"reconnect {n}: resumed at byte {offset:,} ({at:,.0f} ms)"
            for index, offset, at, n in self.resumes
        }

    def _show_reconnecting(self, on: bool) -> None:
        if on:
            self.el.setAttribute("data-reconnecting", "1")
            self.status_el.textContent = f"Reconnecting… (try {self.reconnect.total})"
        elif self.el.hasAttribute("data-reconnecting"):
            self.el.removeAttribute("data-reconnecting")
            self.status_el.textContent = "Streaming…"

    def on_timeout(self, kind: str, seconds: float) -> None:
        what = {
            "first-byte": "no first byte",
            "no-content": "only keep-alives, no content,",
        }.get(kind, "no bytes")
        self._apply(self.cs.fail("timeout", f"timed out: {what} for {seconds:g} s"))

    # -- from the page -------------------------------------------------------------------------

    def on_page_return(self, persisted: bool) -> None:
        """The page is in view again (``persisted``: restored from the back-forward cache):
        a connection the system killed meanwhile, without an error, is resumed now rather
        than after the idle timeout."""
        if self.handle is None or self.state != "streaming":
            return
        last = self.chunks[-1][0] if self.chunks else 0.0
        if revive_on_return(
            resumable=bool(self.answer_id), persisted=persisted, silent_ms=self.now() - last
        ):
            self.handle.revive()

    def stop(self) -> None:
        """Stop: the bridge aborts the request and, for a resumable answer, tells the relay
        (``DELETE ?answer=ID``): a disconnect alone would not cancel the upstream."""
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
                self.speed.on_text(self.now(), len(ev.text))
                self._add_text(self.joiner.feed(ev.text) if self.joiner else ev.text)
                grew = True
            elif isinstance(ev, ReasoningDelta):
                self.speed.on_text(self.now(), len(ev.text))
            elif isinstance(ev, Usage):
                self.speed.on_usage((self.cs.usage or ev).output_tokens)
                self._show_usage(ev)
            elif isinstance(ev, Finish):  # a ProviderError is always followed by its Finish
                self._finish(ev)
                return
        if grew:
            self.sched.request()

    def _add_text(self, text: str) -> None:
        if self.joiner is not None:
            self.joined.append(text)
        self.md.append(text)

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
        if self.joiner is not None:  # a continuation still held back goes out now
            self._add_text(self.joiner.close())
        self.state = state.value
        self.el.removeAttribute("data-reconnecting")
        self.t_end = js.performance.now() - self.t0
        self.speed.on_end(self.t_end)
        self.sched.flush()  # the final state, synchronously: never wait on a frame
        self.el.dataset.state = state.value
        self.el.removeAttribute("aria-busy")
        self.last_note = self._note(fin)
        self.status_el.textContent = self.last_note
        # The exact concatenated deltas (for tests and tools); a continued answer: all of it.
        self.el.dataset.text = self.text
        self.app.turn_finished(self)

    def _note(self, fin: Finish) -> str:
        """The status line: how the answer ended, and, when the stream is in another format
        than the one chosen, that mismatch first (it is the cause)."""
        state = fin.outcome
        note = STATE_TEXT[state]
        if state == Outcome.ERROR and self.cs.error is not None:
            note = f"Error: {self.cs.error.message}"
        elif state == Outcome.TRUNCATED and fin.detail:
            note = "Truncated: " + fin.detail.removeprefix("truncated: ")
        if state in (Outcome.ERROR, Outcome.TRUNCATED) and self.chunks and not self.replay:
            mismatch = diagnose.format_mismatch(
                self.format, diagnose.stream_format(self.raw()), self.advertised
            )
            if mismatch:
                note = f"{STATE_TEXT[state]}: {mismatch}"
        return note

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
