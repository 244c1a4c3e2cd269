"""Look inside a stream: raw chunks, the SSE events they made, the chat events those became,
timing, and replay at any chunk size. Pure Python; the page's inspector panel and the CLI
(``python -m pysse dump/replay``) both use it.

It works from a *recording* (the raw chunks and their arrival times), which the page keeps for
every answer anyway (Save needs the exact bytes). Nothing here runs while an answer streams:
the analysis is done when someone opens the inspector, so a closed inspector costs nothing.
"""

from __future__ import annotations

import codecs
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from .chat import ChatStream
from .events import ChatEvent, TextDelta, event_to_dict
from .providers import Format
from .sse import SSEEvent
from .steps import run_steps  # (public here too: the inspector's *_steps are run by it)

__all__ = [
    "ChunkRow",
    "EventRow",
    "Report",
    "analyze",
    "check_sizes",
    "compare_chunk_sizes",
    "compare_steps",
    "cut",
    "replay",
    "replay_refusal",
    "replay_steps",
    "run_steps",
    "show_text",
    "timing_summary",
]

_VISIBLE = {"\r": "␍", "\n": "␊\n", "\t": "␉", "\x00": "␀"}


def show_text(text: str) -> str:
    """Make line ends and control characters visible (CR as ␍, LF as ␊ then a real break)."""
    return "".join(
        _VISIBLE.get(c, c) if (c in _VISIBLE or ord(c) < 32) and c != " " else c for c in text
    )


@dataclass
class ChunkRow:
    index: int
    t_ms: float
    size: int
    text: str  # decoded across chunk boundaries; line ends made visible
    invalid: int  # U+FFFD produced by invalid UTF-8 in this chunk


@dataclass
class EventRow:
    index: int
    event: str
    data: str
    id: str
    chat: list[dict[str, Any]]


@dataclass
class Report:
    chunks: list[ChunkRow] = field(default_factory=list)
    events: list[EventRow] = field(default_factory=list)
    comments: int = 0
    timing: dict[str, Any] = field(default_factory=dict)
    outcome: str = ""
    detail: str = ""
    text: str = ""
    format: str | None = None
    marks: dict[int, str] = field(default_factory=dict)  # chunk index -> a resume point


def analyze(
    chunks: list[tuple[float, bytes]], fmt: Format = "auto", marks: dict[int, str] | None = None
) -> Report:
    """Replay a recording through a fresh ChatStream, keeping every intermediate step.
    ``marks``: notes shown before a chunk in the raw view (where an answer was resumed)."""
    report = Report()
    report.marks = dict(marks or {})
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    # A U+FFFD in the input itself is not an error; count only the ones decoding adds.

    def observe(ev: SSEEvent, chat: list[ChatEvent]) -> None:
        report.events.append(
            EventRow(len(report.events), ev.event, ev.data, ev.id, [event_to_dict(c) for c in chat])
        )

    cs = ChatStream(fmt, observer=observe, on_comment=lambda _c: _count_comment(report))
    first_text: float | None = None
    for i, (t, data) in enumerate(chunks):
        text = decoder.decode(data)
        invalid = text.count("\ufffd") - data.count(b"\xef\xbf\xbd")
        report.chunks.append(ChunkRow(i, t, len(data), show_text(text), max(invalid, 0)))
        events = cs.feed(data)
        if first_text is None and any(isinstance(e, TextDelta) for e in events):
            first_text = t
    cs.close()
    report.timing = timing_summary(chunks, first_text, chunks[-1][0] if chunks else 0.0, cs)
    report.outcome = str(cs.outcome)
    report.detail = cs.finish_detail or (cs.error.message if cs.error else "")
    report.text = cs.text
    report.format = cs.detected_format
    return report


def timing_summary(
    chunks: list[tuple[float, bytes]],
    first_text_ms: float | None,
    total_ms: float,
    cs: ChatStream,
) -> dict[str, Any]:
    """The one timing summary (the inspector, the page's stats, the CLI): time to first byte
    and first text, total, bytes, chunks, SSE events and their rate."""
    return {
        "ttfb_ms": chunks[0][0] if chunks else None,
        "ttft_ms": first_text_ms,
        "total_ms": total_ms,
        "bytes": sum(len(c) for _, c in chunks),
        "chunks": len(chunks),
        "sse_events": cs.sse_events,
        "events_per_s": (cs.sse_events / (total_ms / 1000)) if total_ms > 0 else None,
    }


