"""SSEParser against the WHATWG event-stream rules, at every chunking."""

from __future__ import annotations

import itertools
import sys
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pysse import EventTooLargeError, LineTooLongError, SSEEvent, SSEParser, SSEProtocolError
from pysse.sse import RETRY_DIGITS, RETRY_SATURATED

E = SSEEvent

# (stream, expected events, expected incomplete-at-EOF)
CORPUS: list[tuple[bytes, list[SSEEvent], bool]] = [
    (b"data: hello\n\n", [E("message", "hello")], False),
    (b"data:hello\n\n", [E("message", "hello")], False),
    (b"data:  two spaces\n\n", [E("message", " two spaces")], False),
    (b"data: a\ndata: b\n\n", [E("message", "a\nb")], False),
    (b"data: a\r\ndata: b\r\n\r\n", [E("message", "a\nb")], False),
    (b"data: a\rdata: b\r\r", [E("message", "a\nb")], False),
    (b"data: a\r\n\ndata: b\n\r\n", [E("message", "a"), E("message", "b")], False),
    # found by the fuzzer: a lone CR mid-chunk must not swallow the next chunk's leading LF
    (b"event: x\ndata: a\rfoo\nevent\n\n", [E("message", "a")], False),
    (b"data: a\rdata: b\n\n", [E("message", "a\nb")], False),
    (b"\xef\xbb\xbfdata: bom\n\n", [E("message", "bom")], False),
    (b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n", [], False),  # second BOM is content: unknown field
    (b"\xef\xbb\xbf\ndata: x\n\n", [E("message", "x")], False),
    (b": comment\ndata: x\n\n", [E("message", "x")], False),
    (b":\n\n", [], False),
    (b"event: add\ndata: 1\n\n", [E("add", "1")], False),
    (b"event: add\n\ndata: 1\n\n", [E("message", "1")], False),  # no data: type resets
    (b"event:\ndata: 1\n\n", [E("message", "1")], False),
    (b"Data: x\n\n", [], False),  # field names are case-sensitive
    (b"data\n\n", [E("message", "")], False),  # no colon: field with empty value
    (b"data\ndata\n\n", [E("message", "\n")], False),
    (b"data:\n\n", [E("message", "")], False),
    (b"foo: bar\ndata: x\n\n", [E("message", "x")], False),
    (b"id: 1\ndata: a\n\ndata: b\n\n", [E("message", "a", "1"), E("message", "b", "1")], False),
    (b"id: 1\ndata: a\n\nid\ndata: b\n\n", [E("message", "a", "1"), E("message", "b", "")], False),
    (
        b"id: 1\ndata: a\n\nid: x\x00y\ndata: b\n\n",
        [E("message", "a", "1"), E("message", "b", "1")],
        False,
    ),
    (b"id: 5\n\ndata: a\n\n", [E("message", "a", "5")], False),  # id set even with no data
    (b"data: a\n\ndata: unterminated\n", [E("message", "a")], True),
    (b"data: a\n\ndata: no line end", [E("message", "a")], True),
    (b"data: a\n\n: only a comment", [E("message", "a")], False),
    (b"data: [DONE]\n\n", [E("message", "[DONE]")], False),
    (
        b"data: \xe2\x80\x94 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x99\x82\n\n",
        [E("message", "— 日本 🙂")],
        False,
    ),
    (b"data: a\xe2\x80\xa8b\xc2\x85c\n\n", [E("message", "a\u2028b\x85c")], False),
    (b"data: bad \xff\xfe end\n\n", [E("message", "bad \ufffd\ufffd end")], False),
    (b"data: cut \xe2\x82\n\n", [E("message", "cut \ufffd")], False),
    (b"event: \xffx\ndata: y\n\n", [E("\ufffdx", "y")], False),
    (b"id: \xff\ndata: y\n\n", [E("message", "y", "\ufffd")], False),
    (b"data: nul\x00inside\n\n", [E("message", "nul\x00inside")], False),
    (b"<!doctype html>\n<html><body>nope</body></html>\n", [], False),
    (b"<!doctype html>\n<html><body>nope</body></html>", [], True),
    (b'{"error": {"message": "not sse"}}', [], True),
    (b"", [], False),
    (b"\xef\xbb", [], False),
]


def feed_all(chunks: list[bytes], **kw: object) -> tuple[list[SSEEvent], SSEParser]:
    p = SSEParser(**kw)  # type: ignore[arg-type]
    out: list[SSEEvent] = []
    for c in chunks:
        out += p.feed(c)
    out += p.close()
    return out, p


@pytest.mark.parametrize(("stream", "expected", "incomplete"), CORPUS)
def test_whole_buffer(stream: bytes, expected: list[SSEEvent], incomplete: bool) -> None:
    events, p = feed_all([stream])
    assert events == expected
    assert p.incomplete is incomplete


@pytest.mark.parametrize(("stream", "expected", "incomplete"), CORPUS)
def test_every_split_point_and_one_byte_chunks(
    stream: bytes, expected: list[SSEEvent], incomplete: bool
) -> None:
    for i in range(len(stream) + 1):
        for j in range(i, len(stream) + 1):
            events, p = feed_all([stream[:i], stream[i:j], stream[j:]])
            assert events == expected, (i, j)
            assert p.incomplete is incomplete
    events, p = feed_all([stream[k : k + 1] for k in range(len(stream))])
    assert events == expected
    assert p.incomplete is incomplete


def test_accepts_bytearray_and_memoryview() -> None:
    p = SSEParser()
    assert p.feed(bytearray(b"data: a\n")) == []
    assert p.feed(memoryview(b"xx\n\ndata: b\n\n")[2:]) == [E("message", "a"), E("message", "b")]


def test_retry_only_ascii_digits() -> None:
    p = SSEParser()
    p.feed(b"retry: 3000\n\n")
    assert p.retry == 3000
    for bad in (
        b"retry: 12a\n",
        b"retry: \n",
        b"retry: -5\n",
        b"retry: \xd9\xa3\n",
        b"retry: 1.5\n",
    ):
        p.feed(bad)
        assert p.retry == 3000, bad
    p.feed(b"retry:7\n")
    assert p.retry == 7


def feed_in(p: SSEParser, stream: bytes, cuts: list[int]) -> list[SSEEvent]:
    """Feed ``stream`` cut at these offsets (any order, repeats allowed)."""
    got: list[SSEEvent] = []
    bounds = sorted({min(max(c, 0), len(stream)) for c in cuts} | {0, len(stream)})
    for a, b in itertools.pairwise(bounds):
        got += p.feed(stream[a:b])
    return got


def expected_retry(digits: str) -> int:
    """What WHATWG says (the integer, whatever the length), saturated past int()'s digits."""
    significant = digits.lstrip("0")
    return int(significant or "0") if len(significant) <= RETRY_DIGITS else RETRY_SATURATED


def test_a_twenty_digit_retry_sets_that_integer_at_every_chunking() -> None:
    # Issue 24: 16 digits or more were ignored; eventsource-parser (parseInt) accepts them.
    stream = b"retry: 250\n\ndata: a\n\nretry: 99999999999999999999\ndata: b\n\n"
    for size in (1, 7, 4096, len(stream)):
        p = SSEParser()
        got = feed_in(p, stream, list(range(0, len(stream), size)))
        assert got == [E("message", "a"), E("message", "b")], size
        assert p.retry == 99999999999999999999


@pytest.mark.parametrize(
    ("digits", "want"),
    [
        ("9" * 15, 10**15 - 1),
        ("9" * 16, 10**16 - 1),
        ("0" * 5000 + "7", 7),  # leading zeros are not significant
        ("0" * 100_000, 0),
        ("9" * RETRY_DIGITS, 10**RETRY_DIGITS - 1),  # the longest exact value
        ("1" + "0" * RETRY_DIGITS, RETRY_SATURATED),  # past int()'s limit: saturated
        ("9" * 100_000, RETRY_SATURATED),
    ],
    ids=["15", "16", "zeros-then-7", "zeros", "4300", "4301", "100000"],
)
def test_a_retry_of_any_length_never_raises(digits: str, want: int) -> None:
    stream = b"data: a\n\nretry: " + digits.encode() + b"\ndata: b\n\n"
    for size in (1, 977, len(stream)):
        p = SSEParser()
        got = feed_in(p, stream, list(range(0, len(stream), size)))
        assert got == [E("message", "a"), E("message", "b")], size
        assert p.retry == want
    assert RETRY_SATURATED > 10**RETRY_DIGITS - 1  # every cap still applies to it


def test_a_lower_int_digit_limit_saturates_instead_of_raising() -> None:
    # PYTHONINTMAXSTRDIGITS may lower int()'s limit (to 640 at the least): still no raise.
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        p = SSEParser()
        p.feed(b"retry: " + b"9" * 641 + b"\n")
        assert p.retry == RETRY_SATURATED
        p.feed(b"retry: " + b"9" * 640 + b"\n")
        assert p.retry == int("9" * 640)
    finally:
        sys.set_int_max_str_digits(old)


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(
        st.text("0123456789", min_size=1, max_size=40),
        st.builds(
            lambda zeros, body: "0" * zeros + body,
            st.integers(0, 6000),
            st.text("0123456789", min_size=1, max_size=20),
        ),
        st.builds(lambda n, d: d * n, st.integers(4290, 9000), st.sampled_from("19")),
    ),
    st.lists(st.integers(0, 10_000), max_size=12),
)
def test_retry_digits_of_any_length_at_any_chunking(digits: str, cuts: list[int]) -> None:
    stream = b"retry: 5\n\nretry: " + digits.encode() + b"\n\ndata: x\n\n"
    p = SSEParser()
    assert feed_in(p, stream, cuts) == [E("message", "x")]
    assert p.retry == expected_retry(digits)


