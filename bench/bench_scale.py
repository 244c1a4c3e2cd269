"""The relay at scale (``python build.py bench --only scale``, issue #22): thousands of slow
streams through one relay process, then through several sharing Redis.

Setup, as in the issue: an upstream that sends one event every 500 ms for 30 s per stream
(60 events, then ``data: [DONE]``), N streams opened over 10 s, on loopback. Each phase
runs the same load twice, side by side in time: straight to the upstream (the baseline)
and through the relay, so the latency the relay adds is measured against the same machine.

* **lost**: streams that did not get all 60 events and ``[DONE]`` by the deadline;
* **latency**: each event carries the upstream's send time; the client's receive time minus
  it, per event; the table gives the relay's p50/p99 minus the direct run's;
* **CPU**: user + system seconds of each process over the phase (relay, client, upstream),
  and the relay's per delivered event; **RSS**: the relay's peak and after the streams end.

The upstream and the client are lean on purpose (asyncio protocols, no HTTP library): they
share the machine's two cores with the relay, and their CPU is reported beside it. Then the
floor: what uvicorn plus httpx cost per chunk at their smallest (an ASGI app that only
sends, an httpx loop that only reads), measured the same way. Environment: ``SCALE_N``
(default 5000), ``SCALE_PROCS`` (default 2), ``SCALE_ONLY`` (comma-separated phase names),
``SCALE_ROUNDS`` (rounds of the costs phase, default 1), ``SCALE_COMPARE`` (another
checkout's tree: its relay in the costs phase too).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EVENTS = 60
PACE = 0.5
RAMP = 10.0
SLACK = 30.0  # a stream not done this long after its last event is lost


def raise_fd_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- the upstream: one event per PACE seconds per request, chunked ---------------------------


class Upstream(asyncio.Protocol):
    """A minimal HTTP/1.1 server: any POST gets an OpenAI-style event stream, EVENTS events
    PACE seconds apart, each stamped with its send time; keep-alive."""

    def __init__(self, events: int, pace: float) -> None:
        self.events = events
        self.pace = pace
        self.buf = b""
        self.transport: asyncio.Transport | None = None
        self.streaming = False
        self.close_after = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if self.streaming:
            return
        head_end = self.buf.find(b"\r\n\r\n")
        if head_end < 0:
            return
        head = self.buf[:head_end].decode("latin-1").lower()
        length = 0
        for line in head.split("\r\n"):
            if line.startswith("content-length:"):
                length = int(line.split(":", 1)[1])
        if len(self.buf) < head_end + 4 + length:
            return
        self.buf = self.buf[head_end + 4 + length :]
        self.close_after = "connection: close" in head
        self.streaming = True
        assert self.transport is not None
        self.transport.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\ncache-control: no-cache\r\n\r\n"
        )
        loop = asyncio.get_running_loop()
        loop.call_soon(self.send, 0)

    def send(self, i: int) -> None:
        t = self.transport
        if t is None or t.is_closing():
            return
        if i < self.events:
            body = (
                b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":'
                b'{"content":"w'
                + str(i).encode()
                + b' "}}],"t":'
                + repr(time.time()).encode()
                + b"}\n\n"
            )
            t.write(b"%x\r\n%s\r\n" % (len(body), body))
            asyncio.get_running_loop().call_later(self.pace, self.send, i + 1)
            return
        body = b"data: [DONE]\n\n"
        t.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))
        self.streaming = False
        if self.close_after:
            t.close()
            return
        if self.buf:
            self.data_received(b"")

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None


async def serve_upstream(port: int, events: int, pace: float) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: Upstream(events, pace), "127.0.0.1", port, backlog=4096
    )
    async with server:
        await server.serve_forever()


# -- the client: N streams over RAMP seconds, latency per event ------------------------------


class Reader(asyncio.Protocol):
    """One stream's client side: sends the POST, reads the raw response, finds the events'
    send stamps (``"t":<time>}``) across chunk and read boundaries, and ``[DONE]``."""

    def __init__(self, request: bytes, lat: list[float], done: asyncio.Future[int]) -> None:
        self.request = request
        self.lat = lat
        self.done = done
        self.tail = b""
        self.events = 0
        self.finished = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        now = time.time()
        buf = self.tail + data
        pos = 0
        while True:
            i = buf.find(b'"t":', pos)
            if i < 0:
                break
            j = buf.find(b"}", i)
            if j < 0:
                break
            self.lat.append(now - float(buf[i + 4 : j]))
            self.events += 1
            pos = j
        if b"[DONE]" in buf:
            self.finished = True
        self.tail = buf[max(pos, len(buf) - 40) :]

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(self.events if self.finished else -self.events)


async def run_client(
    targets: list[tuple[int, str]], n: int, ramp: float, deadline: float, events: int = EVENTS
) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    lat: list[float] = []
    body = json.dumps(
        {"model": "bench", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    ).encode()
    results: list[int] = []
    failed = 0

    async def one(k: int) -> None:
        nonlocal failed
        port, path = targets[k % len(targets)]
        req = (
            f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
        ).encode() + body
        done: asyncio.Future[int] = loop.create_future()
        try:
            transport, _ = await loop.create_connection(
                lambda: Reader(req, lat, done), "127.0.0.1", port
            )
        except OSError:
            failed += 1
            return
        try:
            results.append(await asyncio.wait_for(done, deadline))
        except TimeoutError:
            results.append(0)
        finally:
            transport.close()

    t0 = time.perf_counter()
    tasks = []
    for k in range(n):
        at = t0 + ramp * k / n
        wait = at - time.perf_counter()
        if wait > 0:
            await asyncio.sleep(wait)
        tasks.append(asyncio.create_task(one(k)))
    await asyncio.gather(*tasks)
    took = time.perf_counter() - t0
    complete = sum(1 for r in results if r == events)
    lat.sort()
    return {
        "streams": n,
        "complete": complete,
        "lost": n - complete,
        "refused": failed,
        "events": len(lat),
        "p50": lat[len(lat) // 2] if lat else None,
        "p99": lat[min(len(lat) - 1, int(len(lat) * 0.99))] if lat else None,
        "max": lat[-1] if lat else None,
        "wall": took,
    }


# -- the orchestration ------------------------------------------------------------------------


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def wait_port(port: int, proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), 0.2):
                return
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"{what} on {port} did not start")


def spawn(
    args: list[str], port: int, what: str, env: dict[str, str] | None = None, cwd: str | None = None
) -> Any:
    proc = subprocess.Popen(
        [sys.executable, *args],
        cwd=cwd or ROOT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=open(Path(tempfile.gettempdir()) / f"pysse-scale-{what}-{port}.log", "wb"),  # noqa: SIM115
    )
    wait_port(port, proc, what)
    return proc


def stop(*procs: subprocess.Popen[bytes]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    for proc in procs:
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def relay_proc(
    up_port: int, store: list[str], extra: list[str] | None = None, tree: str | None = None
) -> tuple[Any, int]:
    """A relay process; ``tree``: another checkout's pysse (``SCALE_COMPARE``) instead of
    this one's."""
    port = free_port()
    args = ["-m", "pysse.server.relay", "--upstream", f"http://127.0.0.1:{up_port}/v1"]
    args += ["--port", str(port), "--max-connections", "12000", "--api-key-env", "SCALE_KEY"]
    args += [*store, *(extra or [])]
    env = {"SCALE_KEY": "sk-scale-bench-key", **({"PYTHONPATH": tree} if tree else {})}
    return spawn(args, port, "relay", env, cwd=tree), port


