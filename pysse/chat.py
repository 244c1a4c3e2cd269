"""Bytes -> chat events: ``ChatStream`` owns an SSEParser and a provider adapter, and is the
single place that decides how an answer ended.

The rule it exists to enforce: an answer is ``completed`` only when the provider's own
terminal signal arrived. Bytes that simply stop are ``truncated``; a provider error event or
an unreadable payload is ``error``; Stop is ``aborted``. In every case ``text`` keeps exactly
the deltas that arrived, and nothing raises past ``feed`` for bad input: errors are events.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from typing import Any

from .accumulate import Accumulator
from .errors import ChatStreamError, SSEProtocolError
from .events import (
    ChatEvent,
    Citation,
    Finish,
    Outcome,
    ProviderError,
    ReasoningBlock,
    ReasoningDelta,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from .jsonsafe import JSONTooDeepError, loads_bounded
from .providers import (
    FORMATS,
    Decoder,
    Format,
    detect_format,
    error_from_payload,
    get_provider,
    http_error_message,
)
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
        format: Format = "auto",
        *,
        max_line_bytes: int = 1 << 20,
        max_event_bytes: int = 4 << 20,
        observer: Observer | None = None,
        on_comment: Callable[[str], object] | None = None,
    ) -> None:
        if format not in FORMATS:
            raise ChatStreamError(
                f"unknown format {format!r}; expected one of {', '.join(FORMATS)}"
            )
        self.format = format
        self._adapter: Decoder | None = None
        self._adapter_name: str | None = None
        if format != "auto":
            self._use(format)
        self._parser = SSEParser(
            max_line_bytes=max_line_bytes, on_comment=on_comment, max_event_bytes=max_event_bytes
        )
        self._observer = observer
        self._parts: list[str] = []
        self._text: str | None = ""
        self._more = Accumulator()  # reasoning, tool calls, citations
        self._outcome: Outcome | None = None
        self._finish_reason: str | None = None
        self._finish_detail = ""
        self._usage: Usage | None = None
        self._error: ProviderError | None = None
        self._sse_events = 0

    # -- state (read-only: only the stream itself decides how an answer ended) ------------------

    @property
    def outcome(self) -> Outcome | None:
        """completed / truncated / error / aborted once the answer ended, else None."""
        return self._outcome

    @property
    def finish_reason(self) -> str | None:
        """The provider's own word for why it stopped ("stop", "end_turn", ...), if it said."""
        return self._finish_reason

    @property
    def finish_detail(self) -> str:
        """A sentence for people about how the answer ended (why it is truncated, ...)."""
        return self._finish_detail

    @property
    def usage(self) -> Usage | None:
        """Token counts, merged across every usage report of the stream."""
        return self._usage

    @property
    def error(self) -> ProviderError | None:
        """The error that ended the answer, when its outcome is ``error``."""
        return self._error

    @property
    def sse_events(self) -> int:
        """SSE events handled so far (comments excluded)."""
        return self._sse_events

    @property
    def closed(self) -> bool:
        """True once the answer has ended, whatever the outcome: later ``feed`` calls return
        ``[]`` and change nothing."""
        return self._outcome is not None

    # -- public API ---------------------------------------------------------------------------

    @property
    def detected_format(self) -> str | None:
        """The wire format in use (decided by ``auto`` from the stream), or None if unknown."""
        return self._adapter_name

    @property
    def model(self) -> str | None:
        """The model the provider says writes the answer (its stream's first mention), or
        None if it has not said."""
        return self._adapter.model if self._adapter is not None else None

    @property
    def text(self) -> str:
        """Every text delta so far, concatenated exactly."""
        if self._text is None:
            self._text = "".join(self._parts)
            self._parts = [self._text]
        return self._text

    @property
    def reasoning(self) -> str:
        """Every reasoning delta so far, concatenated exactly (never part of ``text``)."""
        return self._more.reasoning

    @property
    def reasoning_blocks(self) -> tuple[ReasoningBlock, ...]:
        """The reasoning blocks so far, with their signatures and hidden (redacted) ones:
        what an Anthropic turn sends back when thinking is on."""
        return self._more.reasoning_blocks

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The tool calls so far, each with its id, name and arguments (JSON text), in the
        order they began."""
        return self._more.tool_calls

    @property
    def citations(self) -> tuple[Citation, ...]:
        """The sources the provider cited, each once, in the order they came (URLs
        unchecked: link only ``Citation.linkable`` ones)."""
        return self._more.citations

    @property
    def bytes_fed(self) -> int:
        return self._parser.bytes_fed

    @property
    def retry(self) -> int | None:
        """The stream's latest ``retry:`` field (ms), the reconnect delay it asks for."""
        return self._parser.retry

    @property
    def done(self) -> bool:
        return self.outcome is not None

    def feed(self, chunk: Bytes) -> list[ChatEvent]:
        """Add bytes from the network; return the chat events they completed.

        One rule for late bytes: once the answer has ended (its terminal signal, an error,
        ``close()``, ``abort()`` or ``fail()``), ``feed`` returns ``[]`` and changes nothing."""
        if self._outcome is not None:
            return []
        try:
            sse_events = self._parser.feed(chunk)
        except SSEProtocolError as exc:
            out = self._handle_all(exc.events)
            if self.outcome is None:
                out += self._end_with_error(ProviderError("protocol", str(exc)))
            return out
        return self._handle_all(sse_events) if sse_events else []

    def close(
        self, broken: BaseException | None = None, *, reason: str | None = None
    ) -> list[ChatEvent]:
        """The byte stream ended (``broken``: the transport error that ended it; ``reason``:
        why, in words, when the caller knows better, e.g. a resume the relay refused).
        Returns the final events: a ``Finish`` if the answer had not ended yet, always
        ``truncated``."""
        if self._outcome is not None:
            return []
        with contextlib.suppress(SSEProtocolError):
            self._parser.close()
        if reason:
            detail = f"truncated: {reason}"
        elif broken is not None:
            reason = f"{type(broken).__name__}: {broken}" if str(broken) else type(broken).__name__
            detail = f"truncated: the connection broke ({reason})"
        elif self._parser.bytes_fed == 0:
            detail = "truncated: the response body was empty"
        elif self._adapter is None:
            detail = "truncated: the stream ended before any recognisable event"
        else:
            detail = f"truncated: the connection closed before {self._adapter.terminal_signal}"
        return [self._finish(Finish(Outcome.TRUNCATED, self._finish_reason, detail))]

    def abort(self, detail: str = "stopped by the user") -> list[ChatEvent]:
        """The user pressed Stop: the answer ends as ``aborted``, its text kept."""
        if self._outcome is not None:
            return []
        return [self._finish(Finish(Outcome.ABORTED, self._finish_reason, detail))]

    def fail(self, kind: str, message: str, status: int | None = None) -> list[ChatEvent]:
        """End the answer with an error that came from outside the byte stream (a timeout,
        a network error); the text so far is kept."""
        if self._outcome is not None:
            return []
        return self._end_with_error(ProviderError(kind, message, status))

    # -- internals ----------------------------------------------------------------------------

    def _use(self, name: str) -> Decoder:
        self._adapter = get_provider(name).decoder()
        self._adapter_name = name
        return self._adapter

    def _handle_all(self, sse_events: list[SSEEvent]) -> list[ChatEvent]:
        out: list[ChatEvent] = []
        for ev in sse_events:
            if self._outcome is not None:
                break
            got = self._handle(ev)
            if self._observer is not None:
                self._observer(ev, got)
            out += got
        return out

    def _handle(self, ev: SSEEvent) -> list[ChatEvent]:
        self._sse_events += 1
        data = ev.data
        obj: dict[str, Any] | None
        try:
            loaded = loads_bounded(data)
            obj = loaded if isinstance(loaded, dict) else None
        except JSONTooDeepError as exc:
            # Never parsed (it could crash the runtime): an error whatever the format.
            return self._end_with_error(
                ProviderError("malformed", f"the stream sent a payload with {exc}", raw=data)
            )
        except ValueError:
            obj = None
        adapter = self._adapter
        if adapter is None:
            name = detect_format(ev, obj)
            if name is not None:
                adapter = self._use(name)
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
        adapter.note_model(obj)
        return self._apply(adapter.handle(ev, obj))

    def _apply(self, events: list[ChatEvent]) -> list[ChatEvent]:
        out: list[ChatEvent] = []
        for e in events:
            if isinstance(e, TextDelta):
                if not e.text:
                    continue
                self._parts.append(e.text)
                self._text = None
            elif isinstance(e, Citation):
                if not self._more.add(e):
                    continue  # a repeat: the provider sent it again on the finished text
            elif isinstance(e, ReasoningDelta | ToolCallDelta):
                if isinstance(e, ReasoningDelta) and e.empty:
                    continue
                if isinstance(e, ToolCallDelta) and not (e.id or e.name or e.arguments):
                    continue
                self._more.add(e)
            elif isinstance(e, Usage):
                prev = self._usage
                self._usage = Usage(
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
        self._error = err
        return [err, self._finish(Finish(Outcome.ERROR, self._finish_reason, err.message))]

    def _finish(self, fin: Finish) -> Finish:
        if fin.reason is None and self._adapter is not None and self._adapter.reason:
            fin = Finish(fin.outcome, self._adapter.reason, fin.detail)
        self._outcome = fin.outcome
        if fin.reason is not None:
            self._finish_reason = fin.reason
        self._finish_detail = fin.detail
        return fin


ERROR_BODY_MAX = 64 * 1024  # bytes of a non-stream body read for its error message


def _not_a_stream(status: int | None, content_type: str | None) -> bool:
    """True when the response head says the body is not an event stream to parse."""
    if status is not None and not 200 <= status <= 299:
        return True
    if content_type is not None:
        return not content_type.strip().lower().startswith("text/event-stream")
    return False


def _response_failure(status: int | None, content_type: str | None, body: bytes) -> str:
    text = body.decode("utf-8", "replace")
    if status is not None and not 200 <= status <= 299:
        return http_error_message(status, text, content_type or "")
    what = (content_type or "").split(";", 1)[0].strip() or "no content type"
    summary = http_error_message(status or 200, text, content_type or "").partition(": ")[2]
    return f"the response is {what}, not text/event-stream" + (f": {summary}" if summary else "")


def iter_chat(
    chunks: Iterable[Bytes],
    format: Format = "auto",
    *,
    status: int | None = None,
    content_type: str | None = None,
) -> Iterator[ChatEvent]:
    """Chat events from any iterable of byte chunks (``httpx.Response.iter_bytes()``...).

    Always ends with exactly one ``Finish``. An exception raised by ``chunks`` (a transport
    error such as ``httpx.ReadError``) ends the answer as ``truncated``, naming the exception
    in ``Finish.detail``; it is not re-raised, so the text that arrived is never lost to it.

    Pass the response's ``status`` and ``content_type`` (``resp.status_code``,
    ``resp.headers.get("content-type")``): a non-2xx status or a body that is not
    ``text/event-stream`` then ends as ``error`` with the provider's own message (``HTTP 401
    Unauthorized: Invalid API key``; an HTML page's title, never its markup), reading at most
    64 KiB of the body, instead of ``truncated``."""
    cs = ChatStream(format)
    it = iter(chunks)
    if _not_a_stream(status, content_type):
        body = b""
        with contextlib.suppress(Exception):
            for chunk in it:
                body += bytes(chunk)
                if len(body) >= ERROR_BODY_MAX:
                    break
        yield from cs.fail("http", _response_failure(status, content_type, body), status)
        return
    while True:
        try:
            chunk = next(it)
        except StopIteration:
            break
        except Exception as exc:
            yield from cs.close(broken=exc)
            return
        yield from cs.feed(chunk)
        if cs.done:
            return
    yield from cs.close()


async def aiter_chat(
    chunks: AsyncIterable[Bytes],
    format: Format = "auto",
    *,
    status: int | None = None,
    content_type: str | None = None,
) -> AsyncIterator[ChatEvent]:
    """``iter_chat`` for async iterators (httpx ``aiter_bytes()``, aiohttp ``iter_chunked()``),
    with the same rules: exactly one ``Finish``; a transport exception ends it ``truncated``;
    ``status``/``content_type`` turn an error response into ``error`` with its message."""
    cs = ChatStream(format)
    it = aiter(chunks)
    if _not_a_stream(status, content_type):
        body = b""
        with contextlib.suppress(Exception):
            async for chunk in it:
                body += bytes(chunk)
                if len(body) >= ERROR_BODY_MAX:
                    break
        for ev in cs.fail("http", _response_failure(status, content_type, body), status):
            yield ev
        return
    while True:
        try:
            chunk = await anext(it)
        except StopAsyncIteration:
            break
        except Exception as exc:
            for ev in cs.close(broken=exc):
                yield ev
            return
        for ev in cs.feed(chunk):
            yield ev
        if cs.done:
            return
    for ev in cs.close():
        yield ev