def test_last_event_id_persists_and_updates_on_blank_line() -> None:
    p = SSEParser()
    p.feed(b"id: 42\n")
    assert p.last_event_id == ""  # set when the event is dispatched (blank line), per spec
    p.feed(b"\n")
    assert p.last_event_id == "42"
    assert p.feed(b"data: x\n\n") == [E("message", "x", "42")]


def test_comments_reach_the_callback_not_the_events() -> None:
    seen: list[str] = []
    p = SSEParser(on_comment=seen.append)
    assert p.feed(b": ping\n:\n:  two\ndata: x\n\n") == [E("message", "x")]
    assert seen == ["ping", "", " two"]


def test_cr_at_chunk_end_then_lf_is_one_line_end() -> None:
    p = SSEParser()
    assert p.feed(b"data: a\r") == []
    assert p.feed(b"\n") == []  # the LF belongs to the CR: no blank line yet
    assert p.feed(b"\r") == [E("message", "a")]
    assert p.feed(b"\n\r\n") == []  # LF after CR skipped, then one blank line: nothing pending


def test_line_cap_raises_with_bounded_memory() -> None:
    p = SSEParser(max_line_bytes=1 << 20)
    assert p.feed(b"data: ok\n\n") == [E("message", "ok")]
    tracemalloc.start()
    chunk = b"x" * 65536
    with pytest.raises(SSEProtocolError) as info:
        for _ in range(32):  # 2 MiB without a line end
            p.feed(chunk)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < (1 << 20) + 4 * 65536 + 65536, peak
    assert info.value.offset == len(b"data: ok\n\n")
    assert "max_line_bytes" in str(info.value)
    assert isinstance(info.value, LineTooLongError)
    with pytest.raises(SSEProtocolError):
        p.feed(b"\n\n")  # the parser stays failed


