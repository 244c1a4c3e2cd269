"""The relay under load on loopback: 200 concurrent streaming chats through it, each checked
for its own exact answer; first-byte latency the relay adds (p50/p99, against the same
upstream without it, measured side by side); throughput; the relay's memory over rounds.
Then upstream connection reuse: the same relay with and without keep-alive against a TLS
upstream (a throwaway self-signed certificate made at run time, trusted through
``--ca-bundle``), rounds alternating so both see the same machine load.

Upstreams (the demo model) and relays run as separate processes, as in production.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from pysse import ChatStream
from tests.support import free_port

ROOT = Path(__file__).resolve().parents[1]
N = 200


def start(code: str, port: int, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
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


def stop(*procs: subprocess.Popen[bytes]) -> None:
    for proc in procs:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def upstream(port: int, cert: tuple[str, str] | None = None) -> subprocess.Popen[bytes]:
    tls = f", ssl_certfile={cert[0]!r}, ssl_keyfile={cert[1]!r}" if cert else ""
    return start(
        "import uvicorn; from pysse.server.app import create_app; "
        f"uvicorn.run(create_app(None, demo_pace=0.3), port={port}, log_level='warning'{tls})",
        port,
    )


def relay(port: int, up: str, *extra: str) -> subprocess.Popen[bytes]:
    args = ["--upstream", up, "--api-key-env", "BENCH_KEY", "--port", str(port), *extra]
    return start(
        f"from pysse.server.relay import main; main({args!r})", port, {"BENCH_KEY": "sk-bench"}
    )


def self_signed(directory: str) -> tuple[str, str, str]:
    """A certificate for 127.0.0.1 that is its own CA (cert, key, CA bundle = cert)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pysse bench")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = Path(directory) / "cert.pem", Path(directory) / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return str(cert_path), str(key_path), str(cert_path)


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


def ms(x: float) -> str:
    return f"{x * 1000:.1f} ms"


def direct_vs_relay(rounds: int) -> tuple[list[str], int]:
    up_port, relay_port = free_port(), free_port()
    up = upstream(up_port)
    rl = relay(relay_port, f"http://127.0.0.1:{up_port}/v1")
    direct_url = f"http://127.0.0.1:{up_port}/v1/chat/completions"
    relay_url = f"http://127.0.0.1:{relay_port}/relay"
    try:
        direct_fb, relay_fb, direct_t, relay_t, mem = [], [], [], [], []
        lost = 0
        for _ in range(rounds):
            fb, t, bad = asyncio.run(round_(direct_url))
            direct_fb += fb
            direct_t.append(t)
            lost += bad
            fb, t, bad = asyncio.run(round_(relay_url))
            print(
                f"round: relay first byte p50 {ms(pct(fb, 0.5))}, p99 {ms(pct(fb, 0.99))}, "
                f"max {ms(max(fb))}",
                flush=True,
            )
            relay_fb += fb
            relay_t.append(t)
            lost += bad
            mem.append(rss_kib(rl.pid))
        solo_d = asyncio.run(sequential(direct_url))
        solo_r = asyncio.run(sequential(relay_url))
    finally:
        stop(rl, up)
    rows = [
        f"| {N} concurrent chats, median of {rounds} rounds | direct to upstream | "
        "through the relay |",
        "|---|---:|---:|",
        f"| one chat at a time: first byte p50 | {ms(pct(solo_d, 0.5))} | {ms(pct(solo_r, 0.5))} |",
        f"| first byte p50 | {ms(pct(direct_fb, 0.5))} | {ms(pct(relay_fb, 0.5))} |",
        f"| first byte p99 | {ms(pct(direct_fb, 0.99))} | {ms(pct(relay_fb, 0.99))} |",
        f"| wall time for {N} chats | {statistics.median(direct_t):.2f} s | "
        f"{statistics.median(relay_t):.2f} s |",
        "",
        f"relay adds p50 {(pct(relay_fb, 0.5) - pct(direct_fb, 0.5)) * 1000:+.1f} ms, "
        f"p99 {(pct(relay_fb, 0.99) - pct(direct_fb, 0.99)) * 1000:+.1f} ms to the first "
        f"byte; answers lost or mixed up: {lost} of {2 * N * rounds}; relay RSS after "
        f"each round: {', '.join(f'{m / 1024:.0f} MiB' for m in mem)}",
    ]
    return rows, lost


def keepalive_vs_not(rounds: int) -> tuple[list[str], int]:
    """The same relay code with and without upstream connection reuse, TLS upstream."""
    with tempfile.TemporaryDirectory() as tmp:
        cert, key, ca = self_signed(tmp)
        up_port, on_port, off_port = free_port(), free_port(), free_port()
        up = upstream(up_port, (cert, key))
        base = f"https://127.0.0.1:{up_port}/v1"
        on = relay(on_port, base, "--ca-bundle", ca)
        off = relay(off_port, base, "--ca-bundle", ca, "--no-keepalive")
        urls = {
            "reuse": f"http://127.0.0.1:{on_port}/relay",
            "new": f"http://127.0.0.1:{off_port}/relay",
        }
        solo: dict[str, list[float]] = {"reuse": [], "new": []}
        crowd: dict[str, list[float]] = {"reuse": [], "new": []}
        wall: dict[str, list[float]] = {"reuse": [], "new": []}
        lost = 0
        try:
            for name in urls:  # warm both pools (and the upstream) once
                asyncio.run(sequential(urls[name], 3))
            for r in range(rounds):
                order = list(urls) if r % 2 == 0 else list(reversed(urls))
                for name in order:
                    solo[name] += asyncio.run(sequential(urls[name], 20))
                for name in order:
                    fb, t, bad = asyncio.run(round_(urls[name]))
                    crowd[name] += fb
                    wall[name].append(t)
                    lost += bad
                    print(
                        f"round {r + 1} {name}: p50 {ms(pct(fb, 0.5))}, "
                        f"p99 {ms(pct(fb, 0.99))}, max {ms(max(fb))}",
                        flush=True,
                    )
        finally:
            stop(on, off, up)
    rows = [
        f"| TLS upstream, median of {rounds} rounds | new connection per chat | "
        "connection reuse (default) | reuse / new |",
        "|---|---:|---:|---:|",
    ]
    for label, data, q in (
        ("one chat at a time: first byte p50", solo, 0.5),
        ("one chat at a time: first byte p99", solo, 0.99),
        (f"{N} concurrent: first byte p50", crowd, 0.5),
        (f"{N} concurrent: first byte p99", crowd, 0.99),
    ):
        new, reuse = pct(data["new"], q), pct(data["reuse"], q)
        rows.append(f"| {label} | {ms(new)} | {ms(reuse)} | {reuse / new:.2f}x |")
    new_w, reuse_w = statistics.median(wall["new"]), statistics.median(wall["reuse"])
    rows.append(
        f"| wall time for {N} chats | {new_w:.2f} s | {reuse_w:.2f} s | {reuse_w / new_w:.2f}x |"
    )
    return rows, lost


def main(rounds: int = 3) -> list[str]:
    rows, lost = direct_vs_relay(rounds)
    print("\n".join(rows), flush=True)
    tls_rows, tls_lost = keepalive_vs_not(rounds)
    print("\n".join(tls_rows), flush=True)
    if lost or tls_lost:
        raise SystemExit("answers were lost or mixed up")
    return [*rows, "", *tls_rows]


if __name__ == "__main__":
    only = sys.argv[1] if len(sys.argv) > 1 else ""
    if only == "tls":
        print("\n".join(keepalive_vs_not(3)[0]))
    else:
        main()