def client(targets: list[tuple[int, str]], n: int, **load: float) -> dict[str, Any]:
    spec = json.dumps({"targets": targets, "n": n, **load})
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.bench_scale", "client", spec],
        cwd=ROOT,
        stdout=subprocess.PIPE,
    )
    out, _ = proc.communicate()
    result: dict[str, Any] = json.loads(out)
    result["pid_cpu"] = result.pop("cpu")
    return result


def measured(
    targets: list[tuple[int, str]], n: int, up: Any, relays: list[Any], **load: float
) -> dict[str, Any]:
    """One load against ``targets``, with the CPU of each process over it and the relays'
    peak RSS (sampled every 0.5 s)."""
    up0 = cpu_s(up.pid)
    r0 = [cpu_s(r.pid) for r in relays]
    peak = [0.0] * len(relays)
    box: dict[str, Any] = {}
    import threading

    th = threading.Thread(target=lambda: box.update(client(targets, n, **load)))
    th.start()
    while th.is_alive():
        for i, r in enumerate(relays):
            peak[i] = max(peak[i], rss_mib(r.pid))
        th.join(0.5)
    res = box
    res["upstream_cpu"] = cpu_s(up.pid) - up0
    res["relay_cpu"] = sum(cpu_s(r.pid) - c for r, c in zip(relays, r0, strict=True))
    res["relay_peak_rss"] = sum(peak)
    time.sleep(1.0)
    res["relay_rss_after"] = sum(rss_mib(r.pid) for r in relays)
    return res


