"""inspector.py: the analysis agrees with ChatStream on every fixture stream."""

from __future__ import annotations

import pytest

from fixtures_util import load_fixtures
from pysse import ChatStream
from pysse.inspector import analyze, compare_chunk_sizes, show_text

ALL = load_fixtures()


def reference(body: bytes) -> ChatStream:
    cs = ChatStream()
    cs.feed(body)
    cs.close()
    return cs


@pytest.mark.parametrize(("name", "body", "expected"), ALL, ids=[a[0] for a in ALL])
def test_analyze_matches_chatstream(name: str, body: bytes, expected: dict[str, object]) -> None:
    chunks = [(float(i), body[i : i + 50]) for i in range(0, len(body), 50)]
    rep = analyze(chunks)
    ref = reference(body)
    assert rep.text == ref.text == expected["text"]
    assert rep.outcome == str(ref.outcome)
    assert len(rep.events) == ref.sse_events
    assert sum(c.size for c in rep.chunks) == len(body) == rep.timing["bytes"]
    assert [c.index for c in rep.chunks] == list(range(len(chunks)))
    assert all(r["same"] for r in compare_chunk_sizes(body))


def test_invalid_utf8_and_line_ends_are_made_visible() -> None:
    rep = analyze([(0.0, b"data: a\r\n\r\n: ping\n\ndata: \xff\n\n")])
    assert rep.chunks[0].invalid == 1
    assert "␍␊" in rep.chunks[0].text
    assert rep.comments == 1
    assert show_text("a\tb\x00") == "a␉b␀"


def test_a_chunking_dependent_parser_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    import pysse.inspector as insp

    real = insp.replay

    def broken(data: bytes, chunk: int, fmt: str = "auto") -> ChatStream:
        # A parser that drops a character when fed 1 byte at a time.
        return real(data.replace(b"abc", b"axc") if chunk == 1 else data, chunk, fmt)

    monkeypatch.setattr(insp, "replay", broken)
    rows = insp.compare_chunk_sizes(
        b'data: {"choices":[{"delta":{"content":"abc"}}]}\n\ndata: [DONE]\n\n'
    )
    assert [r["same"] for r in rows] == [True, True, True, True, False]
    assert rows[-1]["first_difference_at"] == 1
