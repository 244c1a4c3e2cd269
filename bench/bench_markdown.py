"""Render work for a growing answer: StreamingMarkdown (settled blocks + tail) against the
naive full re-render per delta, in CPython, for a ~30 KB answer in 3,000 deltas and the same
answer doubled. The ratio "doubled / single" shows the growth: ~2 is linear, ~4 quadratic.

Each cell is the median of ``runs`` timings. The naive renderer renders once per delta, as
the seed's "quadratic" example does; the incremental one is also fed per delta and updates
once per delta (the browser coalesces further, to one update per frame).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from pysse.render import StreamingMarkdown, make_markdown, render
from pysse.server.demo import _long_answer


def deltas(text: str, n: int) -> list[str]:
    size = max(1, len(text) // n)
    return [text[i : i + size] for i in range(0, len(text), size)]


def incremental(parts: list[str]) -> str:
    md = StreamingMarkdown()
    for d in parts:
        md.feed(d)
    md.finish()
    return md.html


def naive(parts: list[str], every: int = 1) -> str:
    """Full re-render of the whole text, once per ``every`` deltas (and at the end)."""
    md = make_markdown()
    acc = ""
    html = ""
    for i, d in enumerate(parts):
        acc += d
        if i % every == every - 1 or i == len(parts) - 1:
            html = render(acc, md)
    return html


def timed(fn: Callable[[list[str]], str], parts: list[str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn(parts)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main(runs: int = 3, every: int = 10) -> list[str]:
    single = _long_answer(30_000)
    double = single + "\n" + single.replace("# A long answer", "# Part two")
    rows = [
        f"| answer | deltas | incremental (1 update/delta) | naive (1 full render / {every} "
        "deltas) | naive / incremental |",
        "|---|---:|---:|---:|---:|",
    ]
    times: dict[str, tuple[float, float]] = {}
    for name, text, n in (("30 KB", single, 3000), ("60 KB (doubled)", double, 6000)):
        parts = deltas(text, n)
        assert incremental(parts) == render(text)
        inc = timed(incremental, parts, runs)
        nai = timed(lambda p: naive(p, every), parts, 1)  # slow enough that noise is small
        times[name] = (inc, nai)
        rows.append(
            f"| {name} | {len(parts)} | {inc * 1000:.0f} ms | {nai * 1000:.0f} ms | "
            f"{nai / inc:.1f}x |"
        )
        print(rows[-1], flush=True)
    (i1, n1), (i2, n2) = times["30 KB"], times["60 KB (doubled)"]
    rows.append("")
    rows.append(
        f"doubling the answer costs: incremental {i2 / i1:.2f}x (target <= 2.2), "
        f"naive {n2 / n1:.2f}x"
    )
    print(rows[-1])
    return rows


if __name__ == "__main__":
    import sys

    main(every=1 if "--full" in sys.argv else 10)