@pytest.mark.parametrize("chunk", [1 << 21, 65536, 1400, 4093])
def test_line_cap_is_the_same_for_every_chunking(chunk: int) -> None:
    stream = b"data: a\n\n" + b"data: " + b"y" * (2 << 20) + b"\n\ndata: b\n\n"
    p = SSEParser()
    got: list[SSEEvent] = []
    with pytest.raises(SSEProtocolError) as info:
        for i in range(0, len(stream), chunk):
            got += p.feed(stream[i : i + chunk])
    got += info.value.events
    assert got == [E("message", "a")]
    assert info.value.offset == 9


def test_overflow_after_crlf_line_keeps_exactly_the_earlier_lines() -> None:
    # Found by the fuzzer: the lines before an overlong one were cut one byte short of CRLF.
    stream = b"data\r\n" + b"x" * 80 + b"\n"
    for size in (1, 7, len(stream)):
        p = SSEParser(max_line_bytes=64)
        got: list[SSEEvent] = []
        with pytest.raises(SSEProtocolError) as info:
            for i in range(0, len(stream), size):
                got += p.feed(stream[i : i + size])
        assert got + info.value.events == [], size
        assert info.value.offset == 6


def _run(stream: bytes, size: int, **kw: int) -> tuple[list[SSEEvent], SSEProtocolError | None]:
    p = SSEParser(**kw)
    got: list[SSEEvent] = []
    try:
        for i in range(0, len(stream), size):
            got += p.feed(stream[i : i + size])
    except SSEProtocolError as exc:
        return got + exc.events, exc
    return got, None


@pytest.mark.parametrize("size", [1, 5, 64, 1000, 1 << 20])
def test_event_data_is_capped_the_same_at_every_chunking(size: int) -> None:
    big = b"".join(b"data: " + b"x" * 99 + b"\n" for _ in range(30))  # 3,000 chars, many lines
    stream = b"data: a\n\n" + big + b"\ndata: after\n\n"
    got, err = _run(stream, size, max_event_bytes=2000)
    assert got == [E("message", "a")]
    assert isinstance(err, EventTooLargeError) and "max_event_bytes=2000" in str(err)
    ok, none = _run(stream, size, max_event_bytes=3000)  # 30 x 99 + 29 newlines = 2,999
    assert none is None and [e.data for e in ok] == ["a", "\n".join(["x" * 99] * 30), "after"]