def phase(name: str, n: int, store: list[str], procs: int) -> dict[str, Any]:
    up_port = free_port()
    up = spawn(["-m", "bench.bench_scale", "upstream", str(up_port)], up_port, "upstream")
    relays = []
    try:
        ports = []
        for _ in range(procs):
            r, port = relay_proc(up_port, store)
            relays.append(r)
            ports.append(port)
        idle = sum(rss_mib(r.pid) for r in relays)
        direct = measured([(up_port, "/v1/chat/completions")], n, up, relays)
        via = measured([(p, "/relay") for p in ports], n, up, relays)
        via["relay_rss_idle"] = idle
        resumed = cross_resume(ports) if procs > 1 and "redis" in " ".join(store) else None
    finally:
        stop(*relays, up)
    out = {"name": name, "n": n, "procs": procs, "direct": direct, "relay": via}
    if resumed is not None:
        out["resume"] = resumed
    print(json.dumps(out), flush=True)
    return out


def cross_resume(ports: list[int], count: int = 20) -> dict[str, int]:
    """Any process serves a resume: answers started on the first relay, dropped after three
    events, resumed from byte 0 through another relay process, and compared byte for byte
    with what the first one sent (all at once: each answer takes 30 s)."""
    return asyncio.run(_cross_resume(ports, count))


async def _cross_resume(ports: list[int], count: int) -> dict[str, int]:
    import httpx

    body = {"model": "bench", "stream": True, "messages": [{"role": "user", "content": "hi"}]}

    async def one(c: httpx.AsyncClient, k: int) -> bool:
        async with c.stream("POST", f"http://127.0.0.1:{ports[0]}/relay", json=body) as resp:
            answer_id = resp.headers["x-pysse-answer-id"]
            first = b""
            async for chunk in resp.aiter_raw():
                first += chunk
                if first.count(b'"t":') >= 3:
                    break  # drop the connection after three events
        other = ports[1 + k % (len(ports) - 1)]
        again = await c.get(
            f"http://127.0.0.1:{other}/relay", params={"answer": answer_id, "from": 0}
        )
        whole = again.content
        return again.status_code == 200 and whole.startswith(first) and b"[DONE]" in whole

    async with httpx.AsyncClient(timeout=120) as c:
        got = await asyncio.gather(*(one(c, k) for k in range(count)))
    return {"resumed_elsewhere": sum(got), "failed": count - sum(got)}


def costs(store: list[str], tree: str | None = None) -> dict[str, float]:
    """The relay's CPU per request and per chunk, each measured where the other is small:
    2,000 one-event answers over 20 s (100 new streams a second), then 200 streams of 300
    events 50 ms apart (4,000 chunks a second), less the first's per-request cost.
    ``tree``: measure another checkout's relay (``relay_proc``)."""
    out: dict[str, float] = {}
    for label, n, events, pace, ramp in (
        ("request", 2000, 1, 0.001, 20.0),
        ("chunk", 200, 300, 0.05, 2.0),
    ):
        up_port = free_port()
        up = spawn(
            ["-m", "bench.bench_scale", "upstream", str(up_port), str(events), str(pace)],
            up_port,
            "upstream",
        )
        relay, port = relay_proc(up_port, store, tree=tree)
        try:
            load = {"events": events, "pace": pace, "ramp": ramp}
            direct = measured([(up_port, "/v1/chat/completions")], n, up, [relay], **load)
            via = measured([(port, "/relay")], n, up, [relay], **load)
        finally:
            stop(relay, up)
        if label == "request":
            out["relay CPU per request"] = via["relay_cpu"] / n * 1e6
            out["upstream CPU per request"] = direct["upstream_cpu"] / n * 1e6
            out["client CPU per request (direct)"] = direct["pid_cpu"] / n * 1e6
        else:
            per_request = out.get("relay CPU per request", 0.0) * n / 1e6
            out["relay CPU per chunk"] = (via["relay_cpu"] - per_request) / via["events"] * 1e6
            out["upstream CPU per chunk"] = direct["upstream_cpu"] / direct["events"] * 1e6
            out["client CPU per chunk (direct)"] = direct["pid_cpu"] / direct["events"] * 1e6
            out["lost"] = via["lost"] + direct["lost"]
    return out


