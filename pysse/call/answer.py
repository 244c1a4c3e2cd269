"""One answer's stream, from the request to how it ended, whatever carries its bytes.

The bridge (``pysse/browser/bridge.js``) does the network: ``fetch()``, the read loop, timers,
Stop. Every fact it learns comes here, synchronously, through the sink calls named after it
(``on_open``, ``on_chunk``, ``on_end``, ``on_drop``...), and this class decides what the fact
means: which chat events the bytes are, whether a drop is resumed or ends the answer, and the
sentence a person reads when something failed. It is pure (a clock is injected), so every
decision is tested in CPython; ``pysse.browser.call.ChatCall`` glues it to the page.

What it guarantees, whatever the network does:

* **Never a dead stream called done**: only the format's own terminal signal completes an
  answer (``ChatStream``); a drop, a timeout or an error body ends it ``truncated`` or
  ``error``, with the text kept.
* **Resumable answers survive drops**: when the relay named the answer (``X-Pysse-Answer-Id``),
  a broken connection is not the end; ``on_drop`` says how long to wait
  (``pysse.call.reconnect``), and the resumed bytes continue the same parse.
* **An early clean end is a drop**: a body that ends cleanly before the terminal signal is
  how WebKit (and Apple's network stack under every iPhone browser) reports a cut
  connection; when the relay keeps the answer, ``on_end`` says "resume" (issue #27). A page
  back in view with a dead or silent connection resumes at once (``should_revive``).
* **A continued answer reads as one text**: with ``continues``, the new deltas are joined to
  the partial answer (``pysse.call.continuation``).

Listeners (:class:`AnswerListener`) hear the text to show, every chat event, the bytes with
their arrival times, reconnects, and the end; the session itself keeps the recording.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..chat import ChatStream
from ..events import ChatEvent, Finish, Outcome, TextDelta
from ..inspector import timing_summary
from ..providers import Format, error_message
from . import diagnose
from .continuation import Joiner
from .reconnect import Drop, Reconnect, early_end_is_drop, relay_reason, revive_on_return

__all__ = ["PAGE_FAULT", "STATE_TEXT", "AnswerListener", "AnswerSession"]

PAGE_FAULT = "page"  # the error kind of an answer the page failed to show (``page_failed``)

STATE_TEXT = {
    Outcome.COMPLETED: "Done",
    Outcome.TRUNCATED: "Truncated",
    Outcome.ERROR: "Error",
    Outcome.ABORTED: "Stopped",
}


class AnswerListener:
    """What an answer tells the code showing it. Every method is optional (a no-op here)."""

    def on_opened(self, session: AnswerSession) -> None:
        """The response's head arrived: ``answer_id`` and ``advertised`` are known."""

    def on_bytes(self, t_ms: float, data: bytes, content: bool) -> None:
        """Bytes arrived at ``t_ms``; ``content`` if they completed chat events."""

    def on_text(self, text: str) -> None:
        """Text to show after what was shown so far (a continuation's join applied)."""

    def on_event(self, event: ChatEvent) -> None:
        """Every chat event, as it was decoded."""

    def on_reconnecting(self, on: bool, attempt: int) -> None:
        """A resumable answer's connection dropped (``on``), or bytes flow again."""

    def on_resume(self, offset: int) -> None:
        """The relay took a resume: the bytes after ``offset`` come next."""

    def on_finish(self, finish: Finish) -> None:
        """The answer ended; ``AnswerSession.state``/``note`` say how."""


