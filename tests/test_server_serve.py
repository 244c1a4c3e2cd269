"""server/serve.py: the relay and ``build.py serve`` as real processes: a slowloris attack
neither exhausts file descriptors nor locks out a legitimate client nor floods the log, and
Ctrl+C ends open streams properly (not by uvicorn's forced close) and exits with one line of
output."""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
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
        # Connections still waiting for their headers are closed after the header timeout:
        # each read waits for that close (was: a 2.5 s sleep, then reads whose own 2 s
        # timeout counted as "closed", so the check could not fail).
        for s in attackers:
            s.settimeout(30)
            # A reset is closed too; a timeout is not, and fails here.
            with contextlib.suppress(ConnectionResetError, BrokenPipeError):
                assert s.recv(1) == b"", "the relay answered a connection without headers"
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


def ends_cleanly(body: Iterator[bytes]) -> bool:
    """Read the open stream to its end: True if the body was ended properly (the server
    ended it), False if the connection was cut under it (uvicorn's forced close after its
    graceful-shutdown timeout: what a stream that did not end itself on Ctrl+C gets)."""
    try:
        for _ in body:
            pass
    except httpx.RemoteProtocolError:
        return False
    return True


def open_stream(url: str, body: dict[str, Any]) -> tuple[httpx.Client, Any, Iterator[bytes]]:
    c = httpx.Client(timeout=30)
    resp = c.send(c.build_request("POST", url, json=body), stream=True)
    it = resp.iter_raw()
    next(it)  # the stream is open and flowing
    return c, resp, it


@pytest.mark.parametrize("second_ctrl_c", [False, True])
def test_ctrl_c_on_the_relay_ends_open_streams_properly_and_exits(
    upstream: Any, second_ctrl_c: bool
) -> None:
    up, live = upstream
    up.mode = "endless"
    relay = relay_proc(live.url)
    try:
        banner = relay.output()
        c, resp, body = open_stream(relay.url + "/relay", BODY)
        relay.proc.send_signal(signal.SIGINT)
        if second_ctrl_c:
            time.sleep(0.1)  # (any moment will do: the second one must not break the first)
            relay.proc.send_signal(signal.SIGINT)
        # The endless stream ended itself, properly, so the process did not wait for it
        # (was: "exits within 2 s", which a busy machine broke; 2 s is uvicorn's backstop).
        assert ends_cleanly(body)
        relay.proc.wait(30)
        resp.close()
        c.close()
        after = relay.output()[len(banner) :].strip().splitlines()
        assert after == ["pysse: stopped"], after
    finally:
        up.mode = "ok"
        relay.stop()


def test_ctrl_c_on_serve_ends_a_stalled_demo_stream_properly_and_exits() -> None:
    port = free_port()
    code = (
        "from pysse.server.app import create_app; from pysse.server.serve import run; "
        f"run(create_app(None, demo_pace=0.01), '127.0.0.1', {port})"
    )
    serve = Proc(["-c", code], port)
    try:
        stall = {"messages": [{"role": "user", "content": "/demo stall"}]}
        c, resp, body = open_stream(serve.url + "/v1/chat/completions", stall)
        # The demo holds the stream open for 5 minutes after its first third (at pace 0.01,
        # soon silent; Ctrl+C at any moment of it must end the stream properly).
        serve.proc.send_signal(signal.SIGINT)
        assert ends_cleanly(body)
        serve.proc.wait(30)
        resp.close()
        c.close()
        assert serve.output().strip().splitlines() == ["pysse: stopped"]
    finally:
        serve.stop()