def floor(n_streams: int = 200, events: int = 300) -> dict[str, float]:
    """The smallest loops: uvicorn sending chunks from a bare ASGI app (h11 and httptools),
    and httpx reading them; CPU per chunk of each process (300 chunks a stream, so that a
    request's own cost is a small part of it)."""
    out: dict[str, float] = {}
    for http in ("h11", "httptools"):
        port = free_port()
        code = (
            "import asyncio, uvicorn\n"
            "async def app(scope, receive, send):\n"
            "    if scope['type'] != 'http': return\n"
            "    await send({'type': 'http.response.start', 'status': 200, 'headers': "
            "[(b'content-type', b'text/event-stream')]})\n"
            f"    for i in range({events}):\n"
            "        await send({'type': 'http.response.body', 'body': b'data: ' + b'x' * 150 "
            "+ b'\\n\\n', 'more_body': True})\n"
            "        await asyncio.sleep(0.005)\n"
            "    await send({'type': 'http.response.body', 'body': b''})\n"
            f"uvicorn.run(app, port={port}, http={http!r}, log_level='warning', "
            "lifespan='off', backlog=4096)\n"
        )
        try:
            proc = spawn(["-c", code], port, f"floor-{http}")
        except SystemExit:
            continue  # httptools not installed
        try:
            s0 = cpu_s(proc.pid)
            reader = subprocess.run(
                [sys.executable, "-m", "bench.bench_scale", "httpx", str(port), str(n_streams)],
                cwd=ROOT,
                capture_output=True,
                check=True,
            )
            got = json.loads(reader.stdout)
            chunks = got["chunks"]
            out[f"uvicorn {http} send, us/chunk"] = (cpu_s(proc.pid) - s0) / chunks * 1e6
            out["httpx aiter_raw read, us/chunk"] = got["cpu"] / chunks * 1e6
        finally:
            stop(proc)
    return out


async def httpx_reader(port: int, n: int) -> int:
    import httpx

    limits = httpx.Limits(max_connections=n, max_keepalive_connections=0)
    chunks = 0
    async with httpx.AsyncClient(limits=limits, timeout=60) as c:

        async def one() -> None:
            nonlocal chunks
            async with c.stream("GET", f"http://127.0.0.1:{port}/") as resp:
                async for _ in resp.aiter_raw():
                    chunks += 1

        await asyncio.gather(*(one() for _ in range(n)))
    return chunks


def cost_table(rounds: int) -> list[str]:
    """``costs`` for each relay variant, ``rounds`` times in a rotating order (so that each
    variant meets the machine's load at every point of the run): the median of each, and
    its range when there are several rounds. With ``SCALE_COMPARE=DIR`` (another checkout,
    e.g. ``git archive OLD pysse | tar -x -C DIR``) its relay is measured in the same
    rounds, first column."""
    variants: list[tuple[str, list[str], str | None]] = [
        ("memory", [], None),
        ("memory, uvloop", ["--loop", "uvloop"], None),
        ("--no-resume", ["--no-resume"], None),
    ]
    compare = os.environ.get("SCALE_COMPARE")
    if compare:
        variants.insert(0, (f"memory, {Path(compare).name}", [], compare))
    samples: list[list[dict[str, float]]] = [[] for _ in variants]
    for r in range(rounds):
        for k in range(len(variants)):
            i = (k + r) % len(variants)
            _, store, tree = variants[i]
            samples[i].append(costs(store, tree))
            print(f"costs round {r + 1}, {variants[i][0]}: {samples[i][-1]}", flush=True)
    rows = [
        f"| the relay's costs, measured apart (median of {rounds}) | "
        + " | ".join(v[0] for v in variants)
        + " |",
        "|---|" + "---:|" * len(variants),
    ]
    for key in samples[0][0]:
        unit = "" if key == "lost" else " us"
        cells = []
        for got in samples:
            values = sorted(g[key] for g in got)
            cell = f"{values[len(values) // 2]:.0f}{unit}"
            if len(values) > 1 and key != "lost":
                cell += f" ({values[0]:.0f}-{values[-1]:.0f})"
            cells.append(f"{sum(values):.0f}" if key == "lost" else cell)
        rows.append(f"| {key} | {' | '.join(cells)} |")
    return rows


def fmt_ms(x: float | None) -> str:
    return "-" if x is None else f"{x * 1000:.1f} ms"


