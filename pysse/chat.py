"""Bytes -> chat events: ``ChatStream`` owns an SSEParser and a provider adapter, and is the
single place that decides how an answer ended.

The rule it exists to enforce: an answer is ``completed`` only when the provider's own
terminal signal arrived. Bytes that simply stop are ``truncated``; a provider error event or
an unreadable payload is ``error``; Stop is ``aborted``. In every case ``text`` keeps exactly
the deltas that arrived, and nothing raises past ``feed`` for bad input: errors are events.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from typing import Any

from .errors import ChatStreamError, SSEProtocolError
from .events import (
    ChatEvent,
    Finish,
    Outcome,
    ProviderError,
    TextDelta,
    Usage,
)
from .providers import ADAPTERS, FORMATS, Adapter, detect_format, error_from_payload
from .sse import Bytes, SSEEvent, SSEParser

__all__ = ["ChatStream", "aiter_chat", "iter_chat"]

Observer = Callable[[SSEEvent, list[ChatEvent]], object]


class ChatStream:
    """Feed bytes from any provider's stream; get normalized chat events.

    ``format`` is one of ``auto``, ``openai-chat``, ``openai-responses``, ``anthropic``,
    ``gemini``. With ``auto`` the first event that identifies a format decides it
    (``detected_format`` then says which). ``observer`` is called for every SSE event with
    the chat events it became, and ``on_comment`` with each ``:`` comment (keep-alive), for
    tools such as the stream inspector.
    """

    def __init__(
        self,
        format: str = "auto",
        *,
        max_line_bytes: int = 1 << 20,
        observer: Observer | None = None,
        on_comment: Callable[[str], object] | None = None,
    ) -> None:
        if format not in FORMATS:
            raise ChatStreamError(f"unknown format {format!r}; expected one of {FORMATS}")
        self.format = format
        self._adapter: Adapter | None = None if format == "auto" else ADAPTERS[format]()
        self._parser = SSEParser(max_line_bytes=max_line_bytes, on_comment=on_comment)
        self._observer = observer
        self._parts: list[str] = []
        self._text: str | None = ""
        self.outcome: Outcome | None = None
        self.finish_reason: str | None = None
        self.finish_detail = ""
        self.usage: Usage | None = None
        self.error: ProviderError | None = None
        self.sse_events = 0
        self.closed = False

    # -- public API ---------------------------------------------------------------------------

    @property
    def detected_format(self) -> str | None:
        """The wire format in use (decided by ``auto`` from the stream), or None if unknown."""
        return self._adapter.name if self._adapter else None

    @property
    def text(self) -> str:
        """Every text delta so far, concatenated exactly."""
        if self._text is None:
            self._text = "".join(self._parts)
            self._parts = [self._text]
        return self._text

    @property
    def bytes_fed(self) -> int:
        return self._parser.bytes_fed

    @property
    def done(self) -> bool:
        return self.outcome is not None

    def feed(self, chunk: Bytes) -> list[ChatEvent]:
        """Add bytes from the network; return the chat events they completed."""
        if self.closed:
            raise ChatStreamError("feed() after close()")
        if self.outcome is not None:
            return []  # the answer has ended; later bytes change nothing
        try:
            sse_events = self._parser.feed(chunk)
        except SSEProtocolError as exc:
            out = self._handle_all(exc.events)
            if self.outcome is None:
                out += self._end_with_error(ProviderError("protocol", str(exc)))
            return out
        return self._handle_all(sse_events) if sse_events else []

    def close(self) -> list[ChatEvent]:
        """The byte stream ended. Returns the final events (a ``Finish`` if none came yet)."""
        if self.closed:
            return []
        self.closed = True
        if self.outcome is not None:
            return []
        with contextlib.suppress(SSEProtocolError):
            self._parser.close()
        if self._parser.bytes_fed == 0:
            detail = "truncated: the response body was empty"
        elif self._adapter is None:
            detail = "truncated: the stream ended before any recognisable event"
        else:
            detail = f"truncated: the connection closed before {self._adapter.terminal_signal}"
        return [self._finish(Finish(Outcome.TRUNCATED, self.finish_reason, detail))]

    def abort(self, detail: str = "stopped by the user") -> list[ChatEvent]:
        """The user pressed Stop: the answer ends as ``aborted``, its text kept."""
        if self.outcome is not None:
            return []
        self.closed = True
        return [self._finish(Finish(Outcome.ABORTED, self.finish_reason, detail))]

    def fail(self, kind: str, message: str, status: int | None = None) -> list[ChatEvent]:
        """End the answer with an error that came from outside the byte stream (a timeout,
        a network error); the text so far is kept."""
        if self.outcome is not None:
            return []
        self.closed = True
        return self._end_with_error(ProviderError(kind, message, status))

    # -- internals ----------------------------------------------------------------------------

    def _handle_all(self, sse_events: list[SSEEvent]) -> list[ChatEvent]:
        out: list[ChatEvent] = []
        for ev in sse_events:
            if self.outcome is not None:
                break
            got = self._handle(ev)
            if self._observer is not None:
                self._observer(ev, got)
            out += got
        return out

    def _handle(self, ev: SSEEvent) -> list[ChatEvent]:
        self.sse_events += 1
        data = ev.data
        obj: dict[str, Any] | None
        try:
            loaded = json.loads(data)
            obj = loaded if isinstance(loaded, dict) else None
        except ValueError:
            obj = None
        adapter = self._adapter
        if adapter is None:
            name = detect_format(ev, obj)
            if name is not None:
                adapter = self._adapter = ADAPTERS[name]()
        if obj is None:
            special = adapter.handle_non_json(ev) if adapter is not None else None
            if special is not None:
                return self._apply(special)
            if ev.event in ("ping", "keepalive", "keep-alive") or not data.strip():
                return []
            preview = data if len(data) <= 120 else data[:117] + "..."
            return self._end_with_error(
                ProviderError(
                    "malformed", f"the stream sent a payload that is not JSON: {preview}", raw=data
                )
            )
        err = error_from_payload(obj, data)
        if err is not None:
            return self._end_with_error(err)
        if adapter is None:
            return []  # not decided yet (a format-neutral first event): wait for the next
        return self._apply(adapter.handle(ev, obj))

    def _apply(self, events: list[ChatEvent]) -> list[ChatEvent]:
        out: list[ChatEvent] = []
        for e in events:
            if isinstance(e, TextDelta):
                if not e.text:
                    continue
                self._parts.append(e.text)
                self._text = None
            elif isinstance(e, Usage):
                prev = self.usage
                self.usage = Usage(
                    e.input_tokens
                    if e.input_tokens is not None
                    else (prev.input_tokens if prev else None),
                    e.output_tokens
                    if e.output_tokens is not None
                    else (prev.output_tokens if prev else None),
                )
            elif isinstance(e, ProviderError):
                return out + self._end_with_error(e)
            elif isinstance(e, Finish):
                out.append(self._finish(e))
                return out
            out.append(e)
        return out

    def _end_with_error(self, err: ProviderError) -> list[ChatEvent]:
        self.error = err
        return [err, self._finish(Finish(Outcome.ERROR, self.finish_reason, err.message))]

    def _finish(self, fin: Finish) -> Finish:
        if fin.reason is None and self._adapter is not None and self._adapter.reason:
            fin = Finish(fin.outcome, self._adapter.reason, fin.detail)
        self.outcome = fin.outcome
        if fin.reason is not None:
            self.finish_reason = fin.reason
        self.finish_detail = fin.detail
        return fin


def iter_chat(chunks: Iterable[Bytes], format: str = "auto") -> Iterator[ChatEvent]:
    """Chat events from any iterable of byte chunks (``httpx.Response.iter_bytes()``...).

    Always ends with exactly one ``Finish``: a broken iteration is reported as truncated."""
    cs = ChatStream(format)
    for chunk in chunks:
        yield from cs.feed(chunk)
        if cs.done:
            return
    yield from cs.close()


async def aiter_chat(
    chunks: AsyncIterable[Bytes], format: str = "auto"
) -> AsyncIterator[ChatEvent]:
    """``iter_chat`` for async iterators (httpx ``aiter_bytes()``, aiohttp ``iter_chunked()``)."""
    cs = ChatStream(format)
    async for chunk in chunks:
        for ev in cs.feed(chunk):
            yield ev
        if cs.done:
            return
    for ev in cs.close():
        yield ev
