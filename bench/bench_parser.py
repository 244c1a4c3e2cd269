"""SSEParser throughput against httpx-sse and openai-python, same bytes, same process.

Each cell is the median of ``runs`` timings of parsing the whole stream (pre-chunked, so
chunking cost is not measured). Ratios are computed within the run, so machine noise
affects every parser alike.
"""

from __future__ import annotations

import codecs
import statistics
import time
from collections.abc import Callable

from pysse import SSEParser

from . import corpus

Runner = Callable[[list[bytes]], int]


def run_pysse(chunks: list[bytes]) -> int:
    p = SSEParser(max_line_bytes=16 << 20)
    n = 0
    for c in chunks:
        n += len(p.feed(c))
    p.close()
    return n


def run_httpx_sse(chunks: list[bytes]) -> int:
    from httpx_sse._decoders import SSEDecoder, SSELineDecoder

    text_dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    lines_dec = SSELineDecoder()
    sse = SSEDecoder()
    n = 0
    for c in chunks:
        for line in lines_dec.decode(text_dec.decode(c)):
            if sse.decode(line) is not None:
                n += 1
    for line in lines_dec.flush():
        if sse.decode(line) is not None:
            n += 1
    return n


def run_openai(chunks: list[bytes]) -> int:
    from openai._streaming import SSEDecoder

    n = 0
    for _ in SSEDecoder().iter_bytes(iter(chunks)):
        n += 1
    return n


PEERS: dict[str, Runner] = {"pysse": run_pysse, "httpx-sse": run_httpx_sse, "openai": run_openai}
STREAMS: dict[str, Callable[[], bytes]] = {
    "openai-chat 20k events": corpus.openai_chat,
    "anthropic 10k, multi-byte": corpus.anthropic,
    "one 4 MiB data line": corpus.long_line,
}
SIZES = [65536, 1400, 64, 8]


def time_one(fn: Runner, chunks: list[bytes], runs: int) -> float:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn(chunks)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main(runs: int = 5, quick: bool = False) -> list[str]:
    rows = [
        "| stream | chunk | pysse MB/s | httpx-sse MB/s | openai MB/s | pysse / best peer |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    long_times: dict[int, float] = {}
    for name, make in STREAMS.items():
        data = make()
        for size in SIZES:
            chunks = corpus.chunked(data, size)
            counts = {k: fn(chunks) for k, fn in PEERS.items()}
            if len(set(counts.values())) != 1:
                raise SystemExit(f"parsers disagree on {name} @ {size}: {counts}")
            r = 1 if quick and size < 64 else runs
            t = {k: time_one(fn, chunks, r) for k, fn in PEERS.items()}
            mbs = {k: len(data) / v / 1e6 for k, v in t.items()}
            best_peer = max(mbs["httpx-sse"], mbs["openai"])
            if name.startswith("one"):
                long_times[size] = t["pysse"]
            rows.append(
                f"| {name} | {size} | {mbs['pysse']:.1f} | {mbs['httpx-sse']:.1f} | "
                f"{mbs['openai']:.1f} | {mbs['pysse'] / best_peer:.2f}x |"
            )
            print(rows[-1], flush=True)
    ratio = long_times[64] / long_times[65536]
    rows.append("")
    rows.append(f"4 MiB line: time at 64-byte chunks / time at 64 KiB chunks = {ratio:.2f} (cap 3)")
    print(rows[-1])
    lin = []
    for mib in (2, 4, 8):
        chunks = corpus.chunked(corpus.long_line(mib << 20), 64)
        lin.append(f"{mib} MiB {time_one(run_pysse, chunks, runs) * 1000:.1f} ms")
    rows.append("one data line at 64-byte chunks (linear time): " + ", ".join(lin))
    print(rows[-1])
    return rows


if __name__ == "__main__":
    main()
