"""Saying how the relay is doing (``pysse.server.metrics``): the lag monitor warns once the
event loop runs late for a while with streams open, at most once per quiet period, never for
one hiccup; ``GET /metrics`` reports open streams, chunks, the store and the lag (and needs
the shared secret when the relay has one)."""

from __future__ import annotations

import logging

import httpx
import pytest

from pysse.server.metrics import LagMonitor
from pysse.server.relay import RelayConfig, create_relay_app
from pysse.testing import Script, ScriptServer
from support import LiveServer


def test_lag_is_logged_when_sustained_with_streams_open_and_rate_limited(
    caplog: pytest.LogCaptureFixture,
) -> None:
    mon = LagMonitor(interval=0.25, threshold=0.2, sustained=3, quiet=10)
    open_streams = [0]
    mon.busy = lambda: open_streams[0] > 0
    mon.describe = lambda: f"{open_streams[0]} streams open"
    with caplog.at_level(logging.WARNING, logger="pysse.relay"):
        assert not any(mon.tick(lag, t) for t, lag in [(1, 0.5), (2, 0.01), (3, 0.9)])
        assert not any(mon.tick(0.5, t) for t in (4, 5, 6))  # behind, but nothing is open
        open_streams[0] = 12
        assert mon.tick(0.7, 7)  # the fourth late tick in a row, streams open: one line
        assert not any(mon.tick(2.0, t) for t in (8, 9, 16))  # quiet for 10 s
        assert mon.tick(0.3, 17.5)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and mon.late == 10
    assert "falling behind" in lines[0] and "ran up to 900 ms late" in lines[0]
    assert "12 streams open" in lines[0] and "run more relay processes" in lines[0]
    assert "ran up to 2000 ms late" in lines[1]  # the worst since the last line


def test_metrics_report_streams_store_and_lag(sse_server: ScriptServer) -> None:
    sse_server.play(Script.answer("counted " * 20).chunked(8))
    cfg = RelayConfig(upstream=sse_server.url + "/v1", shared_secret="s3cret-value")
    with LiveServer(create_relay_app(cfg)) as relay, httpx.Client(timeout=10) as c:
        secret = {"x-relay-secret": "s3cret-value"}
        assert c.get(relay.url + "/metrics").status_code == 401
        resp = c.post(relay.url + "/relay", json={"model": "m", "messages": []}, headers=secret)
        got = c.get(relay.url + "/metrics", headers=secret)
    assert got.status_code == 200 and got.headers["content-type"].startswith("text/plain")
    values = dict(line.split(" ") for line in got.text.splitlines())
    assert values["pysse_relay_open_streams"] == "0"
    assert int(values["pysse_relay_chunks_relayed"]) >= 1
    assert int(values["pysse_relay_store_bytes"]) == len(resp.content) > 100
    assert values["pysse_relay_store_answers"] == "1"
    for name in ("loop_lag_seconds", "evictions", "not_kept", "cpu_seconds", "rss_bytes"):
        assert f"pysse_relay_{name}" in values
