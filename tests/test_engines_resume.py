"""Resuming in every engine (issue #27): the real relay on its own origin behind a TCP proxy,
the testing kit's ScriptServer as the provider. A cable pulled mid-answer (a TCP reset) and a
connection a phone silenced in the background both end with exactly the text an uncut answer
has, from one upstream request; multi-byte characters cut anywhere arrive whole."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import LiveServer
from pysse.call.reconnect import REVIVE_SILENCE_MS
from pysse.server.relay import RelayConfig, create_relay_app
from pysse.testing import CutProxy, Script, ScriptServer

pytestmark = pytest.mark.browser

TEXT = "Resuming is exact: é 東京 🙂, every byte once. " * 12
# 2 to 24 bytes a write: characters of 2, 3 and 4 bytes are split between reads (and so
# between a cut connection and its resume); TextDecoder streaming is never involved, the
# page decodes in Python, and this proves it in each engine.
PACED = Script.answer(TEXT).chunked("random", sizes=(2, 24), seed=3).paced(0.004)


class Relay:
    def __init__(self, up: ScriptServer, page_origin: str) -> None:
        cfg = RelayConfig(upstream=up.url + "/v1", allow_origins=[page_origin])
        self.relay = LiveServer(create_relay_app(cfg)).__enter__()
        self.proxy = CutProxy(self.relay.port).__enter__()
        # (long idle timeout: only the page's own revive can resume a silenced connection)
        self.settings = {
            "relay": self.proxy.url + "/relay",
            "format": "openai-chat",
            "headers": "",
            "idle_s": 120,
        }

    def close(self) -> None:
        self.proxy.__exit__()
        self.relay.__exit__()


@pytest.fixture
def relay(sse_server: ScriptServer, engine_server: LiveServer) -> Iterator[Relay]:
    sse_server.play(PACED)
    r = Relay(sse_server, engine_server.url)
    yield r
    r.close()


def received(chat: Any) -> int:
    return len(str(chat.page.evaluate("() => pysse.rawHex(-1)"))) // 2


def wait_silent(chat: Any, seconds: float) -> int:
    """Wait until the page has received nothing for ``seconds``; how much it had then."""
    got = received(chat)
    while True:
        time.sleep(seconds)
        now = received(chat)
        if now == got:
            return got
        got = now


def test_a_tcp_reset_mid_answer_resumes_to_the_same_text(
    open_chat: Any, relay: Relay, sse_server: ScriptServer
) -> None:
    chat = open_chat(relay.settings)
    chat.send("hi")
    chat.page.wait_for("async () => (await pysse.rawHex(-1)).length >= 600")
    assert relay.proxy.cut() >= 1
    msg = chat.wait_done()
    assert (msg["state"], msg["text"]) == ("completed", TEXT)  # nothing twice, nothing lost
    assert msg["resumes"] >= 1
    assert chat.raw() == PACED.sent
    assert len(sse_server.requests) == 1  # resumed from the relay's record


@pytest.mark.parametrize("how", ["visible again", "back-forward cache"])
def test_a_connection_silenced_in_the_background_is_revived_on_return(
    open_chat: Any, relay: Relay, sse_server: ScriptServer, how: str
) -> None:
    chat = open_chat(relay.settings)
    chat.send("hi")
    chat.page.wait_for("async () => (await pysse.rawHex(-1)).length >= 400")
    chat.page.evaluate(HIDE)
    assert relay.proxy.freeze() >= 1  # the system kills the connection, silently
    if how == "visible again":
        # Silence is what marks the connection dead: wait until it has lasted long enough
        # *as the page saw it* (bytes already on their way when the proxy froze can reach a
        # worker of a loaded machine late, and each one restarts its silence).
        before = wait_silent(chat, REVIVE_SILENCE_MS / 1000 + 0.5)
        chat.page.evaluate(SHOW)
    else:  # restored from the back-forward cache: dead whatever the silence
        before = received(chat)
        chat.page.evaluate(SHOW)
        chat.page.evaluate(BFCACHE)
    msg = chat.wait_done(timeout=60)  # (the idle timeout, 120 s, would come far later)
    assert (msg["state"], msg["text"]) == ("completed", TEXT)
    assert msg["resumes"] == 1 and before < len(PACED.sent)
    assert len(sse_server.requests) == 1


HIDE = """() => { Object.defineProperty(document, 'visibilityState',
  { configurable: true, get: () => 'hidden' });
  document.dispatchEvent(new Event('visibilitychange')); }"""
SHOW = """() => { Object.defineProperty(document, 'visibilityState',
  { configurable: true, get: () => 'visible' });
  document.dispatchEvent(new Event('visibilitychange')); }"""
BFCACHE = "() => window.dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true }))"
