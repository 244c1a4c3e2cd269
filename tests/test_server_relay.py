"""The reference relay against a fake upstream on loopback: byte-exact passthrough without
buffering, the key added and never leaked, Stop cancelling the upstream, the guards, and
every hostile client or upstream of issue #16 (items 6-14) ending as a clean JSON error."""

from __future__ import annotations

import gzip
import json
import logging
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from fake_upstream import (
    ANSWER,
    DELTAS,
    ENDLESS,
    EVENTS,
    KEY,
    RATE_LIMITED,
    SLOW_FIRST,
    RawUpstream,
    Upstream,
)
from pysse import ChatStream, ConfigError
from pysse.server.app import create_app
from pysse.server.relay import RelayConfig, create_relay_app
from pysse.testing import ScriptServer
from raw_http import read_to_eof
from support import LiveServer

PAGE = "http://page.example"


@pytest.fixture(scope="module")
def shared() -> Iterator[tuple[Upstream, LiveServer]]:
    up = Upstream()
    with LiveServer(up.app) as live:
        yield up, live


@pytest.fixture
def scripted(sse_server: ScriptServer) -> ScriptServer:
    """The kit's scripted upstream, answering the known answer (tests may play others)."""
    return sse_server.play(ANSWER)


@pytest.fixture
def upstream(shared: tuple[Upstream, LiveServer]) -> tuple[Upstream, LiveServer]:
    up, live = shared
    up.mode = "ok"
    up.headers.clear()
    up.bodies.clear()
    up.targets.clear()
    up.cancelled.clear()
    up.body_sent = 0
    return up, live


def relay(up_url: str, **kw: Any) -> LiveServer:
    kw.setdefault("format", "openai-chat")
    kw.setdefault("api_key", KEY)
    kw.setdefault("allow_origins", [PAGE])
    cfg = RelayConfig(upstream=up_url + ("/v1beta" if kw["format"] == "gemini" else "/v1"), **kw)
    return LiveServer(create_relay_app(cfg))


