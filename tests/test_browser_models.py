"""The composer's model picker (issue #43), in Chromium, against the demo relay: its
``GET /v1/models`` fills the picker (one demo model a format); a model chosen with the mouse,
then with the keyboard alone, is what the request names and what the answer's footer shows
(the demo answers as the model asked for); the chat keeps its choice through a reload; and
Regenerate after choosing another model makes a second version, each footer naming its
model. Also run with ``PYSSE_PAGE_THREAD=main`` (``build.py``'s MAIN_THREAD_MATRIX)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import LiveServer, Page, settled, stored_answers, wait_stored
from pysse.server.app import create_app
from pysse.server.config import RelayConfig
from pysse.server.routing import Upstream

pytestmark = pytest.mark.browser

PICKER = "[data-role=model-picker]"
OPTIONS = f"() => [...document.querySelectorAll('{PICKER} option')].map(o => o.textContent)"
CHOSEN = f"() => {{ const s = document.querySelector('{PICKER}'); return s.options[s.selectedIndex].textContent; }}"
FOOTERS = """() => [...document.querySelectorAll('[data-role=assistant]')].map(a => {
  const m = a.querySelector('[data-role=model]'); return m.hidden ? null : m.textContent; })"""
COUNT = "[data-role=assistant] >> nth=-1 >> [data-role=versions] .count"


def chosen(stored: dict[str, Any]) -> Any:
    """The stored chat's choice (one chat in the store)."""
    return stored["bodies"][0].get("choice") if stored.get("bodies") else None


def centre_click(page: Any, selector: str) -> None:
    box = page.locator(selector).last.bounding_box()
    assert box is not None, f"{selector} is not on screen"
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def filled(page: Any) -> list[str]:
    page.wait_for_function(f"() => document.querySelectorAll('{PICKER} option').length >= 5")
    names: list[str] = page.evaluate(OPTIONS)
    return names


def footers(page: Any, n: int) -> list[str | None]:
    page.wait_for_function(
        f"() => {{ const a = [...document.querySelectorAll('[data-role=assistant]')];"
        f" return a.length == {n} && a.every(x => x.dataset.state == 'completed'); }}"
    )
    got: list[str | None] = page.evaluate(FOOTERS)
    return got


def test_choose_a_model_with_the_mouse_send_reload_regenerate_with_another(
    make_page: Any,
) -> None:
    p = make_page()
    page = p.open()
    centre_click(page, "[data-role=settings-toggle]")  # Settings: where endpoints are set
    assert page.is_visible("[data-setting=endpoints]")
    names = filled(page)
    assert names[0] == "default model"  # Settings' own Model field (empty: the default)
    assert {"demo-openai-chat", "demo-anthropic", "demo-gemini"} <= set(names)
    assert any(u.endswith("/v1/models") for u in p.requests)
    hosts = {u.split("/")[2] for u in p.requests if u.startswith("http")}
    assert hosts == {p.base.split("/")[2]}  # no other host asked
    assert page.evaluate(CHOSEN) == "default model"
    centre_click(page, "[data-role=settings-toggle]")

    centre_click(page, PICKER)  # the mouse opens it; the option as the browser chooses it
    page.locator(PICKER).select_option(label="demo-anthropic")
    settled(page)
    page.fill("[data-role=prompt]", "hello")
    centre_click(page, "[data-role=send]")
    assert footers(page, 1) == ["demo-anthropic"]
    stored = wait_stored(page, lambda s: bool(chosen(s)))
    assert chosen(stored) == {"relay": "", "format": "anthropic", "model": "demo-anthropic"}

    page = p.reload()
    page.wait_for_function("() => document.querySelectorAll('[data-role=assistant]').length == 1")
    filled(page)
    assert page.evaluate(CHOSEN) == "demo-anthropic"  # the chat kept its choice
    assert footers(page, 1) == ["demo-anthropic"]

    centre_click(page, PICKER)
    page.locator(PICKER).select_option(label="demo-gemini")
    settled(page)
    centre_click(page, "[data-role=assistant] >> nth=-1 >> [data-role=regenerate]")
    page.wait_for_function(f"() => document.querySelector('{COUNT.split(' >> ')[0]}') !== null")
    page.wait_for_selector(f"{COUNT}:has-text('2/2')")
    assert footers(page, 1) == ["demo-gemini"]
    centre_click(page, "[data-role=assistant] >> nth=-1 >> [data-role=version-prev]")
    page.wait_for_selector(f"{COUNT}:has-text('1/2')")
    assert footers(page, 1) == ["demo-anthropic"]
    stored = wait_stored(
        page,
        lambda s: (
            sorted(a.get("model") or "" for a in stored_answers(s))
            == ["demo-anthropic", "demo-gemini"]
        ),
    )
    assert chosen(stored)["model"] == "demo-gemini"


def test_the_same_with_the_keyboard_alone(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    filled(page)
    page.focus("[data-role=prompt]")
    page.keyboard.press("Tab")  # the picker is next to the prompt
    assert page.evaluate("() => document.activeElement.dataset.role") == "model-picker"
    label = page.evaluate("() => document.querySelector('label[for=model-picker]').textContent")
    assert label == "Model"
    page.keyboard.press("ArrowDown")  # the next model: the demo's first
    settled(page)
    first = page.evaluate(CHOSEN)
    assert first.startswith("demo-")
    page.keyboard.press("Shift+Tab")
    page.keyboard.type("hi")
    page.keyboard.press("Enter")
    assert footers(page, 1) == [first]

    page.keyboard.press("Tab")  # back to the picker: another model
    page.keyboard.press("ArrowDown")
    settled(page)
    second = page.evaluate(CHOSEN)
    assert second != first and second.startswith("demo-")
    for _ in range(12):  # back through the answer's actions to Regenerate
        page.keyboard.press("Shift+Tab")
        if page.evaluate("() => document.activeElement.dataset.role") == "regenerate":
            break
    assert page.evaluate("() => document.activeElement.dataset.role") == "regenerate"
    page.keyboard.press("Enter")
    page.wait_for_selector(f"{COUNT}:has-text('2/2')")
    assert footers(page, 1) == [second]
    page = p.reload()
    filled(page)
    assert page.evaluate(CHOSEN) == second
    body = json.dumps(footers(page, 1))
    assert second in body


def test_a_model_the_relay_does_not_serve_says_how_to_fix_it(browser: Any, site: Path) -> None:
    """The reference relay with two upstreams, each listing its model: the picker lists
    them; a model typed in Settings that neither serves gets the relay's 400, shown as a
    sentence naming the fix; the question stays."""
    unreachable = "http://127.0.0.1:9/v1"  # (never asked: the relay refuses first)
    cfg = RelayConfig(
        unreachable,
        upstreams=[
            Upstream("a", unreachable, models=("gpt-x",)),
            Upstream("b", unreachable, "anthropic", models=("claude-x",)),
        ],
    )
    with LiveServer(create_app(site, relay=cfg)) as server:
        p = Page(browser, server.url, settings={"model": "no-such-model"})
        try:
            page = p.open()
            page.wait_for_function(
                f"() => document.querySelectorAll('{PICKER} option').length == 3"
            )
            assert page.evaluate(OPTIONS) == ["no-such-model", "gpt-x", "claude-x"]
            p.send("which model?")
            art = p.wait_done()
            said = art.inner_text()
            assert "HTTP 400" in said and "is not served by this relay" in said, said
            assert "pick another in the Model menu beside Send" in said
            assert "which model?" in page.inner_text("[data-role=user]")
            assert p.errors == []
        finally:
            p.close()