def _count_comment(report: Report) -> None:
    report.comments += 1


def cut(data: bytes, chunk: int) -> list[bytes]:
    """``data`` in pieces of ``chunk`` bytes (0: one piece), as a replay feeds it."""
    size = chunk if chunk > 0 else max(len(data), 1)
    return [data[i : i + size] for i in range(0, len(data), size)]


# What a replay may cost in a page: beyond these it would freeze the tab or exhaust its memory
# (every chunk of a replay is recorded, as a live answer's are). The CLI has no such limits.
REPLAY_MAX_BYTES = 16 << 20
REPLAY_MAX_CHUNKS = 1 << 18
FULL_CHECK_BYTES = 256 << 10  # the 20- and 1-byte comparisons only up to this size
STEP = 2048  # feeds between the points where a stepwise replay lets the page breathe


def replay_refusal(size: int, chunk: int) -> str | None:
    """Why replaying ``size`` bytes at ``chunk`` bytes a piece is too much for a page, with
    what to do instead; None when it is fine."""
    if size > REPLAY_MAX_BYTES:
        return (
            f"this recording is {size / (1 << 20):,.1f} MiB; the page replays at most "
            f"{REPLAY_MAX_BYTES >> 20} MiB (use `python -m pysse replay FILE` for bigger ones)"
        )
    pieces = -(-size // chunk) if chunk > 0 else 1
    if pieces > REPLAY_MAX_CHUNKS:
        smallest = -(-size // REPLAY_MAX_CHUNKS)
        return (
            f"replaying {size:,} bytes in {chunk}-byte chunks makes {pieces:,} chunks; the page "
            f"replays at most {REPLAY_MAX_CHUNKS:,}: pick chunks of at least {smallest} bytes, "
            f"or use `python -m pysse replay FILE --chunk {chunk}`"
        )
    return None


def check_sizes(size: int) -> tuple[int, ...]:
    """The chunk sizes the replay check compares for a recording of ``size`` bytes."""
    return (0, 1000, 60, 20, 1) if size <= FULL_CHECK_BYTES else (0, 1000, 60)


def replay_steps(
    data: bytes, chunk: int, fmt: Format = "auto"
) -> Generator[None, None, ChatStream]:
    """``replay`` that yields every ``STEP`` feeds, so a page can let other work run."""
    cs = ChatStream(fmt)
    size = chunk if chunk > 0 else max(len(data), 1)
    for n, i in enumerate(range(0, len(data), size)):
        cs.feed(data[i : i + size])
        if n % STEP == STEP - 1:
            yield
    cs.close()
    return cs


def replay(data: bytes, chunk: int, fmt: Format = "auto") -> ChatStream:
    """Feed ``data`` ``chunk`` bytes at a time (0: all at once); return the finished stream."""
    return run_steps(replay_steps(data, chunk, fmt))


def compare_steps(
    data: bytes, sizes: tuple[int, ...] = (0, 1000, 60, 20, 1), fmt: Format = "auto"
) -> Generator[None, None, list[dict[str, Any]]]:
    """Replay at each size and say whether text and outcome match the whole-buffer replay,
    and where the text first differs if not (a parser that depends on chunking). Stepwise:
    see ``replay_steps``."""
    ref = yield from replay_steps(data, 0, fmt)
    rows = []
    for size in sizes:
        cs = ref if size == 0 else (yield from replay_steps(data, size, fmt))
        same = cs.text == ref.text and cs.outcome == ref.outcome
        row: dict[str, Any] = {
            "chunk": size or "whole",
            "same": same,
            "chars": len(cs.text),
            "outcome": str(cs.outcome),
        }
        if not same:
            row["first_difference_at"] = next(
                (i for i, (a, b) in enumerate(zip(cs.text, ref.text, strict=False)) if a != b),
                min(len(cs.text), len(ref.text)),
            )
        rows.append(row)
    return rows


def compare_chunk_sizes(
    data: bytes, sizes: tuple[int, ...] = (0, 1000, 60, 20, 1), fmt: Format = "auto"
) -> list[dict[str, Any]]:
    """``compare_steps`` at once."""
    return run_steps(compare_steps(data, sizes, fmt))