BODY = {"model": "gpt-test", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


def error_of(resp: httpx.Response) -> dict[str, Any]:
    assert resp.headers["content-type"].startswith("application/json"), resp.text[:200]
    assert resp.headers["x-content-type-options"] == "nosniff"
    err = resp.json()["error"]
    assert isinstance(err, dict) and err["message"]
    return err


# -- the basics -----------------------------------------------------------------------------


def test_passthrough_is_byte_exact_and_adds_the_key(scripted: ScriptServer) -> None:
    up = scripted
    with relay(up.url) as r, httpx.Client() as c:
        resp = c.post(r.url + "/relay", json=BODY, headers={"origin": PAGE})
        assert resp.status_code == 200
        assert resp.headers["x-accel-buffering"] == "no"
        assert resp.headers["access-control-allow-origin"] == PAGE
        assert resp.headers["x-pysse-format"] == "openai-chat"
        assert resp.content == b"".join(EVENTS)
        assert KEY not in resp.text
    assert up.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert json.loads(up.requests[0].body) == BODY
    cs = ChatStream()
    cs.feed(resp.content)
    assert cs.outcome == "completed" and cs.text == "".join(DELTAS)


def test_first_byte_is_not_buffered(scripted: ScriptServer) -> None:
    up = scripted
    up.play(SLOW_FIRST)
    with (
        relay(up.url) as r,
        httpx.Client(timeout=30) as c,
        c.stream("POST", r.url + "/relay", json=BODY) as resp,
    ):
        # The upstream sends nothing after its first event until the client leaves: getting
        # that event at all proves the relay forwarded it without waiting for more (was: "in
        # under 1 s", which a busy machine broke).
        first = next(resp.iter_raw())
        assert first and EVENTS[0].startswith(first[: len(EVENTS[0])])
        assert not up.last_request.ended  # still held upstream


def test_client_disconnect_cancels_the_upstream_without_resume(scripted: ScriptServer) -> None:
    # With resume on (the default) a disconnect is not Stop: tests/test_server_resume.py.
    up = scripted
    up.play(ENDLESS)
    with relay(up.url, resume=False) as r, httpx.Client() as c:
        with c.stream("POST", r.url + "/relay", json=BODY) as resp:
            it = resp.iter_raw()
            next(it)
            next(it)
        # The client went away (Stop): the upstream generation must be cancelled.
        assert up.last_request.wait_disconnected(5), "upstream kept streaming after the client left"


def test_upstream_error_status_is_passed_through_as_json(scripted: ScriptServer) -> None:
    up = scripted
    up.play(RATE_LIMITED)
    with relay(up.url) as r, httpx.Client() as c:
        resp = c.post(r.url + "/relay", json=BODY)
        assert resp.status_code == 429
        assert resp.headers["retry-after"] == "12"
        assert error_of(resp)["message"] == "slow down"
        assert KEY not in resp.text


def test_guards(scripted: ScriptServer) -> None:
    up = scripted
    with (
        relay(up.url, max_body=2000, allowed_models=["gpt-test"], shared_secret="s3cret") as r,
        httpx.Client() as c,
    ):
        ok = {"x-relay-secret": "s3cret"}
        evil = c.post(r.url + "/relay", json=BODY, headers={**ok, "origin": "http://evil.example"})
        assert evil.status_code == 403
        assert c.post(r.url + "/relay", json=BODY).status_code == 401
        big = {**BODY, "messages": [{"role": "user", "content": "x" * 5000}]}
        assert c.post(r.url + "/relay", json=big, headers=ok).status_code == 413
        other = {**BODY, "model": "gpt-expensive"}
        assert c.post(r.url + "/relay", json=other, headers=ok).status_code == 400
        assert c.post(r.url + "/relay", content=b"not json", headers=ok).status_code == 400
        # A standalone relay serves no page: its own address is just another origin.
        assert (
            c.post(r.url + "/relay", json=BODY, headers={**ok, "origin": r.url}).status_code == 403
        )
        pre = c.options(r.url + "/relay", headers={"origin": PAGE})
        assert pre.status_code == 204
        assert c.post(r.url + "/relay", json=BODY, headers=ok).status_code == 200
    assert len(up.requests) == 1  # nothing refused reached the upstream


def test_unreachable_upstream_is_a_clear_error_without_the_key() -> None:
    cfg = RelayConfig(upstream="http://127.0.0.1:9/v1", api_key=KEY, connect_timeout=2)
    with LiveServer(create_relay_app(cfg)) as r, httpx.Client() as c:
        resp = c.post(r.url + "/relay", json=BODY)
        assert resp.status_code == 502
        assert "upstream" in error_of(resp)["message"]
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
    assert g.url_for({"model": "models/gemini-2.5-pro"}).endswith(
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
    with pytest.raises(ConfigError, match="not an origin"):
        RelayConfig.from_args("https://x/v1", None, None, ["https://chat.example/app"])
    with pytest.raises(ConfigError, match="not a URL"):
        RelayConfig.from_args("api.openai.com/v1", None, None, [])


def test_a_keyless_upstream_needs_no_key(upstream: Any) -> None:
    up, live = upstream
    cfg = RelayConfig.from_args(live.url + "/v1", None, "openai-chat", [])
    with LiveServer(create_relay_app(cfg)) as r, httpx.Client() as c:
        assert c.post(r.url + "/relay", json=BODY).status_code == 200
    assert "authorization" not in up.headers[0]


# -- item 6: the model can never shape the upstream URL --------------------------------------


@pytest.mark.parametrize(
    "model",
    ["../../admin/delete?x=", "a/b", "x:generateContent", "..", "a%2F..", "m\r\nX-Evil: 1", "é"],
)
def test_gemini_model_cannot_shape_the_path(upstream: Any, model: str) -> None:
    up, live = upstream
    body = {"model": model, "contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    with relay(live.url, format="gemini") as r, httpx.Client() as c:
        resp = c.post(r.url + "/relay", json=body)
        assert resp.status_code == 400
        assert error_of(resp)["type"] == "invalid_model"
    assert up.targets == []  # nothing, and above all not POST /admin/delete with the key


def test_gemini_valid_model_goes_into_the_path(upstream: Any) -> None:
    up, live = upstream
    body = {"model": "gemini-2.5-flash", "contents": [{"role": "user", "parts": [{"text": "x"}]}]}
    with relay(live.url, format="gemini") as r, httpx.Client() as c:
        c.post(r.url + "/relay", json=body)
    assert up.targets == ["/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"]
    assert up.headers[0]["x-goog-api-key"] == KEY


# -- item 7: DNS rebinding ------------------------------------------------------------------


def test_dns_rebinding_page_is_refused_even_when_host_agrees(upstream: Any) -> None:
    up, live = upstream
    cfg = RelayConfig(upstream=live.url + "/v1", api_key=KEY)
    with LiveServer(create_app(None, relay=cfg)) as s, httpx.Client() as c:
        port = s.port
        evil = f"http://rebind.evil.example:{port}"
        resp = c.post(
            s.url + "/relay",
            json=BODY,
            headers={"host": f"rebind.evil.example:{port}", "origin": evil},
        )
        assert resp.status_code == 403
        assert "--allow-origin " + evil in error_of(resp)["message"]
        assert up.bodies == []
        for own in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
            assert c.post(s.url + "/relay", json=BODY, headers={"origin": own}).status_code == 200


# -- item 8 (body half): a body that trickles in is cut off ---------------------------------


def test_a_request_body_that_trickles_in_gets_408(upstream: Any) -> None:
    up, live = upstream
    with relay(live.url, body_timeout=1.0) as r:
        # Half a body, and the rest never: only the relay's own timeout can answer (the
        # socket waits for it, however long a busy machine takes; was: "within 4 s").
        head, body = r.url.removeprefix("http://"), b'{"model": "gpt-test", "messages": []}'
        sock = socket.create_connection(("127.0.0.1", r.port), timeout=30)
        sock.sendall(
            f"POST /relay HTTP/1.1\r\nHost: {head}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body[:22]
        )
        reply = read_to_eof(sock)
    assert reply.startswith(b"HTTP/1.1 408 "), reply[:200]
    assert up.bodies == []


# -- item 9: an error body is read to a bound, within deadlines ------------------------------


@pytest.mark.parametrize("mode", ["big-500", "endless-500"])
def test_huge_or_endless_error_bodies_are_cut(upstream: Any, mode: str) -> None:
    up, live = upstream
    up.mode = mode
    with relay(live.url, max_error_body=4096) as r, httpx.Client(timeout=30) as c:
        resp = c.post(r.url + "/relay", json=BODY)  # the endless one ends only if it is cut
        assert resp.status_code == 500
        assert "cut at 4096 bytes" in error_of(resp)["message"]
        assert len(resp.content) < 10_000
    assert up.cancelled.wait(30), "the relay kept reading the error body"
    assert up.body_sent < 8 * 1024 * 1024  # not 50 MiB (TCP buffers hold a little more)


# -- item 10: compression ---------------------------------------------------------------------


def test_relay_asks_for_identity_and_decodes_an_upstream_that_gzips_anyway(upstream: Any) -> None:
    up, live = upstream
    up.mode = "gzip"
    with relay(live.url) as r, httpx.Client() as c:
        resp = c.post(r.url + "/relay", json=BODY, headers={"accept-encoding": "identity"})
        assert resp.status_code == 200
        assert "content-encoding" not in resp.headers
        assert not resp.content.startswith(b"\x1f\x8b")
        assert resp.content == b"".join(EVENTS)
    assert up.headers[0]["accept-encoding"] == "identity"
    assert gzip.decompress(gzip.compress(b"x")) == b"x"


def test_an_encoding_the_relay_cannot_decode_is_a_clean_502(upstream: Any) -> None:
    up, live = upstream
    up.mode = "br"
    with relay(live.url) as r, httpx.Client() as c:
        resp = c.post(r.url + "/relay", json=BODY)
        assert resp.status_code == 502 and "content-encoding" in error_of(resp)["message"]


# -- item 11: a key echoed by the upstream is scrubbed ----------------------------------------


def test_key_echoed_in_an_error_body_is_scrubbed(upstream: Any) -> None:
    up, live = upstream
    up.mode = "echo-400"
    with relay(live.url) as r, httpx.Client() as c:
        resp = c.post(r.url + "/relay", json=BODY)
        assert resp.status_code == 400
        assert KEY not in resp.text and "[redacted]" in resp.text


def test_key_echoed_in_the_stream_is_scrubbed_even_across_chunks(upstream: Any) -> None:
    up, live = upstream
    up.mode = "echo-stream"
    with relay(live.url) as r, httpx.Client() as c:
        resp = c.post(r.url + "/relay", json=BODY)
        assert KEY not in resp.text and "auth was [redacted]!" in resp.text
        cs = ChatStream()
        cs.feed(resp.content)
        assert cs.outcome == "completed"


# -- item 12: duplicate keys -----------------------------------------------------------------


def test_duplicate_keys_cannot_bypass_the_model_allow_list(upstream: Any) -> None:
    up, live = upstream
    raw = b'{"model": "expensive", "model": "gpt-test", "messages": []}'
    with relay(live.url, allowed_models=["gpt-test"]) as r, httpx.Client() as c:
        resp = c.post(r.url + "/relay", content=raw)
        assert resp.status_code == 400 and error_of(resp)["type"] == "duplicate_key"
        escaped = b'{"model": "expensive", "mod\\u0065l": "gpt-test"}'
        assert c.post(r.url + "/relay", content=escaped).status_code == 400
        assert c.post(r.url + "/relay", content=b'{"model": NaN}').status_code == 400
    assert up.bodies == []


# -- item 13: whatever the upstream or client sends, a clean JSON error ---------------------


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        (b"HTTP/1.1 700 Weird\r\ncontent-length: 2\r\n\r\nno", "unexpected status 700"),
        (b"HTTP/1.1 302 Found\r\nlocation: http://x/\r\ncontent-length: 0\r\n\r\n", "redirect"),
        (b"HTTP/1.1 204 No Content\r\n\r\n", "unexpected status 204"),
        (b"garbage\r\n\r\n", "could not reach"),
    ],
)
def test_odd_upstream_statuses_are_clean_502s(raw: bytes, needle: str) -> None:
    with RawUpstream(raw) as up:
        cfg = RelayConfig(upstream=up.url + "/v1", api_key=KEY, connect_timeout=2)
        with LiveServer(create_relay_app(cfg)) as r, httpx.Client() as c:
            resp = c.post(r.url + "/relay", json=BODY)
            assert resp.status_code == 502
            assert needle in error_of(resp)["message"]


def test_upstream_html_is_never_passed_through(upstream: Any) -> None:
    up, live = upstream
    up.mode = "html"
    with relay(live.url) as r, httpx.Client() as c:
        resp = c.post(r.url + "/relay", json=BODY)
        assert resp.status_code == 502
        message = error_of(resp)["message"]
        assert "text/html, not an event stream" in message and "Portal — Sign in" in message
        assert "<script>" not in resp.text


@pytest.mark.parametrize("fmt", ["openai-chat", "gemini"])
def test_control_characters_in_a_model_name_are_a_400(upstream: Any, fmt: str) -> None:
    _up, live = upstream
    with relay(live.url, format=fmt) as r, httpx.Client() as c:
        resp = c.post(r.url + "/relay", json={**BODY, "model": "gpt\r\nX-Evil: 1"})
        assert resp.status_code == 400 and error_of(resp)["type"] == "invalid_model"
        assert c.post(r.url + "/relay", json={**BODY, "model": 5}).status_code == 400


@pytest.mark.parametrize("body", [b"[" * 100_000, b'{"a":' * 50_000 + b"1" + b"}" * 50_000])
def test_deeply_nested_json_is_a_clean_400(upstream: Any, body: bytes) -> None:
    _up, live = upstream
    with relay(live.url, max_body=1 << 20) as r, httpx.Client() as c:
        resp = c.post(r.url + "/relay", content=body)
        assert resp.status_code == 400 and error_of(resp)["type"] == "too_deep"


# -- item 14: keep-alives are not progress --------------------------------------------------


def read_endless(client: httpx.Client, url: str, comments: int = 600) -> tuple[bytes, float]:
    """POST and read an answer whose upstream never ends by itself: the body, and the seconds
    it took. Only the relay can end it; if it does not, the test fails after ``comments``
    keep-alives have come through (a count: a busy machine delivers fewer, never more)."""
    t0 = time.monotonic()
    got = b""
    with client.stream("POST", url, json=BODY) as resp:
        for chunk in resp.iter_raw():
            got += chunk
            assert got.count(b"\n: ") < comments, "the relay never ended the endless answer"
    return got, time.monotonic() - t0


def test_only_keepalives_end_the_stream_after_the_content_timeout(upstream: Any) -> None:
    up, live = upstream
    up.mode = "keepalive-only"
    with relay(live.url, content_timeout=1.0) as r, httpx.Client(timeout=30) as c:
        body, took = read_endless(c, r.url + "/relay")
    assert took >= 0.9  # not before the timeout (a bound no busy machine can break)
    assert body.rstrip().endswith(b": pysse relay: stream ended, only keep-alives for 1 s")
    cs = ChatStream()
    cs.feed(body)
    cs.close()
    assert cs.outcome == "truncated"
    assert up.cancelled.wait(30)


def test_a_total_deadline_ends_a_long_answer(upstream: Any) -> None:
    up, live = upstream
    up.mode = "endless"
    with relay(live.url, max_duration=1.0) as r, httpx.Client(timeout=30) as c:
        body, took = read_endless(c, r.url + "/relay")
    assert took >= 0.9
    assert b"the answer took over 1 s" in body


# -- refusals the page can read, and one log line each --------------------------------------


def test_refusals_carry_cors_headers_and_are_logged_once(
    upstream: Any, caplog: pytest.LogCaptureFixture
) -> None:
    up, live = upstream
    caplog.set_level(logging.INFO, logger="pysse.relay")
    other = "http://other.example"
    with relay(live.url, shared_secret="s3cret") as r, httpx.Client() as c:
        pre = c.options(
            r.url + "/relay",
            headers={"origin": other, "access-control-request-method": "POST"},
        )
        assert pre.status_code == 403
        resp = c.post(r.url + "/relay", json=BODY, headers={"origin": other})
        assert resp.status_code == 403
        assert resp.headers["access-control-allow-origin"] == other  # readable ...
        assert "access-control-allow-headers" not in resp.headers  # ... grants nothing
        assert error_of(resp)["message"] == (
            f"this relay does not allow the origin {other}; start it with --allow-origin {other}"
        )
        wrong = c.post(
            r.url + "/relay", json=BODY, headers={"origin": PAGE, "x-relay-secret": "nope"}
        )
        assert wrong.status_code == 401 and wrong.headers["access-control-allow-origin"] == PAGE
        assert "wrong relay secret" in error_of(wrong)["message"]
        info = c.get(r.url + "/relay", headers={"origin": PAGE}).json()
        assert info["relay"] == "pysse" and "x-relay-secret" in info["allow_headers"]
        assert info["secret_required"] is True
        pre = c.options(
            r.url + "/relay",
            headers={"origin": PAGE, "access-control-request-headers": "content-type, x-custom"},
        )
        assert "x-custom" not in pre.headers["access-control-allow-headers"]
    lines = [rec.getMessage() for rec in caplog.records if rec.name == "pysse.relay"]
    assert len(lines) == 4, lines
    assert "--allow-header x-custom" in lines[-1]
    assert all(KEY not in line and "s3cret" not in line and "nope" not in line for line in lines)
    assert up.bodies == []


def test_allowed_extra_headers_are_listed_in_the_preflight(upstream: Any) -> None:
    _up, live = upstream
    with relay(live.url, allow_headers=["X-Custom"]) as r, httpx.Client() as c:
        pre = c.options(r.url + "/relay", headers={"origin": PAGE})
        assert "x-custom" in pre.headers["access-control-allow-headers"]


# -- native paths -------------------------------------------------------------------------------


def test_native_path_works_and_other_formats_paths_say_where_to_go(upstream: Any) -> None:
    _up, live = upstream
    with relay(live.url) as r, httpx.Client() as c:
        resp = c.post(r.url + "/v1/chat/completions", json=BODY)
        assert resp.content == b"".join(EVENTS)
        wrong = c.post(r.url + "/v1/messages", json=BODY)
        assert wrong.status_code == 404
        assert "POST to /v1/chat/completions or /relay" in error_of(wrong)["message"]


def test_gemini_native_path_takes_the_model_from_the_path(upstream: Any) -> None:
    up, live = upstream
    body = {"contents": [{"role": "user", "parts": [{"text": "x"}]}]}
    with relay(live.url, format="gemini") as r, httpx.Client() as c:
        c.post(r.url + "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", json=body)
        bad = c.post(r.url + "/v1beta/models/..%2F..%2Fadmin:streamGenerateContent", json=body)
        assert bad.status_code in (400, 404)
    assert up.targets == ["/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"]


def test_the_openai_sdk_streams_through_the_relay(upstream: Any) -> None:
    import openai  # the real SDK (in the test extra): a missing one is a failure, not a skip

    up, live = upstream
    with relay(live.url) as r:
        client = openai.OpenAI(base_url=r.url + "/v1", api_key="not-the-real-key", max_retries=0)
        stream = client.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
        assert text == "".join(DELTAS)
        up.mode = "429"
        with pytest.raises(openai.RateLimitError, match="slow down"):
            client.chat.completions.create(model="gpt-test", messages=[], stream=True)
    assert up.headers[0]["authorization"] == f"Bearer {KEY}"  # the relay's key, not the SDK's


# -- the demo server: clean 400s (issue #16 item 16) ---------------------------------------


@pytest.fixture(scope="module")
def demo_server() -> Iterator[LiveServer]:
    with LiveServer(create_app(None, demo_pace=0.01)) as live:
        yield live


@pytest.mark.parametrize(
    ("headers", "body"),
    [
        ({"x-demo-seed": "abc"}, {"messages": [{"role": "user", "content": "hi"}]}),
        ({}, {"messages": [{"role": "user", "content": [{"text": 1}]}]}),
        ({}, b"[" * 100_000),
        ({}, b'{"messages": [], "messages": []}'),
    ],
)
def test_demo_answers_bad_requests_with_clean_400s(
    demo_server: LiveServer, headers: dict[str, str], body: Any
) -> None:
    with httpx.Client() as c:
        kw = {"content": body} if isinstance(body, bytes) else {"json": body}
        resp = c.post(demo_server.url + "/v1/chat/completions", headers=headers, **kw)
        assert resp.status_code == 400
        error_of(resp)
