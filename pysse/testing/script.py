"""A scripted HTTP answer: which bytes a server sends, cut how, paced how, and how it ends.

A :class:`Script` is a small immutable value. A constructor says *what* is sent (a recorded
``.sse`` file, an answer in one of the four provider formats, a provider-shaped HTTP error,
keep-alive comments), and each method returns a new script that changes *how*, so a test
reads as a sentence::

    Script.from_file("saved.sse").chunked(1).paced(0.005).drop(after_byte=400)
    Script.answer("Hello!", "anthropic").stall(30, after_event=3)
    Script.http_error(429, "Slow down", retry_after=7)

The methods commute: ``.drop(after_event=3).chunked(1)`` is the same script as
``.chunked(1).drop(after_event=3)``, because the writes are worked out only when asked for
(:attr:`Script.writes`). A script knows nothing of sockets; :func:`pysse.testing.player.play`
performs it on a transport: the kit's :class:`~pysse.testing.server.ScriptServer`, or any ASGI
server (the demo relay plays its scenarios this way).

Pure and deterministic: the same script (seed included) always gives the same writes.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import pairwise
from os import PathLike
from pathlib import Path
from typing import Literal, NamedTuple

from ..chat import ChatStream
from ..events import Citation
from ..providers import Format, ProviderName, ToolUse, encode_answer, get_provider

__all__ = ["SSE_HEADERS", "Chunking", "Ending", "Script", "ToolUse", "Write"]

Chunking = Literal["whole", "event", "random"] | int
"""How the body is cut into writes: ``"whole"`` (one write), ``"event"`` (one write per
blank-line-terminated block, as most servers send), ``"random"`` (seeded sizes, see
:meth:`Script.chunked`), or every N bytes (``1``: one byte per write)."""

Ending = Literal["close", "drop"]
"""``"close"``: the HTTP body ends properly (the zero-length chunk is sent). ``"drop"``: the
connection closes without it, so the client sees a broken body, as when a proxy times out or
a server dies."""

SSE_HEADERS: tuple[tuple[str, str], ...] = (
    ("content-type", "text/event-stream; charset=utf-8"),
    ("cache-control", "no-cache"),
    ("x-accel-buffering", "no"),
)

_EOL = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"


class Write(NamedTuple):
    """One step of a script: wait ``delay`` seconds, then send ``data`` as its own HTTP chunk
    (``b""``: only the wait, e.g. a stall at the end). ``delay`` may be ``math.inf``."""

    delay: float
    data: bytes


def _blocks(body: bytes) -> list[tuple[int, bool]]:
    """Each blank-line-terminated block of ``body``: (offset just past its blank line, whether
    it dispatches an event, i.e. has a ``data`` field). Comment-only blocks (keep-alives) are
    blocks but not events."""
    out: list[tuple[int, bool]] = []
    start, has_lines, has_data = 0, False, False
    for m in _EOL.finditer(body):
        line = body[start : m.start()]
        if start == 0 and line.startswith(_BOM):
            line = line[len(_BOM) :]
        if not line:
            if has_lines:
                out.append((m.end(), has_data))
            has_lines = has_data = False
        else:
            has_lines = True
            if line.startswith(b"data") and line[4:5] in (b"", b":"):
                has_data = True
        start = m.end()
    return out


def _words(text: str | Sequence[str]) -> list[str]:
    """A string cut into one delta per word (its spaces kept); deltas as they are."""
    return re.findall(r"\S+\s*|\s+", text) if isinstance(text, str) else list(text)


def _check_delay(name: str, seconds: float) -> float:
    if not (seconds >= 0):  # also refuses NaN
        raise ValueError(f"{name} must be >= 0 seconds, got {seconds!r}")
    return float(seconds)


@dataclass(frozen=True, repr=False)
class Script:
    """What a scripted server answers to one request. Build one with a constructor
    (:meth:`from_file`, :meth:`from_bytes`, :meth:`from_events`, :meth:`answer`,
    :meth:`http_error`, :meth:`keepalives`) and refine it with the methods below; the fields
    are the result, readable but rarely set by hand.

    The defaults: status 200, :data:`SSE_HEADERS`, one write per event, no delays, a clean end.
    """

    body: bytes = b""
    status: int = 200
    headers: tuple[tuple[str, str], ...] = SSE_HEADERS
    chunks: Chunking = "event"
    chunk_sizes: tuple[int, int] = (1, 64)  # the bounds of "random" chunking
    pace: tuple[float, float] = (0.0, 0.0)  # seconds before each write after the first
    first_byte: float = 0.0  # seconds between the headers and the first body byte
    headers_delay: float = 0.0  # seconds before the status line and headers ("slow headers")
    stop_at: int | None = None  # the body is sent up to this byte offset (None: all of it)
    ending: Ending = "close"
    stalls: tuple[tuple[int, float], ...] = ()  # (byte offset, seconds of silence there)
    seed: int = 0  # for "random" chunking and a pace range

    def __post_init__(self) -> None:
        if not 100 <= self.status <= 599:
            raise ValueError(f"status must be an HTTP status (100-599), got {self.status}")
        if isinstance(self.chunks, bool) or (isinstance(self.chunks, int) and self.chunks < 1):
            raise ValueError(f"chunks must be a size >= 1 byte, got {self.chunks!r}")
        if not isinstance(self.chunks, int) and self.chunks not in ("whole", "event", "random"):
            raise ValueError(
                f"chunks must be 'whole', 'event', 'random' or a size, got {self.chunks!r}"
            )
        lo, hi = self.chunk_sizes
        if not 1 <= lo <= hi:
            raise ValueError(f"chunk_sizes must be 1 <= low <= high, got {self.chunk_sizes}")
        lo_s, hi_s = (_check_delay("pace", s) for s in self.pace)
        if lo_s > hi_s:
            raise ValueError(f"pace must be (low, high) with low <= high, got {self.pace}")
        _check_delay("first_byte", self.first_byte)
        _check_delay("headers_delay", self.headers_delay)
        for _, seconds in self.stalls:
            _check_delay("a stall", seconds)
        if self.stop_at is not None and not 0 <= self.stop_at <= len(self.body):
            raise ValueError(f"stop_at must be within the body (0-{len(self.body)} bytes)")
        if self.ending not in ("close", "drop"):
            raise ValueError(f"ending must be 'close' or 'drop', got {self.ending!r}")

    def __repr__(self) -> str:
        parts = [f"{self.status}", f"{len(self.body):,} bytes", f"chunks={self.chunks!r}"]
        if self.pace != (0.0, 0.0):
            parts.append(f"pace={self.pace}")
        if self.stop_at is not None:
            parts.append(f"stop_at={self.stop_at}")
        if self.stalls:
            parts.append(f"stalls={self.stalls}")
        if self.headers_delay:
            parts.append(f"headers_delay={self.headers_delay}")
        parts.append(f"ending={self.ending!r}")
        return f"Script({', '.join(parts)})"

    # -- what is sent --------------------------------------------------------------------------

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> Script:
        """Exactly these bytes as an event stream (``text/event-stream``)."""
        if not isinstance(data, bytes | bytearray | memoryview):
            # bytes() would say "string argument without an encoding" for a str, and make
            # zero bytes of an int.
            hint = (
                f"{data[:20]!r}.encode() (UTF-8, as a stream is sent), or Script.from_events "
                "to encode events written as str"
                if isinstance(data, str)
                else "a recorded stream (Script.from_file) or Script.from_events"
            )
            raise TypeError(
                f"Script.from_bytes takes bytes, not {type(data).__name__}: pass {hint}"
            )
        return cls(body=bytes(data))

    @classmethod
    def from_file(cls, path: str | PathLike[str]) -> Script:
        """A recorded stream, byte for byte: e.g. a file saved with the page inspector's
        **Save .sse**, or ``curl -N ... > answer.sse``."""
        return cls(body=Path(path).read_bytes())

    @classmethod
    def from_events(cls, events: Iterable[bytes | str]) -> Script:
        """Events (each with its blank line), joined: e.g. ``encode_answer(...)``'s list."""
        return cls(body=b"".join(e.encode() if isinstance(e, str) else e for e in events))

    @classmethod
    def answer(
        cls,
        text: str | Sequence[str],
        format: ProviderName = "openai-chat",
        *,
        reasoning: str | Sequence[str] = (),
        tool_calls: Sequence[ToolUse] = (),
        citations: Sequence[Citation] = (),
        error_after: int | None = None,
        error_message: str = "The server had an error.",
        malformed_after: int | None = None,
        terminal: bool = True,
    ) -> Script:
        """An answer streamed in ``format`` by that format's own encoder, as the provider
        streams it (its official SDK reads it). ``text`` is cut into one delta per word (a
        list of strings is used as the deltas), and so is ``reasoning``: the model's
        reasoning before the text (Anthropic thinking, a Responses summary, Gemini
        thoughts, Chat ``reasoning_content``). ``tool_calls``: calls after the text,
        ``ToolUse("get_weather", {"city": "Lisbon"})``, their arguments streamed in
        fragments (Gemini sends each call whole). ``citations``: the sources the text cites
        (``Citation(url, title, text, start, end)``), in each format's own shape. Any other
        order: ``encode_parts``.

        ``error_after=K``: after K deltas, the provider's error event and nothing more.
        ``malformed_after=K``: after K deltas, a payload that is not JSON. ``terminal=False``:
        no terminal signal (``[DONE]``, ``message_stop``, ...), so a correct client ends the
        answer as ``truncated``."""
        deltas = _words(text)
        events = encode_answer(
            get_provider(format),
            deltas,
            reasoning=_words(reasoning),
            tool_calls=tool_calls,
            citations=citations,
            error_at=error_after,
            error_message=error_message,
            malformed_at=malformed_after,
            terminal=terminal,
        )
        return cls.from_events(events)

    @classmethod
    def http_error(
        cls,
        status: int,
        message: str = "The scripted server refused the request.",
        *,
        format: ProviderName = "openai-chat",
        retry_after: int | None = None,
    ) -> Script:
        """An HTTP error with the body ``format``'s provider sends (OpenAI's
        ``{"error": {...}}``, Anthropic's ``{"type": "error", ...}``, Gemini's ``code`` and
        ``status``), and ``Retry-After`` if given."""
        if status < 400:
            raise ValueError(f"an HTTP error status is >= 400, got {status}")
        headers: tuple[tuple[str, str], ...] = (("content-type", "application/json"),)
        if retry_after is not None:
            headers += (("retry-after", str(retry_after)),)
        body = get_provider(format).encode_http_error(status, message)
        return cls(body=body, status=status, headers=headers, chunks="whole")

    @classmethod
    def keepalives(cls, count: int, *, every: float = 0.0, comment: str = "keep-alive") -> Script:
        """Nothing but ``count`` keep-alive comments (``: keep-alive``), one per write,
        ``every`` seconds apart: a stream that is alive but never says anything."""
        if count < 0:
            raise ValueError(f"count must be >= 0, got {count}")
        return cls(body=f": {comment}\n\n".encode() * count).paced(every)

    # -- how it is sent ------------------------------------------------------------------------

    def chunked(
        self,
        size: Chunking,
        *,
        sizes: tuple[int, int] | None = None,
        seed: int | None = None,
    ) -> Script:
        """Cut the body into writes: ``"whole"``, ``"event"``, every ``size`` bytes, or
        ``"random"``: sizes drawn from ``sizes`` (default 1-64 bytes) with ``seed``. Each write
        goes out as its own HTTP chunk."""
        return replace(
            self,
            chunks=size,
            chunk_sizes=sizes or self.chunk_sizes,
            seed=self.seed if seed is None else seed,
        )

    def paced(
        self, seconds: float, up_to: float | None = None, *, seed: int | None = None
    ) -> Script:
        """Wait ``seconds`` before each write after the first (or a seeded random time between
        ``seconds`` and ``up_to``)."""
        return replace(
            self,
            pace=(seconds, seconds if up_to is None else up_to),
            seed=self.seed if seed is None else seed,
        )

    def first_byte_after(self, seconds: float) -> Script:
        """The headers at once, the first body byte ``seconds`` later."""
        return replace(self, first_byte=seconds)

    def headers_after(self, seconds: float) -> Script:
        """Slow headers: nothing at all (not even the status line) for ``seconds``."""
        return replace(self, headers_delay=seconds)

    def stall(
        self,
        seconds: float = math.inf,
        *,
        after_byte: int | None = None,
        after_event: int | None = None,
    ) -> Script:
        """Go silent for ``seconds`` (default: until the client gives up) after that byte or
        event (default: after the last byte, before the body ends), then carry on. Stalls
        add up."""
        at = len(self.body) if after_byte is None and after_event is None else None
        at = self._offset(after_byte, after_event) if at is None else at
        return replace(self, stalls=(*self.stalls, (at, _check_delay("a stall", seconds))))

    def drop(self, *, after_byte: int | None = None, after_event: int | None = None) -> Script:
        """Close the connection after that byte or event (default: after the whole body)
        without ending the HTTP body: the client sees a broken body, not a clean end.

        In a browser, a body stream that errors drops the chunks it had queued but the page
        had not read yet (the Streams standard clears the queue), so a drop right behind the
        last write can cost the page that tail. A line that goes quiet and then dies, as
        most do, is ``.stall(1, after_event=K).drop(after_event=K)``."""
        at = (
            None
            if after_byte is None and after_event is None
            else self._offset(after_byte, after_event)
        )
        return replace(self, stop_at=self.stop_at if at is None else at, ending="drop")

    def truncate(self, *, after_byte: int | None = None, after_event: int | None = None) -> Script:
        """End the HTTP body properly, but early: a server that stops without the answer's
        terminal signal (a correct client still calls that ``truncated``)."""
        return replace(self, stop_at=self._offset(after_byte, after_event), ending="close")

    def with_status(self, status: int) -> Script:
        return replace(self, status=status)

    def with_header(self, name: str, value: str | None) -> Script:
        """Set a response header (replacing one of the same name); ``None`` removes it."""
        kept = tuple((n, v) for n, v in self.headers if n.lower() != name.lower())
        return replace(self, headers=kept if value is None else (*kept, (name.lower(), value)))

    def content_type(self, value: str) -> Script:
        """Serve the body as ``value`` (e.g. ``text/html``: a relay URL pointing at the wrong
        thing)."""
        return self.with_header("content-type", value)

    # -- reading it ----------------------------------------------------------------------------

    @property
    def sent(self) -> bytes:
        """The body bytes the client receives (all of them unless dropped or truncated)."""
        return self.body if self.stop_at is None else self.body[: self.stop_at]

    @property
    def event_count(self) -> int:
        """How many events (blocks with ``data``) the whole body holds."""
        return sum(1 for _, dispatches in _blocks(self.body) if dispatches)

    @cached_property
    def writes(self) -> tuple[Write, ...]:
        """The timeline after the headers: each write's delay and bytes, stalls included."""
        data = self.sent
        end = len(data)
        stalls: dict[int, float] = {}
        for at, seconds in self.stalls:
            at = min(at, end)
            stalls[at] = stalls.get(at, 0.0) + seconds
        cuts = {c for c in (*self._cuts(data), *stalls) if 0 < c < end}
        bounds = [0, *sorted(cuts), end] if end else []
        pace = random.Random(f"{self.seed}:pace")
        out: list[Write] = []
        for i, (a, b) in enumerate(pairwise(bounds)):
            delay = self.first_byte if i == 0 else self._pace(pace)
            out.append(Write(delay + stalls.get(a, 0.0), data[a:b]))
        if end in stalls:  # after the last byte, before the body ends
            out.append(Write(stalls[end], b""))
        return tuple(out)

    @property
    def duration(self) -> float:
        """Seconds from the request to the end of the body (``inf`` with an endless stall)."""
        return self.headers_delay + sum(w.delay for w in self.writes)

    def response_headers(self) -> list[tuple[str, str]]:
        """The headers sent: the script's, plus ``content-length`` when the body goes out in
        one piece and ends cleanly (an error body, as servers send it); otherwise the body is
        chunked, one HTTP chunk per write."""
        headers = list(self.headers)
        names = {n.lower() for n, _ in headers}
        if (
            self.ending == "close"
            and len([w for w in self.writes if w.data]) <= 1
            and not {"content-length", "transfer-encoding"} & names
        ):
            headers.append(("content-length", str(len(self.sent))))
        return headers

    def chat(self, format: Format = "auto") -> ChatStream:
        """What a correct client makes of the body that is sent: a closed ``ChatStream`` with
        its ``text``, ``outcome``, ``error``... (``truncated`` if the connection drops before
        the terminal signal). Meaningful for a 200 event stream."""
        cs = ChatStream(format)
        cs.feed(self.sent)
        cs.close(broken=ConnectionError("connection dropped") if self.ending == "drop" else None)
        return cs

    # -- internals -----------------------------------------------------------------------------

    def _offset(self, after_byte: int | None, after_event: int | None) -> int:
        if (after_byte is None) == (after_event is None):
            raise ValueError("give exactly one of after_byte= or after_event=")
        if after_byte is not None:
            if not 0 <= after_byte <= len(self.body):
                size = len(self.body)
                raise ValueError(f"after_byte={after_byte} is outside the {size}-byte body")
            return after_byte
        assert after_event is not None
        if after_event == 0:
            return 0
        ends = [at for at, dispatches in _blocks(self.body) if dispatches]
        if not 0 < after_event <= len(ends):
            raise ValueError(f"after_event={after_event}, but the body has {len(ends)} events")
        return ends[after_event - 1]

    def _cuts(self, data: bytes) -> list[int]:
        if self.chunks == "whole":
            return []
        if self.chunks == "event":
            return [at for at, _ in _blocks(data)]
        if self.chunks == "random":
            rnd, lo, hi = random.Random(f"{self.seed}:cuts"), *self.chunk_sizes
            cuts, at = [], 0
            while at < len(data):
                at += rnd.randint(lo, hi)
                cuts.append(at)
            return cuts
        return list(range(self.chunks, len(data), self.chunks))

    def _pace(self, rnd: random.Random) -> float:
        lo, hi = self.pace
        return lo if lo == hi else rnd.uniform(lo, hi)