class AnswerSession:
    """The state of one answer (see the module docstring). ``clock()`` returns milliseconds;
    ``origin`` is the page's origin, for messages about CORS."""

    def __init__(
        self,
        format: Format = "auto",
        *,
        clock: Callable[[], float],
        url: str = "",
        origin: str = "",
        sent_headers: Mapping[str, str] | None = None,
        idle_s: float = 30.0,
        continues: str | None = None,
        keep_chunks: bool = True,
        replay: bool = False,
    ) -> None:
        self.format = format
        self.relay_ended = ""  # why the relay ended this answer itself, if it said so
        self.cs = ChatStream(format, on_comment=self._on_comment)
        self.clock = clock
        self.t0 = clock()
        self.url = url
        self.origin = origin
        self.sent_headers = dict(sent_headers or {})
        self.idle_s = idle_s
        self.keep_chunks = keep_chunks
        self.replay = replay
        self.listeners: list[AnswerListener] = []
        self.chunks: list[tuple[float, bytes]] = []  # raw bytes + arrival ms, for the inspector
        self.last_byte_ms = 0.0
        self.t_first_text: float | None = None
        self.t_end: float | None = None
        self.state = "streaming"
        self.answer_id = ""  # the relay's id for this answer (X-Pysse-Answer-Id): resumable
        self.advertised = ""  # the relay's X-Pysse-Format, if it sent one
        self.from_relay = False  # the answer carried X-Pysse-Relay
        self.body_format = ""  # the format the request body was written in, if known
        self.reconnect = Reconnect()
        self.resumes: list[tuple[int, int, float, int]] = []  # chunk index, byte, ms, try
        self.note = ""  # how it ended, in a sentence (the status line)
        self.joiner: Joiner | None = None
        self.joined: list[str] = []
        if continues is not None:
            self.joiner = Joiner(continues)
            self.joined = [self.joiner.base]

    # -- what it has -------------------------------------------------------------------------

    @property
    def text(self) -> str:
        """The whole answer: for a continued one, the partial answer joined to the rest."""
        if self.joiner is None:
            return self.cs.text
        return "".join(self.joined)

    @property
    def shown_start(self) -> str:
        """The text shown before any byte arrives (a continued answer's partial text)."""
        return self.joiner.base if self.joiner is not None else ""

    @property
    def streaming(self) -> bool:
        return self.state == "streaming"

    def now(self) -> float:
        """Milliseconds since the answer started."""
        return self.clock() - self.t0

    def raw(self) -> bytes:
        return b"".join(c for _, c in self.chunks)

    def resume_marks(self) -> dict[int, str]:
        """Where the answer was resumed, for the inspector's raw view."""
        return {
            index: f"reconnect {n}: resumed at byte {offset:,} ({at:,.0f} ms)"
            for index, offset, at, n in self.resumes
        }

    def timing(self) -> dict[str, Any]:
        total = self.t_end if self.t_end is not None else self.now()
        return {
            **timing_summary(self.chunks, self.t_first_text, total, self.cs),
            "outcome": self.state,
            "detail": self.cs.finish_detail or (self.cs.error.message if self.cs.error else ""),
            "format": self.cs.detected_format,
        }

    # -- the bridge's sink calls (synchronous, from its read loop) ------------------------------

    def feed(self, data: bytes) -> bool:
        """Bytes of the body; True if they completed chat content (keep-alives do not count:
        the bridge re-arms its no-content timer only on True)."""
        t = self.now()
        self.last_byte_ms = t
        if self.keep_chunks:
            self.chunks.append((t, data))
        if self.reconnect.reconnecting and data:
            self.reconnect.on_bytes()
            self._tell("on_reconnecting", False, self.reconnect.total)
        if not self.streaming:
            return False
        events = self.cs.feed(data)
        self._tell("on_bytes", t, data, bool(events))
        self._apply(events)
        return bool(events)

    def on_end(self) -> bool:
        """The body ended cleanly (``done: true``). True: that was a drop (the terminal signal
        never came and the relay keeps the answer): the bridge resumes it. False: the answer
        ended here (without the terminal signal, ``truncated``)."""
        if not self.streaming:
            return False
        if early_end_is_drop(resumable=bool(self.answer_id), relay_ended=bool(self.relay_ended)):
            return True
        self._apply(self.cs.close(reason=self._relay_detail()))
        return False

    def should_revive(self, persisted: bool) -> bool:
        """The page is in view again (``persisted``: back from the back-forward cache): True
        when the connection the system may have killed meanwhile, without an error, should be
        replaced by a resume now rather than after the idle timeout."""
        return self.streaming and revive_on_return(
            resumable=bool(self.answer_id),
            persisted=persisted,
            silent_ms=self.now() - self.last_byte_ms,
        )

    def on_open(
        self, status: int, content_type: str, fmt: str, relay: str, answer_id: str = ""
    ) -> None:
        """The response's head arrived: what the relay says it speaks, and the id that makes
        this answer resumable."""
        self.advertised = str(fmt or "")
        self.from_relay = bool(relay)
        self.answer_id = str(answer_id or "")
        self._tell("on_opened", self)

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
        message = diagnose.not_a_stream(status, content_type, text, self.url)
        self._apply(self.cs.fail("not_a_stream", message, status))

    def on_network_error(self, name: str, message: str, probe: str = "") -> None:
        if self.streaming:
            found = diagnose.Probe.from_json(probe)
            text = diagnose.unreachable(self.url, self.origin, self.sent_headers, found)
            self._apply(self.cs.fail("network", text))

    def on_read_error(self, name: str, message: str) -> None:
        if self.streaming:  # else Stop already ended this answer
            # The connection broke mid-body: exactly a truncation, never a completion.
            self._apply(self.cs.close())

    def on_drop(self, kind: Drop, name: str, message: str) -> float:
        """The connection of a resumable answer failed (``kind``): milliseconds to wait
        before resuming, or -1 when it is time to give up (the answer then ends here)."""
        if not self.streaming:
            return -1
        delay = self.reconnect.on_drop(self.clock(), kind, self.cs.bytes_fed, self.cs.retry)
        if delay is None:
            why = self.reconnect.why
            if kind == "idle":
                self._apply(
                    self.cs.fail("timeout", f"timed out: no bytes for {self.idle_s:g} s ({why})")
                )
            elif kind == "early-end":  # the relay has no more: the answer's own ending
                self._apply(self.cs.close(reason=self._relay_detail()))
            else:
                self._apply(self.cs.close(reason=f"the connection broke and {why} ({name})"))
            return -1
        self._tell("on_reconnecting", True, self.reconnect.total)
        return delay

    def on_resumed(self, offset: int) -> None:
        """The relay took the resume: the bytes after ``offset`` come next."""
        self.resumes.append((len(self.chunks), int(offset), self.now(), self.reconnect.total))
        self._tell("on_resume", int(offset))

    def on_resume_failed(self, status: int, text: str) -> None:
        """The relay refused the resume (410: the answer expired there; 416, 404...)."""
        if not self.streaming:
            return
        self._tell("on_reconnecting", False, self.reconnect.total)
        message = error_message(str(text), 400) or f"the relay answered {status}"
        self._apply(self.cs.close(reason=f"could not resume: {message}"))

    def on_timeout(self, kind: str, seconds: float) -> None:
        what = {
            "first-byte": "no first byte",
            "no-content": "only keep-alives, no content,",
        }.get(kind, "no bytes")
        self._apply(self.cs.fail("timeout", f"timed out: {what} for {seconds:g} s"))

    # -- from the page -------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop: the answer ends ``aborted``, its text kept (the bridge aborts the request)."""
        self._apply(self.cs.abort())

    def page_failed(self, why: str) -> None:
        """The page could not show this answer (its render raised ``why``): it ends ``error``,
        its text kept, later bytes ignored. One that had already ended (its last slices were
        rendering) is marked an error too: what is on screen is not its end."""
        message = (
            f"the page could not show this answer ({why}); its text is kept — Copy still works"
        )
        if self.streaming:
            self._apply(self.cs.fail(PAGE_FAULT, message))
            return
        self.state = Outcome.ERROR.value
        self.note = f"Error: {message}"

    # -- internals -----------------------------------------------------------------------------

    def _on_comment(self, text: str) -> None:
        why = relay_reason(text)
        if why is not None:
            self.relay_ended = why

    def _relay_detail(self) -> str | None:
        return f"the relay ended it: {self.relay_ended}" if self.relay_ended else None

    def _tell(self, name: str, *args: Any) -> None:
        for listener in self.listeners:
            getattr(listener, name)(*args)

    def _apply(self, events: list[ChatEvent]) -> None:
        for ev in events:
            if isinstance(ev, TextDelta):
                if self.t_first_text is None:
                    self.t_first_text = self.now()
                self._show(self.joiner.feed(ev.text) if self.joiner else ev.text)
            self._tell("on_event", ev)
            if isinstance(ev, Finish):  # a ProviderError is always followed by its Finish
                self._finish(ev)
                return

    def _show(self, text: str) -> None:
        if self.joiner is not None:
            self.joined.append(text)
        if text:
            self._tell("on_text", text)

    def _finish(self, fin: Finish) -> None:
        if self.joiner is not None:  # a continuation still held back goes out now
            self._show(self.joiner.close())
        self.state = fin.outcome.value
        self.t_end = self.now()
        self.note = self._note(fin)
        self._tell("on_finish", fin)

    def _note(self, fin: Finish) -> str:
        """The status line: how the answer ended, and, when the stream is in another format
        than the one chosen, that mismatch first (it is the cause)."""
        state = fin.outcome
        note = STATE_TEXT[state]
        if state == Outcome.ERROR and self.cs.error is not None:
            note = f"Error: {self.cs.error.message}"
            if self.cs.error.kind == PAGE_FAULT:  # the page's own fault, not the stream's
                return note
        elif state == Outcome.TRUNCATED and fin.detail:
            note = "Truncated: " + fin.detail.removeprefix("truncated: ")
        if state in (Outcome.ERROR, Outcome.TRUNCATED) and self.chunks and not self.replay:
            detected = diagnose.stream_format(self.raw())
            mismatch = diagnose.format_mismatch(self.format, detected, self.advertised)
            if mismatch:
                note = f"{STATE_TEXT[state]}: {mismatch}"
        return note
