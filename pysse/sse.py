"""Bytes -> SSE events: a sans-IO ``text/event-stream`` parser (WHATWG HTML, 9.2.6).

The parser never sees a socket. ``feed()`` takes whatever bytes the network delivered, cut
anywhere, and returns the events those bytes completed; ``close()`` ends the stream.

Why it is shaped the way it is:

* **Chunk boundaries are meaningless.** The only state carried between feeds is the partial
  line after the last line end (``_parts``), the fields of the event being built, and one flag for
  a CR that ended the previous chunk (its LF may open the next one: one line end, not two).
  Every chunking of a stream therefore gives identical events.
* **Linear time.** Each chunk is searched once, by C code (``bytes.rfind``/``split``); the
  partial line is kept as the list of chunks it arrived in, joined once, and is scanned for
  nothing, because a line end can only be in the new chunk. A 4 MiB line fed 64 bytes at a time
  costs 64 Ki appends, not 64 Ki rescans.
* **UTF-8 is decoded per complete line.** A multi-byte character split across chunks is never
  decoded half-way. We decode a run of complete lines with one ``bytes.decode`` call: because
  the line terminators are ASCII, a malformed sequence can never swallow one, so this is exactly
  per-line decoding, and it lets C do the work.
* **Bounded memory.** A line longer than ``max_line_bytes`` raises before it is buffered past
  the cap, whatever the chunking; so does an event whose data lines add up to more than
  ``max_event_bytes`` (counted in decoded characters, which never exceed the bytes).
* **``retry:`` of any length** sets the reconnection time, never raises and never depends on
  chunking (``pysse.sse_retry``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from .errors import EventTooLargeError, LineTooLongError, SSEProtocolError
from .sse_event import SSEEvent
from .sse_retry import RETRY_DIGITS, RETRY_SATURATED, retry_value

__all__ = ["RETRY_DIGITS", "RETRY_SATURATED", "Bytes", "SSEEvent", "SSEParser"]

Bytes = bytes | bytearray | memoryview

_BOM = b"\xef\xbb\xbf"
_BIG = 1 << 15  # a pending line this long is decoded on its own (see _feed)
_LINE_END = re.compile(rb"\r\n|\r|\n")


class SSEParser:
    """Incremental ``text/event-stream`` parser: ``feed(bytes) -> [SSEEvent]``.

    ``errors="replace"`` (the spec's behaviour) turns invalid UTF-8 into U+FFFD;
    ``errors="strict"`` raises :class:`SSEProtocolError` naming the byte offset instead.
    ``on_comment`` is called with the text of each ``:`` comment line (keep-alives), for tools
    that want to show them; the events themselves never include comments.

    ``retry`` is the reconnection time (ms) from the latest valid ``retry:`` field, None
    before one: exact whatever its length, up to :data:`RETRY_DIGITS` significant digits,
    then :data:`RETRY_SATURATED`. Cap it where you wait it.
    """

    __slots__ = (
        "_base",
        "_closed",
        "_data",
        "_data_size",
        "_errors",
        "_event_type",
        "_failed",
        "_id_buf",
        "_max",
        "_max_event",
        "_on_comment",
        "_parts",
        "_pending",
        "_skip_lf",
        "_slow",
        "_start",
        "incomplete",
        "last_event_id",
        "retry",
    )

    def __init__(
        self,
        max_line_bytes: int = 1 << 20,
        errors: Literal["replace", "strict"] = "replace",
        on_comment: Callable[[str], object] | None = None,
        max_event_bytes: int = 4 << 20,
    ) -> None:
        if errors not in ("replace", "strict"):
            raise ValueError(f"errors must be 'replace' or 'strict', not {errors!r}")
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be at least 1")
        if max_event_bytes < 1:
            raise ValueError("max_event_bytes must be at least 1")
        self._max = max_line_bytes
        self._max_event = max_event_bytes
        self._errors = errors
        self._on_comment = on_comment
        # The partial line after the last line end, as the chunks it arrived in: joined once,
        # when its line end arrives (appending to one growing buffer would copy it again and
        # again as it reallocates).
        self._parts: list[bytes] = []
        self._pending = 0  # total length of _parts
        self._base = 0  # stream offset of the first pending byte
        self._data: list[str] = []  # data lines of the event being built
        self._data_size = 0  # their length, each counted with one separator
        self._event_type = ""
        self._id_buf = ""
        self._start = True  # no byte seen yet: a BOM may still come (possibly split)
        self._skip_lf = False  # the previous chunk ended with CR
        self._slow = True  # _start or _skip_lf or _closed or _failed: take the careful path
        self._closed = False
        self._failed: SSEProtocolError | None = None
        self.last_event_id = ""
        self.retry: int | None = None
        self.incomplete = False

    # -- public API ---------------------------------------------------------------------------

    def feed(self, chunk: Bytes) -> list[SSEEvent]:
        """Add bytes; return the events they completed (often none)."""
        # The fast path: a chunk in the middle of a line. Small chunks of a long line are the
        # case where per-call overhead is all there is, so it does as little as possible.
        # (``find`` is measurably cheaper than ``in`` here, and this line is the whole cost.)
        if (
            type(chunk) is bytes
            and chunk.find(b"\n") < 0
            and chunk.find(b"\r") < 0
            and not self._slow
            and self._pending + len(chunk) <= self._max
        ):
            self._parts.append(chunk)
            self._pending += len(chunk)
            return []
        return self._feed(chunk)

    @property
    def bytes_fed(self) -> int:
        """How many bytes have been fed so far (a BOM included)."""
        return self._base + self._pending

    def close(self) -> list[SSEEvent]:
        """End of stream. An unterminated event is discarded (and ``incomplete`` set).

        Returns a list for symmetry with ``feed``; per the spec it is always empty, because
        only a blank line dispatches.
        """
        if self._failed is not None:
            raise self._failed
        if self._closed:
            return []
        partial = b"".join(self._parts)
        if self._start and _BOM.startswith(partial):
            partial = b""  # only (part of) a BOM arrived
        self.incomplete = bool(self._data) or bool(partial and not partial.startswith(b":"))
        self._base += self._pending
        self._parts.clear()
        self._pending = 0
        self._data = []
        self._data_size = 0
        self._event_type = ""
        self._closed = self._slow = True
        return []

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def pending(self) -> bool:
        """True while part of an event (or of a line) is waiting for more bytes."""
        return bool(self._pending) or bool(self._data)

    # -- internals ----------------------------------------------------------------------------

    def _feed(self, chunk: Bytes) -> list[SSEEvent]:
        """``feed`` for every chunk that holds a line end, or needs the careful path."""
        if type(chunk) is not bytes:
            chunk = bytes(chunk)
        if self._slow:
            chunk = self._prologue(chunk)
        if not chunk:
            return []
        parts = self._parts
        last = chunk.rfind(b"\n")
        end = last  # where the last complete line's content ends
        has_cr = b"\r" in chunk
        if has_cr:
            cr = chunk.rfind(b"\r")
            if cr > last:
                last = end = cr  # CR ends the last complete line
                if cr == len(chunk) - 1:
                    # The chunk ends with it: if the next one opens with LF, that LF belongs
                    # to this CR (one line end, not two).
                    self._skip_lf = self._slow = True
            elif cr == last - 1:
                end = cr  # CRLF
        if last < 0:
            n = self._pending + len(chunk)
            if n > self._max:
                parts.append(chunk)
                self._pending = n
                self._overflow([])
            parts.append(chunk)
            self._pending = n
            return []
        block_pos = self._base
        chunk_pos = block_pos + self._pending
        events: list[SSEEvent] = []
        if parts and self._pending >= _BIG and not has_cr:
            # A long pending line: decode it on its own, straight from the joined bytes,
            # so a multi-megabyte data line is not copied again by split() and slicing.
            first = chunk.find(b"\n")
            parts.append(chunk[:first])
            line = b"".join(parts)
            parts.clear()
            self._pending = 0
            self._base = chunk_pos + first + 1
            self._long_line(line, block_pos)
            if first == last:
                return self._tail(chunk, last, events)
            chunk = chunk[first + 1 :]
            last -= first + 1
            end -= first + 1
            block_pos = chunk_pos = self._base
        if parts:
            parts.append(chunk[:end])
            block = b"".join(parts)
            parts.clear()
            self._pending = 0
        else:
            block = chunk[:end]
        self._base = chunk_pos + last + 1
        if has_cr or len(block) > self._max:
            self._lines(block, block_pos, events)
        else:
            try:
                text = block.decode("utf-8", self._errors)
            except UnicodeDecodeError:
                self._lines(block, block_pos, events)  # strict mode: raises with the offset
            else:
                self._process(text.split("\n"), events)
        if last + 1 < len(chunk):
            return self._tail(chunk, last, events)
        return events

    def _long_line(self, line: bytes, pos: int) -> None:
        """One complete line of at least _BIG bytes (no CR in it)."""
        if len(line) > self._max:
            self._fail_overflow(len(line), pos, [])
        skip = 6 if line.startswith(b"data: ") else 5 if line.startswith(b"data:") else -1
        try:
            if skip < 0:
                self._process([line.decode("utf-8", self._errors)], [])
            else:
                value = str(memoryview(line)[skip:], "utf-8", self._errors)
                self._data.append(value)
                self._data_size += len(value) + 1
                if self._data_size - 1 > self._max_event:
                    self._fail_event(self._data_size - 1, [])
        except UnicodeDecodeError:
            self._lines(line, pos, [])  # strict mode: raises with the offset

    def _tail(self, chunk: bytes, last: int, events: list[SSEEvent]) -> list[SSEEvent]:
        """Keep the bytes after the last line end as the start of the next line."""
        n = len(chunk) - last - 1
        if n:
            self._parts.append(chunk[last + 1 :])
            self._pending = n
            if n > self._max:
                self._overflow(events)
        return events

    def _prologue(self, chunk: bytes) -> bytes:
        """The rare cases: stream start (BOM), a CR that ended the last chunk, closed/failed."""
        if self._failed is not None:
            raise self._failed
        if self._closed:
            raise SSEProtocolError("feed() after close()")
        if self._start:
            parts = self._parts
            head = b"".join(parts) + chunk
            if len(head) < len(_BOM) and _BOM.startswith(head):
                parts.append(chunk)  # maybe a BOM, split: wait for its remaining bytes
                self._pending += len(chunk)
                return b""
            parts.clear()
            self._pending = 0
            self._start = False
            chunk = head
            if chunk.startswith(_BOM):
                chunk = chunk[len(_BOM) :]
                self._base += len(_BOM)
        if self._skip_lf and chunk:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
                self._base += 1
        self._slow = self._start or self._skip_lf
        return chunk

    def _overflow(self, events: list[SSEEvent]) -> None:
        """The pending (unterminated) line is over the cap."""
        self._fail_overflow(self._pending, self._base, events)

    def _fail_event(self, size: int, events: list[SSEEvent]) -> None:
        self._fail(
            EventTooLargeError(
                f"event data larger than max_event_bytes={self._max_event} (at least {size} "
                f"characters before byte offset {self._base + self._pending}): a runaway or "
                "hostile stream",
                offset=None,
                events=events,
            )
        )

    def _fail_overflow(self, size: int, offset: int, events: list[SSEEvent]) -> None:
        self._fail(
            LineTooLongError(
                f"line longer than max_line_bytes={self._max} (at least {size} bytes without a "
                f"line end, from byte offset {offset}): not an event stream, or a broken server",
                offset=offset,
                events=events,
            )
        )

    def _fail(self, err: SSEProtocolError) -> None:
        self._failed = err
        self._slow = True
        self._parts.clear()
        self._base += self._pending
        self._pending = 0
        raise err

    def _lines(self, raw: bytes, block_pos: int, events: list[SSEEvent]) -> list[SSEEvent]:
        """Process ``raw`` (complete lines without the final terminator) on the careful path:
        CR line ends, lines over the cap, invalid UTF-8 in strict mode. ``block_pos`` is the
        stream offset of ``raw[0]``, used only for error messages."""
        if len(raw) > self._max:
            # Only a block longer than the cap can hold a line longer than the cap.
            start = 0
            prev_end = -1  # where the previous line's terminator starts
            for m in _LINE_END.finditer(raw + b"\n"):
                if m.start() - start > self._max:
                    if prev_end >= 0:
                        self._lines(raw[:prev_end], block_pos, events)
                    self._fail_overflow(m.start() - start, block_pos + start, events)
                start = m.end()
                prev_end = m.start()
        block = raw
        if b"\r" in block:
            block = block.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        try:
            text = block.decode("utf-8", self._errors)
        except UnicodeDecodeError as exc:
            self._decode_error(raw, block_pos, exc, events)
        return self._process(text.split("\n"), events)

    def _decode_error(
        self, raw: bytes, block_pos: int, exc: UnicodeDecodeError, events: list[SSEEvent]
    ) -> None:
        """Strict mode: raise with the raw stream offset and the events completed before it."""
        # ``exc`` positions refer to the CRLF-folded block; decode the raw bytes again to get
        # the position in stream bytes (terminators are ASCII, so the bad byte is the same).
        try:
            raw.decode("utf-8", "strict")
        except UnicodeDecodeError as raw_exc:
            exc = raw_exc
        line_start = max(raw.rfind(b"\n", 0, exc.start), raw.rfind(b"\r", 0, exc.start)) + 1
        if line_start:
            good = raw[: line_start - 1]
            if raw[line_start - 1 : line_start] == b"\n" and good.endswith(b"\r"):
                good = good[:-1]
            good = good.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            self._process(good.decode().split("\n"), events)
        offset = block_pos + exc.start
        self._fail(
            SSEProtocolError(
                f"invalid UTF-8 at byte offset {offset}: {exc.reason}",
                offset=offset,
                events=events,
            )
        )

    def _process(self, lines: list[str], events: list[SSEEvent]) -> list[SSEEvent]:
        """Apply the field rules to decoded lines, appending dispatched events to ``events``.
        This loop is the parser's hot path."""
        data = self._data
        held = len(data)  # lines already counted in _data_size
        etype = self._event_type
        for line in lines:
            if line[:6] == "data: ":
                data.append(line[6:])
                continue
            if not line:
                # Blank line: dispatch. The spec sets the last event ID even with no data.
                self.last_event_id = self._id_buf
                if data:
                    value = data[0] if len(data) == 1 else "\n".join(data)
                    if len(value) > self._max_event:
                        self._fail_event(len(value), events)
                    events.append(SSEEvent(etype or "message", value, self._id_buf))
                    data = []
                    held = self._data_size = 0
                etype = ""
                continue
            colon = line.find(":")
            if colon == 0:
                if self._on_comment is not None:
                    value = line[1:]
                    self._on_comment(value[1:] if value[:1] == " " else value)
                continue
            if colon < 0:
                field, value = line, ""
            else:
                field = line[:colon]
                value = (
                    line[colon + 2 :] if line[colon + 1 : colon + 2] == " " else line[colon + 1 :]
                )
            if field == "data":
                data.append(value)
            elif field == "event":
                etype = value
            elif field == "id":
                if "\x00" not in value:
                    self._id_buf = value
            elif field == "retry" and value.isascii() and value.isdigit():
                self.retry = retry_value(value)  # any length, never raises
            # any other field name is ignored, as the spec requires
        if len(data) > held:  # the event still being built grew: keep its size bounded
            self._data_size += sum(map(len, data[held:])) + len(data) - held
            if self._data_size - 1 > self._max_event:
                self._data = data
                self._fail_event(self._data_size - 1, events)
        self._data = data
        self._event_type = etype
        return events
