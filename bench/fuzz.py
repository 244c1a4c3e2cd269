"""Fuzz the three feed() entry points with mutated real streams, random chunkings and random
text: only documented exceptions, identical results for every chunking, bounded memory.

    python build.py fuzz --minutes 10      (a short run is part of the test suite)

Structure-aware mutation (flip, insert, delete, duplicate, splice bytes of the fixture
streams, CR/LF/BOM/NUL/invalid UTF-8 injection) reaches far deeper into the parsers than
uniform random bytes would. Further targets (``TARGETS``) generate structured hostile input:
JSON payloads (``fuzz_json``) and markdown answers (``fuzz_markdown``: every pygments lexer
name as a fence's info string, bracket and emphasis runs, nested containers). Every input must finish within a time budget: a case that
takes longer (a backtracking regex, a quadratic loop) fails the run, and its input is saved.
"""

from __future__ import annotations

import os
import random
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from pysse import ChatStream, SSEParser, SSEProtocolError
from pysse.render import StreamingMarkdown, render

from . import fuzz_json, fuzz_markdown

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
SPICE = [
    b"\r",
    b"\n",
    b"\r\n",
    b"\xef\xbb\xbf",
    b"\x00",
    b"\xff",
    b"\xe2\x82",
    b":",
    b"data:",
    b"event: error\n",
    b"data: [DONE]\n\n",
    b"\n\n",
    b'{"error":{"message":"x"}}',
    "日本🙂".encode(),
]


def corpus() -> list[bytes]:
    return [p.read_bytes() for p in sorted(FIXTURES.glob("*.sse"))] + [
        p.read_bytes() for p in sorted(FIXTURES.glob("*.md"))
    ]


def mutate(data: bytes, rnd: random.Random, pool: list[bytes]) -> bytes:
    b = bytearray(data)
    for _ in range(rnd.randint(1, 8)):
        op = rnd.randrange(6)
        pos = rnd.randint(0, len(b))
        if op == 0 and b:
            b[min(pos, len(b) - 1)] = rnd.randrange(256)
        elif op == 1:
            b[pos:pos] = rnd.choice(SPICE)
        elif op == 2 and b:
            del b[pos : pos + rnd.randint(1, 16)]
        elif op == 3 and b:
            end = min(len(b), pos + rnd.randint(1, 64))
            b[pos:pos] = b[pos:end]
        elif op == 4:
            other = rnd.choice(pool)
            s = rnd.randint(0, len(other))
            b[pos:pos] = other[s : s + rnd.randint(1, 200)]
        else:
            b[pos:pos] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 8)))
    return bytes(b)


def chunkings(data: bytes, rnd: random.Random) -> list[list[bytes]]:
    out = [[data]]
    for _ in range(2):
        cuts = sorted(rnd.sample(range(len(data) + 1), min(len(data) + 1, rnd.randint(1, 20))))
        out.append([data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)])
    out.append([data[i : i + 1] for i in range(len(data))])
    return out


def sse_result(chunks: list[bytes], max_line: int) -> tuple[list[object], str | None]:
    p = SSEParser(max_line_bytes=max_line)
    events: list[object] = []
    try:
        for c in chunks:
            events += p.feed(c)
        p.close()
    except SSEProtocolError as exc:  # the one documented exception
        return events + exc.events, "error"
    return events, None


def chat_result(chunks: list[bytes]) -> tuple[str, str, str | None]:
    cs = ChatStream(max_line_bytes=4096)
    for c in chunks:
        cs.feed(c)  # must never raise on bad input
    cs.close()
    return cs.text, str(cs.outcome), cs.error.kind if cs.error else None


def one(data: bytes, rnd: random.Random) -> None:
    ways = chunkings(data, rnd)
    max_line = rnd.choice([64, 1024, 1 << 20])
    ref = sse_result(ways[0], max_line)
    for w in ways[1:]:
        assert sse_result(w, max_line) == ref, "SSEParser depends on chunking"
    cref = chat_result(ways[0])
    for w in ways[1:]:
        got = chat_result(w)
        # After a terminal event later bytes are ignored, so text/outcome must agree.
        assert got == cref, ("ChatStream depends on chunking", got, cref)
    text = data.decode("utf-8", "replace")
    md = StreamingMarkdown()
    step = rnd.randint(1, 50)
    for i in range(0, len(text), step):
        md.feed(text[i : i + step])
    md.finish()
    assert md.html == render(text), "streaming markdown differs from one-shot"


