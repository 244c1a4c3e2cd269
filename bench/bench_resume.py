"""Resumable answers on loopback (``python build.py bench --only resume``):

1. What recording costs: a chat's first byte one at a time, direct to the upstream (the demo
   model in its own process), through the relay with ``--no-resume``, with the in-memory
   store (the default) and with the Redis store; rounds alternate, medians over rounds.
2. Reconnect to first resumed byte: a chat is started, its connection dropped after the first
   chunk, and ``GET ?answer=ID&from=N`` sent at once; the time to the first byte of the
   resumed body, with the memory store, with Redis on the same relay process, and with Redis
   through a second relay process (the cross-process resume).

Relays, upstream and Redis run as separate processes, as in production.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time

import httpx

from bench.bench_relay import ms, pct, relay, sequential, stop, upstream
from pysse.testing.redis import RedisServer
from tests.support import free_port

ROUNDS = 3
N = 40


BODY = {"model": "demo", "stream": True, "messages": [{"role": "user", "content": "hello"}]}


async def resume_latency(start_url: str, resume_url: str, n: int) -> list[float]:
    """Start a chat at ``start_url``, drop it after its first chunk, resume at ``resume_url``
    right away: seconds from sending the resume to its first byte."""
    out = []
    async with httpx.AsyncClient(timeout=30) as client:
        for _ in range(n):
            async with client.stream("POST", start_url, json=BODY) as resp:
                answer_id = resp.headers["x-pysse-answer-id"]
                got = 0
                async for chunk in resp.aiter_raw():
                    got += len(chunk)
                    break
            await asyncio.sleep(0.05)  # the answer goes on meanwhile (recorded, then live)
            t0 = time.perf_counter()
            params = {"answer": answer_id, "from": got}
            async with client.stream("GET", resume_url, params=params) as resp:
                async for _chunk in resp.aiter_raw():
                    out.append(time.perf_counter() - t0)
                    break
            # stop it: the next round starts from an idle upstream
            await client.delete(start_url, params={"answer": answer_id})
    return out


def main() -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        rs = RedisServer(tmp)
        redis_url = rs.url
        up_port = free_port()
        up = upstream(up_port)
        base = f"http://127.0.0.1:{up_port}/v1"
        ports = {name: free_port() for name in ("off", "memory", "redis-a", "redis-b")}
        procs = {
            "off": relay(ports["off"], base, "--no-resume"),
            "memory": relay(ports["memory"], base),
            "redis-a": relay(ports["redis-a"], base, "--store", redis_url),
            "redis-b": relay(ports["redis-b"], base, "--store", redis_url),
        }
        urls = {k: f"http://127.0.0.1:{p}/relay" for k, p in ports.items()}
        urls["direct"] = f"http://127.0.0.1:{up_port}/v1/chat/completions"
        first: dict[str, list[float]] = {k: [] for k in ("direct", "off", "memory", "redis-a")}
        p50s: dict[str, list[float]] = {k: [] for k in first}
        resumed: dict[str, list[float]] = {"memory": [], "redis same": [], "redis other": []}
        try:
            for name in first:  # warm up
                asyncio.run(sequential(urls[name], 5))
            for r in range(ROUNDS):
                order = list(first) if r % 2 == 0 else list(reversed(first))
                for name in order:
                    got = asyncio.run(sequential(urls[name], N))
                    first[name] += got
                    p50s[name].append(statistics.median(got))
                for name, (a, b) in {
                    "memory": ("memory", "memory"),
                    "redis same": ("redis-a", "redis-a"),
                    "redis other": ("redis-a", "redis-b"),
                }.items():
                    resumed[name] += asyncio.run(resume_latency(urls[a], urls[b], N // 2))
                print(f"round {r + 1} done", flush=True)
        finally:
            stop(*procs.values(), up)
            rs.stop()
    rows = [
        f"| first byte, one chat at a time ({ROUNDS} rounds x {N}) | p50 | p99 | "
        "p50 added to direct (median of rounds) |",
        "|---|---:|---:|---:|",
    ]
    labels = {
        "direct": "direct to the upstream",
        "off": "relay, --no-resume (no recording)",
        "memory": "relay, recording in memory (default)",
        "redis-a": "relay, recording in Redis",
    }
    base_p50 = statistics.median(p50s["direct"])
    for name, label in labels.items():
        added = statistics.median(p50s[name]) - base_p50
        rows.append(
            f"| {label} | {ms(pct(first[name], 0.5))} | {ms(pct(first[name], 0.99))} | "
            f"{added * 1000:+.2f} ms |"
        )
    on_off = statistics.median([m - o for m, o in zip(p50s["memory"], p50s["off"], strict=True)])
    rows += [
        "",
        f"recording in memory vs off: {on_off * 1000:+.2f} ms at p50 (median over rounds)",
        "",
        "| reconnect to first resumed byte | p50 | p99 |",
        "|---|---:|---:|",
    ]
    for name, label in (
        ("memory", "memory store (same relay)"),
        ("redis same", "Redis store, same relay process"),
        ("redis other", "Redis store, another relay process"),
    ):
        rows.append(f"| {label} | {ms(pct(resumed[name], 0.5))} | {ms(pct(resumed[name], 0.99))} |")
    print("\n".join(rows), flush=True)
    return rows


if __name__ == "__main__":
    main()
    sys.exit(0)