def table(results: list[dict[str, Any]]) -> list[str]:
    rows = [
        "| phase | N | relay procs | lost (direct / relay) | latency p50 direct -> relay | "
        "p99 direct -> relay | added p99 | relay CPU per event | relay CPU | client CPU | "
        "upstream CPU | relay RSS idle / peak / after |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        d, v = r["direct"], r["relay"]
        added = v["p99"] - d["p99"] if v["p99"] is not None and d["p99"] is not None else None
        per = v["relay_cpu"] / v["events"] * 1e6 if v["events"] else float("nan")
        rows.append(
            f"| {r['name']} | {r['n']} | {r['procs']} | {d['lost']} / {v['lost']} | "
            f"{fmt_ms(d['p50'])} -> {fmt_ms(v['p50'])} | {fmt_ms(d['p99'])} -> "
            f"{fmt_ms(v['p99'])} | {fmt_ms(added)} | {per:.0f} us | {v['relay_cpu']:.1f} s | "
            f"{v['pid_cpu']:.1f} s (direct {d['pid_cpu']:.1f} s) | {v['upstream_cpu']:.1f} s | "
            f"{v['relay_rss_idle']:.0f} / {v['relay_peak_rss']:.0f} / "
            f"{v['relay_rss_after']:.0f} MiB |"
        )
    for r in results:
        if "resume" in r:
            rows.append("")
            rows.append(
                f"{r['name']}: answers started on relay 1 and resumed from byte 0 through "
                f"another relay process: {r['resume']['resumed_elsewhere']} byte-exact, "
                f"{r['resume']['failed']} failed"
            )
    return rows


def redis_url(directory: str) -> tuple[Any, str]:
    from pysse.testing.redis import RedisServer

    server = RedisServer(directory)
    return server, server.url


def main() -> list[str]:
    raise_fd_limit()
    n = int(os.environ.get("SCALE_N", "5000"))
    procs = int(os.environ.get("SCALE_PROCS", "2"))
    only = set(filter(None, os.environ.get("SCALE_ONLY", "").split(",")))
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        rs, url = redis_url(tmp)
        try:
            plan: list[tuple[str, list[str], int]] = [
                ("memory", [], 1),
                ("memory-uvloop", ["--loop", "uvloop"], 1),
                ("no-resume", ["--no-resume"], 1),
                ("redis", ["--store", url], 1),
                (f"memory x{procs}", [], procs),
                (f"redis x{procs}", ["--store", url], procs),
            ]
            for name, store, k in plan:
                if only and name not in only:
                    continue
                results.append(phase(name, n, store, k))
                print(f"load average: {os.getloadavg()[0]:.2f}", flush=True)
        finally:
            rs.stop()
    rows = table(results)
    if not only or "costs" in only:
        rows += ["", *cost_table(int(os.environ.get("SCALE_ROUNDS", "1")))]
    if not only or "floor" in only:
        fl = floor()
        rows += ["", "| the floor (200 streams, 300 chunks each) | CPU per chunk |", "|---|---:|"]
        rows += [f"| {k} | {v:.1f} us |" for k, v in fl.items()]
    rows += ["", f"load average after: {os.getloadavg()[0]:.2f} (2 cores)"]
    print("\n".join(rows), flush=True)
    return rows


def _cpu_self() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "main"
    if cmd == "upstream":
        raise_fd_limit()
        signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
        events = int(sys.argv[3]) if len(sys.argv) > 3 else EVENTS
        pace = float(sys.argv[4]) if len(sys.argv) > 4 else PACE
        asyncio.run(serve_upstream(int(sys.argv[2]), events, pace))
    elif cmd == "client":
        raise_fd_limit()
        spec = json.loads(sys.argv[2])
        targets = [tuple(t) for t in spec["targets"]]
        res = asyncio.run(
            run_client(
                targets,  # type: ignore[arg-type]
                spec["n"],
                spec.get("ramp", RAMP),
                spec.get("events", EVENTS) * spec.get("pace", PACE) + SLACK,
                spec.get("events", EVENTS),
            )
        )
        res["cpu"] = _cpu_self()
        print(json.dumps(res))
    elif cmd == "httpx":
        raise_fd_limit()
        got = asyncio.run(httpx_reader(int(sys.argv[2]), int(sys.argv[3])))
        print(json.dumps({"chunks": got, "cpu": _cpu_self()}))
    else:
        main()
