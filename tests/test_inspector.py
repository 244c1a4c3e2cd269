"""inspector.py: the analysis agrees with ChatStream on every fixture stream."""

from __future__ import annotations

from typing import Any

import pytest

from fixtures_util import load_fixtures, reference
from pysse.inspector import (
    STEP,
    analyze,
    check_sizes,
    compare_chunk_sizes,
    compare_steps,
    show_text,
)
from pysse.inspector import replay_refusal as insp_refusal

ALL = load_fixtures()


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

    real = insp.replay_steps

    def broken(data: bytes, chunk: int, fmt: Any = "auto") -> Any:
        # A parser that drops a character when fed 1 byte at a time.
        return real(data.replace(b"abc", b"axc") if chunk == 1 else data, chunk, fmt)

    monkeypatch.setattr(insp, "replay_steps", broken)
    rows = insp.compare_chunk_sizes(
        b'data: {"choices":[{"delta":{"content":"abc"}}]}\n\ndata: [DONE]\n\n'
    )
    assert [r["same"] for r in rows] == [True, True, True, True, False]
    assert rows[-1]["first_difference_at"] == 1


def test_replays_too_big_for_a_page_are_refused_with_what_to_do() -> None:
    assert insp_refusal(1 << 20, 60) is None
    too_big = insp_refusal(200 << 20, 1000)
    assert too_big is not None and "200.0 MiB" in too_big and "python -m pysse replay" in too_big
    too_many = insp_refusal(2_000_000, 1)
    assert (
        too_many is not None and "2,000,000 chunks" in too_many and "at least 8 bytes" in too_many
    )
    assert check_sizes(1000) == (0, 1000, 60, 20, 1)
    assert check_sizes(5 << 20) == (0, 1000, 60)


def test_stepwise_replay_yields_and_agrees() -> None:
    body = b"".join(b'data: {"choices":[{"delta":{"content":"ab"}}]}\n\n' for _ in range(300))
    steps = compare_steps(body + b"data: [DONE]\n\n", (0, 1))
    pauses = 0
    while True:
        try:
            next(steps)
            pauses += 1
        except StopIteration as stop:
            rows = stop.value
            break
    assert pauses >= len(body) // STEP  # the 1-byte replay paused every STEP feeds
    assert [r["same"] for r in rows] == [True, True] and rows[1]["chars"] == 600
