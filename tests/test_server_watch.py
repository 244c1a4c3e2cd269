"""The relay's content watch (``pysse.server.watch``): at any chunking and with every SSE line
ending, it flags exactly the chunks that complete an event carrying data that is not a
keep-alive, and it keeps no text: its state stays a few bytes through a megabyte line."""

from __future__ import annotations

import itertools
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from pysse.server.watch import ContentWatch

EOLS = [b"\n", b"\r\n", b"\r"]
KINDS = ["content", "ping", "comment", "empty-data", "named-content"]


def serialise(kind: str, eol: bytes, size: int) -> tuple[bytes, bool]:
    """One event (or comment) as bytes, and whether it is content."""
    payload = b'{"choices":[{"delta":{"content":"' + b"x" * size + b'"}}]}'
    lines = {
        "content": [b"data: " + payload],
        "named-content": [b"event: message_delta", b"data:" + payload, b"id: 7"],
        "ping": [b"event: ping", b'data: {"type": "ping"}'],
        "comment": [b": keep-alive " + b"y" * size],
        "empty-data": [b"data:", b"data: "],
    }[kind]
    return b"".join(line + eol for line in lines) + eol, kind in ("content", "named-content")


@st.composite
def streams(draw: st.DrawFn) -> tuple[bytes, list[int], list[int]]:
    """A stream, the offsets of the bytes that complete its content events, and cut points."""
    data = b""
    completions = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(KINDS))
        eol = draw(st.sampled_from(EOLS))
        raw, content = serialise(kind, eol, draw(st.integers(0, 200)))
        data += raw
        if content:
            completions.append(len(data) - len(eol))  # the blank line's first byte
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, len(data) - 1)), max_size=30))))
    return data, completions, cuts


@settings(max_examples=300, deadline=None)
@given(streams())
def test_content_is_flagged_where_its_event_completes_at_any_chunking(
    case: tuple[bytes, list[int], list[int]],
) -> None:
    data, completions, cuts = case
    watch = ContentWatch()
    bounds = [0, *cuts, len(data)]
    for start, end in itertools.pairwise(bounds):
        if start == end:
            continue
        expected = any(start <= c < end for c in completions)
        assert watch.feed(data[start:end]) is expected, (start, end, data[start:end])


def test_byte_by_byte_each_content_event_is_flagged_once() -> None:
    data = b""
    for kind in KINDS * 3:
        for eol in EOLS:
            data += serialise(kind, eol, 5)[0]
    watch = ContentWatch()
    flagged = sum(watch.feed(data[i : i + 1]) for i in range(len(data)))
    assert flagged == 2 * 3 * 3  # two content kinds, three rounds, three line endings


def test_the_watch_keeps_no_text_through_a_megabyte_line() -> None:
    watch = ContentWatch()
    watch.feed(b"data: ")
    for _ in range(1024):
        assert not watch.feed(b"z" * 1024)
    held = sum(sys.getsizeof(getattr(watch, name)) for name in ContentWatch.__slots__)
    assert held < 400
    assert watch.feed(b"\n\n")
