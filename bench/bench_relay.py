"""The relay under load on loopback: 200 concurrent streaming chats through it, each checked
for its own exact answer; first-byte latency the relay adds (p50/p99, against the same
upstream without it, measured side by side); throughput; the relay's memory over rounds.

Upstream (the demo model) and relay run as separate processes, as in production.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

from pysse import ChatStream
from tests.support import free_port

ROOT = Path(__file__).resolve().parents[1]
N = 200


def start(code: str, port: int, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-c", code], cwd=ROOT, env={**os.environ, **(env or {})}
    )
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), 0.2):
                return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"server on {port} did not start")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def one(client: httpx.AsyncClient, url: str, i: int) -> tuple[float, str, str]:
    body = {
        "model": "demo",
        "stream": True,
        "messages": [{"role": "user", "content": f"/demo echo chat {i} says hello {i}"}],
    }
    t0 = time.perf_counter()
    first = None
    cs = ChatStream()
    async with client.stream("POST", url, json=body) as resp:
        async for chunk in resp.aiter_raw():
            if first is None:
                first = time.perf_counter() - t0
            cs.feed(chunk)
    cs.close()
    return first or 0.0, cs.text, str(cs.outcome)


async def round_(url: str) -> tuple[list[float], float, int]:
    limits = httpx.Limits(max_connections=N, max_keepalive_connections=N)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        t0 = time.perf_counter()
        results = await asyncio.gather(*(one(client, url, i) for i in range(N)))
        took = time.perf_counter() - t0
    bad = 0
    for i, (_, text, outcome) in enumerate(results):
        if text != f"chat {i} says hello {i}" or outcome != "completed":
            bad += 1
    return [r[0] for r in results], took, bad


async def sequential(url: str, n: int = 30) -> list[float]:
    """One chat at a time: the relay's own added latency, without a crowd."""
    async with httpx.AsyncClient(timeout=60) as client:
        return [(await one(client, url, i))[0] for i in range(n)]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main(rounds: int = 3) -> list[str]:
    up_port, relay_port = free_port(), free_port()
    upstream = start(
        "import uvicorn; from pysse.server.app import create_app; "
        f"uvicorn.run(create_app(None, demo_pace=0.3), port={up_port}, log_level='warning')",
        up_port,
    )
    relay = start(
        "from pysse.server.relay import main; "
        f"main(['--upstream', 'http://127.0.0.1:{up_port}/v1', '--api-key-env', 'BENCH_KEY', "
        f"'--port', '{relay_port}'])",
        relay_port,
        {"BENCH_KEY": "sk-bench"},
    )
    rows = [
        f"| {N} concurrent chats, median of {rounds} rounds | direct to upstream | "
        "through the relay |",
        "|---|---:|---:|",
    ]
    try:
        direct_fb, relay_fb, direct_t, relay_t, mem = [], [], [], [], []
        lost = 0
        for _ in range(rounds):
            fb, t, bad = asyncio.run(round_(f"http://127.0.0.1:{up_port}/v1/chat/completions"))
            direct_fb += fb
            direct_t.append(t)
            lost += bad
            fb, t, bad = asyncio.run(round_(f"http://127.0.0.1:{relay_port}/relay"))
            print(
                f"round: relay first byte p50 {pct(fb, 0.5) * 1000:.0f} ms, "
                f"p99 {pct(fb, 0.99) * 1000:.0f} ms, max {max(fb) * 1000:.0f} ms",
                flush=True,
            )
            relay_fb += fb
            relay_t.append(t)
            lost += bad
            mem.append(rss_kib(relay.pid))
        solo_d = asyncio.run(sequential(f"http://127.0.0.1:{up_port}/v1/chat/completions"))
        solo_r = asyncio.run(sequential(f"http://127.0.0.1:{relay_port}/relay"))
        rows += [
            f"| one chat at a time: first byte p50 | {pct(solo_d, 0.5) * 1000:.1f} ms | "
            f"{pct(solo_r, 0.5) * 1000:.1f} ms |",
            f"| first byte p50 | {pct(direct_fb, 0.5) * 1000:.1f} ms | "
            f"{pct(relay_fb, 0.5) * 1000:.1f} ms |",
            f"| first byte p99 | {pct(direct_fb, 0.99) * 1000:.1f} ms | "
            f"{pct(relay_fb, 0.99) * 1000:.1f} ms |",
            f"| wall time for {N} chats | {statistics.median(direct_t):.2f} s | "
            f"{statistics.median(relay_t):.2f} s |",
            "",
            f"relay adds p50 {(pct(relay_fb, 0.5) - pct(direct_fb, 0.5)) * 1000:+.1f} ms, "
            f"p99 {(pct(relay_fb, 0.99) - pct(direct_fb, 0.99)) * 1000:+.1f} ms to the first "
            f"byte; answers lost or mixed up: {lost} of {2 * N * rounds}; relay RSS after "
            f"each round: {', '.join(f'{m / 1024:.0f} MiB' for m in mem)}",
        ]
        print("\n".join(rows), flush=True)
        if lost:
            raise SystemExit("answers were lost or mixed up")
    finally:
        for proc in (relay, upstream):
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    return rows


if __name__ == "__main__":
    main()