Generate = Callable[[random.Random, list[bytes]], bytes]
Check = Callable[[bytes, random.Random, bool], None]
"""Check one input: (data, rnd, timed). ``timed``: also hold it to the target's own time
budgets (the markdown target's per-frame budget); off in the test suite, where only work is
counted."""


def mutated(rnd: random.Random, pool: list[bytes]) -> bytes:
    return mutate(rnd.choice(pool), rnd, pool)


def markdown(data: bytes, rnd: random.Random, timed: bool) -> None:
    fuzz_markdown.one(data, rnd, fuzz_markdown.FRAME_BUDGET if timed else None)


# (name, make an input, check it): the run takes them in turn.
TARGETS: list[tuple[str, Generate, Check]] = [
    ("mutated fixtures", mutated, lambda data, rnd, timed: one(data, rnd)),
    ("json payloads", fuzz_json.generate, lambda data, rnd, timed: fuzz_json.one(data, rnd)),
    ("markdown answers", fuzz_markdown.generate, markdown),
]
# A markdown answer (up to 30 KB) is streamed in up to a thousand renders, each of which
# fuzz_markdown.one also holds to a frame budget of its own. Its slowest known shape, a long
# markup-dense paragraph in a tight list item (re-rendered whole until the item ends),
# measured 24 s; the quadratic case this budget is for (30,000 "[") took 285 s.
BUDGET_SCALE = {"markdown answers": 8.0}
# Memory is traced for the parser targets; tracemalloc slows markdown-it several times over,
# and the markdown target is held to time budgets.
UNTRACED = {"markdown answers"}
FAILURES = Path(__file__).resolve().parents[1] / ".cache" / "fuzz-failures"


class TooSlow(AssertionError):
    """An input took longer than the per-input budget."""


def run(
    seconds: float | None = None,
    seed: int = 0,
    budget: float | None = 5.0,
    cases: int | None = None,
) -> dict[str, float]:
    """Fuzz the targets in turn for ``seconds``, or for ``cases`` inputs (the test suite: a
    count, which a busy machine cannot shrink), whichever ends first. ``budget``: seconds one
    input may take (scaled per target); None holds no input to a time (the test suite again:
    a loaded machine is not a quadratic loop)."""
    if seconds is None and cases is None:
        raise ValueError("run() needs seconds or cases")
    rnd = random.Random(seed)
    pool = corpus()
    peak = 0
    try:
        t0 = time.monotonic()
        n = 0
        while (cases is None or n < cases) and (seconds is None or time.monotonic() - t0 < seconds):
            name, generate, check = TARGETS[n % len(TARGETS)]
            data = generate(rnd, pool)
            peak = max(peak, _trace(name not in UNTRACED))
            t = time.monotonic()
            try:
                check(data, rnd, budget is not None)
            except BaseException:
                save(name, data)
                raise
            took = time.monotonic() - t
            limit = None if budget is None else budget * BUDGET_SCALE.get(name, 1.0)
            if limit is not None and took > limit:
                path = save(name, data)
                raise TooSlow(f"{name}: one input took {took:.1f} s (budget {limit} s): {path}")
            n += 1
        peak = max(peak, _trace(False))
    finally:
        tracemalloc.stop()
    return {"cases": n, "seconds": time.monotonic() - t0, "peak_mib": peak / 2**20}


def _trace(on: bool) -> int:
    """Turn memory tracing on or off; the peak traced so far (0 if it was off)."""
    peak = tracemalloc.get_traced_memory()[1] if tracemalloc.is_tracing() else 0
    if on and not tracemalloc.is_tracing():
        tracemalloc.start()
    elif not on and tracemalloc.is_tracing():
        tracemalloc.stop()
    return peak


def save(name: str, data: bytes) -> Path:
    """Keep a failing input for the bug report (and a regression test)."""
    FAILURES.mkdir(parents=True, exist_ok=True)
    path = FAILURES / f"{name.replace(' ', '-')}-{int(time.time() * 1000)}.bin"
    path.write_bytes(data)
    return path


if __name__ == "__main__":
    seconds = float(os.environ.get("PYSSE_FUZZ_SECONDS", "60"))
    stats = run(seconds, seed=int(os.environ.get("PYSSE_FUZZ_SEED", str(int(time.time())))))
    print(
        f"fuzz: {stats['cases']} cases in {stats['seconds']:.0f} s, no failure, "
        f"peak traced memory {stats['peak_mib']:.1f} MiB"
    )
