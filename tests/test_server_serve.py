"""server/serve.py: the relay and ``build.py serve`` as real processes: a slowloris attack
neither exhausts file descriptors nor locks out a legitimate client nor floods the log, and
Ctrl+C closes open streams and exits within 2 s with one line of output."""

from __future__ import annotations

import logging
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from fake_upstream import EVENTS, Upstream
from pysse.server.serve import RateLimit
from support import LiveServer, ServerProcess, free_port

BODY = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[Upstream, LiveServer]]:
    up = Upstream()
    with LiveServer(up.app) as live:
        yield up, live


def Proc(args: list[str], port: int, nofile: int | None = None) -> ServerProcess:
    return ServerProcess([sys.executable, *args], port, nofile)


def relay_proc(up_url: str, *extra: str, nofile: int | None = None) -> ServerProcess:
    port = free_port()
    return Proc(
        ["-m", "pysse.server.relay", "--upstream", up_url + "/v1", "--port", str(port), *extra],
        port,
        nofile,
    )


def test_slowloris_neither_exhausts_fds_nor_locks_out_a_real_client(upstream: Any) -> None:
    up, live = upstream
    up.mode = "ok"
    relay = relay_proc(live.url, "--max-connections", "40", "--header-timeout", "2", nofile=256)
    attackers: list[socket.socket] = []
    try:
        # 300 connections that never finish their headers: far more than the process may
        # open (256 descriptors) and than its connection cap (40).
        for _ in range(300):
            s = socket.socket()
            s.settimeout(0.3)
            try:
                s.connect(("127.0.0.1", relay.port))
                s.sendall(b"POST /relay HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            except OSError:
                s.close()
                continue
            s.settimeout(2)
            attackers.append(s)
        # A legitimate chat during the attack still gets its whole answer.
        for _ in range(3):
            with httpx.Client(timeout=10) as c:
                resp = c.post(relay.url + "/relay", json=BODY)
            assert resp.status_code == 200 and resp.content == b"".join(EVENTS)
        # Connections still waiting for their headers are closed after the header timeout.
        time.sleep(2.5)
        closed = 0
        for s in attackers:
            try:
                closed += s.recv(1) == b""
            except OSError:
                closed += 1
        assert closed == len(attackers)
        assert relay.proc.poll() is None
        log = relay.output()
        assert "Too many open files" not in log and "out of system resource" not in log
        assert len(log.splitlines()) < 10, log[-2000:]
    finally:
        for s in attackers:
            s.close()
        relay.stop()


def test_rate_limit_keeps_one_line_per_kind_per_interval() -> None:
    f = RateLimit(interval=60, burst=2)
    rec = logging.LogRecord("asyncio", logging.ERROR, "", 0, "accept failed: %s", ("x",), None)
    assert [f.filter(rec) for _ in range(5)] == [True, True, False, False, False]


def wait_exit(proc: subprocess.Popen[bytes], seconds: float) -> float:
    t0 = time.monotonic()
    proc.wait(seconds)
    return time.monotonic() - t0


def open_stream(url: str, body: dict[str, Any]) -> tuple[httpx.Client, Any]:
    c = httpx.Client(timeout=30)
    resp = c.send(c.build_request("POST", url, json=body), stream=True)
    next(resp.iter_raw())  # the stream is open and flowing
    return c, resp


@pytest.mark.parametrize("second_ctrl_c", [False, True])
def test_ctrl_c_on_the_relay_closes_open_streams_and_exits_fast(
    upstream: Any, second_ctrl_c: bool
) -> None:
    up, live = upstream
    up.mode = "endless"
    relay = relay_proc(live.url)
    try:
        banner = relay.output()
        c, resp = open_stream(relay.url + "/relay", BODY)
        relay.proc.send_signal(signal.SIGINT)
        if second_ctrl_c:
            time.sleep(0.1)
            relay.proc.send_signal(signal.SIGINT)
        assert wait_exit(relay.proc, 5) < 2.0
        resp.close()
        c.close()
        after = relay.output()[len(banner) :].strip().splitlines()
        assert after == ["pysse: stopped"], after
    finally:
        up.mode = "ok"
        relay.stop()


def test_ctrl_c_on_serve_closes_a_stalled_demo_stream_and_exits_fast() -> None:
    port = free_port()
    code = (
        "from pysse.server.app import create_app; from pysse.server.serve import run; "
        f"run(create_app(None, demo_pace=0.01), '127.0.0.1', {port})"
    )
    serve = Proc(["-c", code], port)
    try:
        stall = {"messages": [{"role": "user", "content": "/demo stall"}]}
        c, resp = open_stream(serve.url + "/v1/chat/completions", stall)
        time.sleep(0.3)  # now silent: the demo holds the stream open for 5 minutes
        serve.proc.send_signal(signal.SIGINT)
        assert wait_exit(serve.proc, 5) < 2.0
        resp.close()
        c.close()
        assert serve.output().strip().splitlines() == ["pysse: stopped"]
    finally:
        serve.stop()
