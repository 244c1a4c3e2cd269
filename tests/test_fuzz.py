"""A short fuzz run (``python build.py fuzz --minutes N`` runs it long) and a property test on
raw random bytes."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from bench import fuzz
from pysse import ChatStream, SSEParser, SSEProtocolError


def test_short_fuzz_run() -> None:
    stats = fuzz.run(seconds=4, seed=1234)
    assert stats["cases"] > 20
    assert stats["peak_mib"] < 64


def test_mutator_changes_inputs() -> None:
    rnd = random.Random(5)
    pool = fuzz.corpus()
    assert any(fuzz.mutate(pool[0], rnd, pool) != pool[0] for _ in range(5))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=600), st.integers(1, 50))
def test_random_bytes_only_documented_errors(data: bytes, size: int) -> None:
    p = SSEParser(max_line_bytes=128)
    try:
        for i in range(0, len(data), size):
            p.feed(data[i : i + size])
        p.close()
    except SSEProtocolError:
        pass
    cs = ChatStream(max_line_bytes=128)
    for i in range(0, len(data), size):
        cs.feed(data[i : i + size])
    cs.close()
    assert cs.outcome is not None
