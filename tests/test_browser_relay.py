"""The page against a real relay (``build.py serve --upstream``): it streams the upstream's
answer, and Stop in the page cancels the upstream generation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import LiveServer, Page, wait_until
from fake_upstream import ANSWER, DELTAS, ENDLESS, KEY
from pysse.server.app import create_app
from pysse.testing import ScriptServer

pytestmark = pytest.mark.browser


@pytest.fixture
def relayed(
    site: Path, monkeypatch: pytest.MonkeyPatch, sse_server: ScriptServer
) -> Iterator[tuple[ScriptServer, LiveServer]]:
    monkeypatch.setenv("PYSSE_TEST_KEY", KEY)
    up = sse_server.play(ANSWER)
    app = create_app(
        site,
        upstream=up.url + "/v1",
        api_key_env="PYSSE_TEST_KEY",
        upstream_format="openai-chat",
    )
    with LiveServer(app) as page_server:
        yield up, page_server


def test_page_streams_through_the_relay_and_stop_cancels_upstream(
    browser: Any, relayed: tuple[ScriptServer, LiveServer]
) -> None:
    up, server = relayed
    p = Page(browser, server.url)
    try:
        page = p.open()
        p.send("hi")
        msg = p.wait_done()
        assert msg.get_attribute("data-state") == "completed"
        assert msg.get_attribute("data-text") == "".join(DELTAS)
        assert up.requests[0].headers["authorization"] == f"Bearer {KEY}"
        assert msg.get_attribute("data-url").endswith("/relay")
        assert KEY not in page.content()

        up.play(ENDLESS)
        p.send("go on forever")
        page.wait_for_function(
            "() => document.querySelectorAll('[data-role=assistant]')"
            "[1]?.dataset.text === undefined && document.querySelectorAll("
            "'[data-role=assistant]').length == 2"
        )
        # The upstream is generating and the page has its first bytes (was: 500 ms, after
        # which a busy relay might not have asked the upstream yet: then last_request was the
        # first, finished answer)
        up.wait_for_requests(2, timeout=30)
        wait_until(page, "async () => (await pysse.rawHex(1)).length > 0", timeout=30)
        page.click("[data-role=stop]")
        assert p.wait_done(1).get_attribute("data-state") == "aborted"
        assert up.requests[1].wait_disconnected(30), "the upstream kept generating after Stop"
        assert p.errors == []
    finally:
        p.close()