def test_event_data_memory_stays_bounded() -> None:
    p = SSEParser(max_event_bytes=1 << 20)
    line = b"data: " + b"y" * 4000 + b"\n"
    tracemalloc.start()
    with pytest.raises(EventTooLargeError):
        for _ in range(100_000):  # ~400 MB of data lines with no blank line
            p.feed(line)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 4 << 20, peak


def test_line_exactly_at_cap_is_fine() -> None:
    line = b"data: " + b"z" * 94
    p = SSEParser(max_line_bytes=100)
    assert p.feed(line + b"\n\n") == [E("message", "z" * 94)]
    p = SSEParser(max_line_bytes=100)
    with pytest.raises(SSEProtocolError):
        p.feed(line + b"z\n\n")


def test_strict_utf8_names_the_offset_and_keeps_earlier_events() -> None:
    stream = b"data: ok\r\n\r\ndata: bad \xff\n\n"
    for cut in range(len(stream) + 1):
        p = SSEParser(errors="strict")
        got: list[SSEEvent] = []
        with pytest.raises(SSEProtocolError) as info:
            got += p.feed(stream[:cut])
            got += p.feed(stream[cut:])
        assert got + info.value.events == [E("message", "ok")], cut
        assert info.value.offset == stream.index(b"\xff")
        assert "invalid UTF-8" in str(info.value)


def test_strict_utf8_split_character_is_fine() -> None:
    stream = "data: 日本🙂\n\n".encode()
    for cut in range(len(stream) + 1):
        p = SSEParser(errors="strict")
        assert p.feed(stream[:cut]) + p.feed(stream[cut:]) == [E("message", "日本🙂")]


def test_feed_after_close_is_an_error() -> None:
    p = SSEParser()
    p.close()
    with pytest.raises(SSEProtocolError):
        p.feed(b"data: x\n\n")


def test_bytes_fed_counts_everything() -> None:
    p = SSEParser()
    pieces = (b"\xef\xbb", b"\xbfdata: a\r", b"\n\n", b"partial", b"x" * 40000, b"\n")
    for piece in pieces:
        p.feed(piece)
    assert p.bytes_fed == sum(map(len, pieces))


def test_long_data_line_spanning_many_chunks() -> None:
    body = ("ab—" * 50_000).encode()
    stream = b"data: " + body + b"\ndata: tail\n\n"
    for size in (1, 7, 1400, 65536):
        events, _ = feed_all([stream[i : i + size] for i in range(0, len(stream), size)])
        assert events == [E("message", "ab—" * 50_000 + "\ntail")], size


# -- property: any serialisation, any chunking, same events ------------------------------------

field_text = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\r\n"), max_size=12
)


@st.composite
def streams(draw: st.DrawFn) -> tuple[bytes, list[SSEEvent]]:
    """Random events serialised with random line ends, BOM, comments and unknown fields."""
    eol = draw(st.sampled_from(["\n", "\r\n", "\r", "mixed"]))

    def end() -> str:
        return draw(st.sampled_from(["\n", "\r\n", "\r"])) if eol == "mixed" else eol

    out = ["\ufeff"] if draw(st.booleans()) else []
    expected: list[SSEEvent] = []
    last_id = ""
    for _ in range(draw(st.integers(0, 6))):
        etype = draw(st.one_of(st.just(""), field_text))
        datas = draw(st.lists(field_text, min_size=1, max_size=3))
        if draw(st.booleans()):
            out.append(":" + draw(field_text) + end())
        if draw(st.booleans()):
            new_id = draw(field_text.filter(lambda s: "\x00" not in s))
            out.append("id: " + new_id + end())
            last_id = new_id
        if etype:
            out.append("event: " + etype + end())
        parsed = []
        for d in datas:
            sep = draw(st.sampled_from([":", ": "]))
            out.append("data" + sep + d + end())
            parsed.append(d[1:] if sep == ":" and d.startswith(" ") else d)
            if draw(st.booleans()):
                out.append("x-unknown: " + draw(field_text) + end())
        blank = end()
        if blank == "\n" and out[-1].endswith("\r"):
            blank = "\r\n"  # a lone LF right after a CR would join it into one line end
        out.append(blank)
        expected.append(E(etype or "message", "\n".join(parsed), last_id))
    return "".join(out).encode(), expected


@settings(max_examples=300, deadline=None)
@given(streams(), st.lists(st.integers(min_value=1, max_value=40), max_size=30))
def test_any_chunking_gives_the_same_events(
    sample: tuple[bytes, list[SSEEvent]], sizes: list[int]
) -> None:
    stream, expected = sample
    whole, _ = feed_all([stream])
    assert whole == expected
    chunks, i = [], 0
    for n in sizes:
        chunks.append(stream[i : i + n])
        i += n
    chunks.append(stream[i:])
    chunked, _ = feed_all(chunks)
    assert chunked == expected
