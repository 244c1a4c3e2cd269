"""A short fuzz run (``python build.py fuzz --minutes N`` runs it long) and a property test on
raw random bytes."""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench import fuzz, fuzz_json
from pysse import ChatStream, SSEParser, SSEProtocolError
from pysse.jsonsafe import nesting_depth


def test_short_fuzz_run() -> None:
    # A count of inputs, none held to a time: "cases > 9 in 4 s" and the markdown target's
    # 1 s frame budget both failed on a loaded machine (issue 24). The time budgets are the
    # long run's (python build.py fuzz); linear work is asserted by counting it elsewhere.
    stats = fuzz.run(cases=9, seed=1234, budget=None)
    assert stats["cases"] == 9  # three of each target, one of them whole markdown answers
    assert stats["peak_mib"] < 64


def test_a_run_needs_a_length() -> None:
    with pytest.raises(ValueError, match="seconds or cases"):
        fuzz.run(seed=1)


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


def test_json_generator_reaches_the_hostile_shapes() -> None:
    rnd = random.Random(3)
    streams = [fuzz_json.stream(rnd) for _ in range(400)]
    assert any(nesting_depth(s, stop_above=1000) > 1000 for s in streams)  # deep
    assert any(b"9" * 4301 in s for s in streams)  # past int()'s digit limit
    assert any(b"\\ud83d" in s for s in streams)  # half a surrogate pair
    assert any(s.count(b'"type":') > 1 for s in streams)  # duplicate keys


def test_an_input_over_the_time_budget_fails_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    def slow(data: bytes, rnd: random.Random, timed: bool) -> None:
        time.sleep(0.05)  # (a sleep only makes it slower: the budget is sure to trip)

    monkeypatch.setattr(fuzz, "TARGETS", [("slow", lambda rnd, pool: b"x", slow)])
    monkeypatch.setattr(fuzz, "FAILURES", fuzz.FAILURES.parent / "fuzz-failures-test")
    with pytest.raises(fuzz.TooSlow, match="budget"):
        fuzz.run(seconds=2, seed=1, budget=0.01)
