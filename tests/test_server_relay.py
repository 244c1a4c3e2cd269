"""The reference relay against a fake upstream on loopback: byte-exact passthrough without
buffering, the key added and never leaked, Stop cancelling the upstream, and the guards."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from fake_upstream import ANSWER, DELTAS, ENDLESS, EVENTS, KEY, RATE_LIMITED, SLOW_FIRST
from pysse import ChatStream, ConfigError
from pysse.server.relay import RelayConfig, create_relay_app
from pysse.testing import ScriptServer
from support import LiveServer


@pytest.fixture
def upstream(sse_server: ScriptServer) -> ScriptServer:
    return sse_server.play(ANSWER)


def relay(up_url: str, **kw: Any) -> LiveServer:
    cfg = RelayConfig(
        upstream=up_url + "/v1",
        format="openai-chat",
        api_key=KEY,
        allow_origins=["http://page.example"],
        **kw,
    )
    return LiveServer(create_relay_app(cfg))


BODY = {"model": "gpt-test", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


def test_passthrough_is_byte_exact_and_adds_the_key(upstream: Any) -> None:
    up = upstream
    with relay(up.url) as r, httpx.Client() as c:
        resp = c.post(r.url + "/relay", json=BODY, headers={"origin": "http://page.example"})
        assert resp.status_code == 200
        assert resp.headers["x-accel-buffering"] == "no"
        assert resp.headers["access-control-allow-origin"] == "http://page.example"
        assert resp.content == b"".join(EVENTS)
        assert KEY not in resp.text
    assert up.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert json.loads(up.requests[0].body) == BODY
    cs = ChatStream()
    cs.feed(resp.content)
    assert cs.outcome == "completed" and cs.text == "".join(DELTAS)


def test_first_byte_is_not_buffered(upstream: Any) -> None:
    up = upstream
    up.play(SLOW_FIRST)
    with (
        relay(up.url) as r,
        httpx.Client() as c,
        c.stream("POST", r.url + "/relay", json=BODY) as resp,
    ):
        first = next(resp.iter_raw())
        got_first = time.perf_counter()
        assert first and EVENTS[0].startswith(first[: len(EVENTS[0])])
        # The upstream waits 2 s before its second write: receiving the first byte well
        # before that proves the relay forwarded it without waiting for more.
        assert got_first - up.last_request.received_at < 1.0


def test_client_disconnect_cancels_the_upstream(upstream: Any) -> None:
    up = upstream
    up.play(ENDLESS)
    with relay(up.url) as r, httpx.Client() as c:
        with c.stream("POST", r.url + "/relay", json=BODY) as resp:
            it = resp.iter_raw()
            next(it)
            next(it)
        # The client went away (Stop): the upstream generation must be cancelled.
        assert up.last_request.wait_disconnected(5), "upstream kept streaming after the client left"


def test_upstream_error_status_is_passed_through_as_json(upstream: Any) -> None:
    up = upstream
    up.play(RATE_LIMITED)
    with relay(up.url) as r, httpx.Client() as c:
        resp = c.post(r.url + "/relay", json=BODY)
        assert resp.status_code == 429
        assert resp.headers["retry-after"] == "12"
        assert resp.json()["error"]["message"] == "slow down"
        assert KEY not in resp.text


def test_guards(upstream: Any) -> None:
    up = upstream
    with (
        relay(up.url, max_body=2000, allowed_models=["gpt-test"], shared_secret="s3cret") as r,
        httpx.Client() as c,
    ):
        ok = {"x-relay-secret": "s3cret"}
        assert (
            c.post(
                r.url + "/relay", json=BODY, headers={**ok, "origin": "http://evil.example"}
            ).status_code
            == 403
        )
        assert c.post(r.url + "/relay", json=BODY).status_code == 401
        big = {**BODY, "messages": [{"role": "user", "content": "x" * 5000}]}
        assert c.post(r.url + "/relay", json=big, headers=ok).status_code == 413
        other = {**BODY, "model": "gpt-expensive"}
        assert c.post(r.url + "/relay", json=other, headers=ok).status_code == 400
        assert c.post(r.url + "/relay", content=b"not json", headers=ok).status_code == 400
        same = c.post(r.url + "/relay", json=BODY, headers={**ok, "origin": r.url})
        assert same.status_code == 200  # the relay's own origin is same-origin, not CORS
        pre = c.options(r.url + "/relay", headers={"origin": "http://page.example"})
        assert pre.status_code == 204
        assert c.post(r.url + "/relay", json=BODY, headers=ok).status_code == 200
    assert len(up.requests) == 2  # nothing refused reached the upstream


def test_unreachable_upstream_is_a_clear_error_without_the_key() -> None:
    cfg = RelayConfig(upstream="http://127.0.0.1:9/v1", api_key=KEY, connect_timeout=2)
    with LiveServer(create_relay_app(cfg)) as r, httpx.Client() as c:
        resp = c.post(r.url + "/relay", json=BODY)
        assert resp.status_code == 502
        assert "upstream" in resp.json()["error"]["message"]
        assert KEY not in resp.text


def test_config_urls_and_auth_per_format() -> None:
    assert (
        RelayConfig("https://api.openai.com/v1").url_for({})
        == "https://api.openai.com/v1/chat/completions"
    )
    assert (
        RelayConfig("https://x/v1/chat/completions").url_for({}) == "https://x/v1/chat/completions"
    )
    g = RelayConfig(
        "https://generativelanguage.googleapis.com/v1beta", format="gemini", api_key="k"
    )
    assert g.url_for({"model": "gemini-2.5-pro"}).endswith(
        "/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    )
    assert g.auth_headers() == {"x-goog-api-key": "k"}
    a = RelayConfig("https://api.anthropic.com/v1", format="anthropic", api_key=KEY)
    assert a.url_for({}) == "https://api.anthropic.com/v1/messages"
    assert a.auth_headers()["x-api-key"] == KEY
    assert KEY not in repr(a)


def test_a_missing_key_variable_is_a_config_error_naming_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PYSSE_NO_SUCH_KEY", raising=False)
    with pytest.raises(ConfigError, match="PYSSE_NO_SUCH_KEY is not set: export it"):
        RelayConfig.from_args("https://x/v1", "PYSSE_NO_SUCH_KEY", None, [])
