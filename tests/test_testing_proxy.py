"""The kit's CutProxy: bytes pass through unchanged both ways; ``cut()`` breaks the client's
stream mid-body (no clean end) and the server sees its client leave; new connections go
through after a cut."""

from __future__ import annotations

import httpx
import pytest

from pysse.errors import KitError
from pysse.testing import CutProxy, Script, ScriptServer


def test_bytes_pass_and_a_cut_breaks_the_stream(sse_server: ScriptServer) -> None:
    script = Script.answer("through the proxy " * 30).paced(0.02)
    sse_server.play(script)
    with CutProxy(sse_server.port) as proxy, httpx.Client(timeout=10) as c:
        whole = c.post(proxy.url + "/v1/chat/completions", json={"hi": 1})
        assert whole.content == script.sent
        assert sse_server.requests[0].json() == {"hi": 1}
        got = b""
        with (
            pytest.raises(httpx.HTTPError),
            c.stream("POST", proxy.url + "/x", json={}) as resp,
        ):
            for chunk in resp.iter_raw():
                got += chunk
                if len(got) > 100:
                    assert proxy.cut() >= 2  # the client's socket and the server's
        assert 100 < len(got) < len(script.sent)
        assert sse_server.last_request.wait_disconnected(5)  # the server saw it go
        again = c.post(proxy.url + "/v1/chat/completions", json={})
        assert again.content == script.sent  # the cable is back
        proxy.unplug()
        with pytest.raises(httpx.TransportError):
            c.post(proxy.url + "/v1/chat/completions", json={})
        assert proxy.refused == 1
        proxy.plug()
        assert c.post(proxy.url + "/v1/chat/completions", json={}).content == script.sent


def test_a_proxy_works_outside_a_with_block(sse_server: ScriptServer) -> None:
    # Issue 24: outside `with` its url was http://127.0.0.1:0 and connections were refused.
    sse_server.play(Script.answer("no with needed"))
    proxy = CutProxy(sse_server.port)
    try:
        assert proxy.port != 0 and proxy.url == f"http://127.0.0.1:{proxy.port}"
        with httpx.Client(timeout=30) as c:
            assert (
                c.post(proxy.url + "/v1", json={}).content == Script.answer("no with needed").sent
            )
    finally:
        proxy.close()
    proxy.close()  # twice is fine
    with pytest.raises(KitError, match="closed"):
        proxy.cut()
    with pytest.raises(httpx.TransportError), httpx.Client(timeout=30) as c:
        c.post(proxy.url + "/v1", json={})  # nobody listens any more


def test_a_with_block_closes_the_proxy(sse_server: ScriptServer) -> None:
    with CutProxy(sse_server.port) as proxy:
        pass
    with pytest.raises(KitError, match="closed"):
        proxy.cut()


def test_freeze_keeps_a_connection_open_and_silent(sse_server: ScriptServer) -> None:
    """A frozen connection is neither ended nor reset: the client hears nothing more and only
    its own read timeout can tell (what a phone does to a page in the background); the server
    does not see its client go; a new connection goes through."""
    script = Script.answer("frozen mid-answer " * 40).paced(0.01)
    sse_server.play(script)
    with CutProxy(sse_server.port) as proxy:
        got = b""
        with (
            httpx.Client(timeout=httpx.Timeout(30, read=1.0)) as c,
            pytest.raises(httpx.ReadTimeout),
            c.stream("POST", proxy.url + "/x", json={}) as resp,
        ):
            for chunk in resp.iter_raw():
                got += chunk
                if len(got) > 100 and not proxy.frozen:
                    assert proxy.freeze() == 1  # one client, with its upstream
        assert 100 < len(got) < len(script.sent)
        assert sse_server.last_request is not None
        with httpx.Client(timeout=30) as c:
            assert c.post(proxy.url + "/v1/chat/completions", json={}).content == script.sent
    with pytest.raises(KitError, match="closed"):
        proxy.freeze()
