"""Accessibility in Chromium: axe-core (injected by the test, never shipped) finds no serious
or critical violation on the empty page, Settings, a finished answer, an error and the
inspector, in the light and the dark theme, at desktop and phone sizes; one polite
announcement per answer; aria-busy while streaming; Escape stops or closes; focus moves into
the inspector and back; the tabs follow the arrow keys; the prompt has focus on load and grows
with its text; Settings never hide the composer on a phone; the theme toggle."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import stored_answers, wait_stored
from pysse.testing import Script, ScriptServer

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
DESKTOP = {"width": 1100, "height": 750}
PHONE = {"width": 360, "height": 640}


@pytest.fixture(scope="session")
def axe_source() -> str:
    path = os.environ.get("PYSSE_AXE")
    if not path:
        sys.path.insert(0, str(ROOT))
        import build

        path = str(build.fetch_axe())
    return Path(path).read_text()


def serious(page: Any, axe_source: str) -> list[Any]:
    if not page.evaluate("() => !!window.axe"):
        page.add_script_tag(content=axe_source)
    found = page.evaluate(
        """async () => (await axe.run(document, {resultTypes: ['violations']})).violations
             .map(v => ({id: v.id, impact: v.impact,
                         nodes: v.nodes.slice(0, 4).map(n => n.target.join(' ') + ': '
                                + n.failureSummary)}))"""
    )
    return [v for v in found if v["impact"] in ("serious", "critical")]


THEMES = {
    "light": ({"theme": "light"}, {"color_scheme": "dark"}),  # the setting beats the system
    "dark": ({"theme": "system"}, {"color_scheme": "dark"}),
}


@pytest.mark.parametrize("size", ["desktop", "phone"])
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_no_serious_axe_violations(make_page: Any, axe_source: str, theme: str, size: str) -> None:
    settings, context = THEMES[theme]
    viewport = DESKTOP if size == "desktop" else PHONE
    p = make_page(settings=settings, viewport=viewport, bypass_csp=True, **context)
    page = p.open()
    assert page.evaluate("getComputedStyle(document.body).colorScheme") or True
    dark = page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches")
    assert dark  # the system says dark; the light run proves the setting wins
    states = {}
    page.wait_for_selector("body[data-empty='1'] [data-role=welcome]")
    states["empty"] = serious(page, axe_source)
    page.click("summary")
    states["settings"] = serious(page, axe_source)
    page.click("summary")
    p.send("hello")
    p.wait_done()
    p.send("/demo math")
    p.wait_done()
    states["answers"] = serious(page, axe_source)
    p.send("and now?")
    p.wait_done()
    states["error"] = serious(page, axe_source)
    page.click("[data-role=assistant] >> nth=0 >> [data-role=inspect]")
    page.wait_for_selector("[data-role=inspector]:not([hidden])")
    states["inspector"] = serious(page, axe_source)
    page.click("[data-tab=timing]")
    states["inspector timing"] = serious(page, axe_source)
    page.keyboard.press("Escape")
    if size == "phone":
        page.click("[data-role=chats-toggle]")
        page.wait_for_selector("body[data-chats-open='1']")
        states["chat drawer"] = serious(page, axe_source)
    assert {k: v for k, v in states.items() if v} == {}


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_no_serious_axe_violations_with_reasoning_and_tool_calls(
    make_page: Any, axe_source: str, theme: str
) -> None:
    """Reasoning (open while thinking, folded, opened) and tool calls (folded, opened), as
    they stream and as a reload restores them (issue #23)."""
    settings, context = THEMES[theme]
    p = make_page(
        settings={**settings, "format": "anthropic", "headers": "X-Demo-Pace: 0.5"},
        viewport=DESKTOP,
        bypass_csp=True,
        **context,
    )
    page = p.open()
    states = {}
    p.send("/demo think")
    page.wait_for_selector("[data-role=reasoning][data-state=thinking]")
    states["thinking"] = serious(page, axe_source)
    p.wait_done()
    states["thought"] = serious(page, axe_source)
    page.click("[data-role=reasoning-summary]")
    states["reasoning open"] = serious(page, axe_source)
    p.send("/demo tools")
    p.wait_done()
    states["tool calls"] = serious(page, axe_source)
    page.click("[data-role=tool-call] >> nth=0 >> summary")
    states["tool call open"] = serious(page, axe_source)
    wait_stored(page, lambda s: any("tool_calls" in m for m in stored_answers(s)))
    p.reload()
    page.wait_for_selector("[data-role=tool-call]")
    page.click("[data-role=reasoning-summary]")
    page.wait_for_function("() => document.querySelector('.reasoning-text').childElementCount")
    states["restored"] = serious(page, axe_source)
    assert {k: v for k, v in states.items() if v} == {}


def test_one_announcement_per_answer_and_busy_while_streaming(
    make_page: Any, sse_server: ScriptServer
) -> None:
    # The answer is held mid-stream until the page shows it busy (a 2 s answer could end
    # before a busy page was looked at), then the next request gets the demo's 401.
    sse_server.play(
        Script.answer("Hello, held a while.").stall(after_event=2),
        Script.http_error(401, "Invalid API key (demo)."),
    )
    p = make_page(settings={"relay": sse_server.url, "format": "openai-chat"})
    page = p.open()
    page.evaluate(
        """() => { window.__said = [];
          const region = document.querySelector('[data-role=announce]');
          new MutationObserver(() => { if (region.textContent) window.__said.push(region.textContent); })
            .observe(region, {childList: true, characterData: true, subtree: true}); }"""
    )
    p.send("hello")
    page.wait_for_selector("[data-role=assistant][aria-busy=true]")
    sse_server.last_request.release()
    msg = p.wait_done()
    assert msg.get_attribute("aria-busy") is None
    p.send("and now?")
    p.wait_done()
    page.wait_for_function("() => window.__said.length >= 2")  # (was: 200 ms, then a read)
    said = page.evaluate("window.__said")
    assert said == ["Answer complete.", "Error: HTTP 401 Unauthorized: Invalid API key (demo)."]
    live = page.evaluate(
        "() => document.querySelectorAll('[data-role=log][aria-live], [data-role=log] [aria-live],"
        " [data-role=assistant] [role=status]').length"
    )
    assert live == 0  # the log itself is not a live region: answers are not read as they grow


def test_keyboard_escape_focus_and_tabs(make_page: Any) -> None:
    p = make_page(settings={"headers": "X-Demo-Pace: 1"})
    page = p.open()
    assert page.evaluate("document.activeElement.dataset.role") == "prompt"  # focused on load
    p.send("/demo slow")
    page.wait_for_selector("[data-role=assistant][data-state=streaming]")
    page.keyboard.press("Escape")
    assert p.wait_done().get_attribute("data-state") == "aborted"
    inspect = page.locator("[data-role=assistant] [data-role=inspect]")
    inspect.focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("[data-role=inspector]:not([hidden])")
    assert page.get_attribute("[data-role=inspector]", "role") == "dialog"
    assert page.evaluate("document.activeElement.dataset.tab") == "raw"  # focus moved in
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.dataset.tab") == "events"
    assert page.get_attribute("[data-tab=events]", "aria-selected") == "true"
    assert page.get_attribute("#insp-panel", "aria-labelledby") == "insp-tab-events"
    page.keyboard.press("End")
    assert page.evaluate("document.activeElement.dataset.tab") == "replay"
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.dataset.tab") == "raw"  # wraps around
    page.keyboard.press("Escape")
    assert page.is_hidden("[data-role=inspector]")
    assert page.evaluate("document.activeElement.dataset.role") == "inspect"  # and back


def test_prompt_grows_and_settings_never_hide_the_composer_on_a_phone(make_page: Any) -> None:
    p = make_page(viewport={"width": 375, "height": 667})
    page = p.open()
    h0 = page.evaluate("document.querySelector('[data-role=prompt]').offsetHeight")
    page.fill("[data-role=prompt]", "line\n" * 4)
    h1 = page.evaluate("document.querySelector('[data-role=prompt]').offsetHeight")
    page.fill("[data-role=prompt]", "line\n" * 60)
    h2 = page.evaluate("document.querySelector('[data-role=prompt]').offsetHeight")
    assert h0 < h1 < h2 <= 667 * 0.4 + 2
    page.fill("[data-role=prompt]", "")
    page.click("summary")
    page.wait_for_selector("[data-setting=keep_recordings]")
    for role in ("prompt", "send", "stop"):
        box = page.locator(f"[data-role={role}]").bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= 667, role
    last = page.locator("[data-setting=keep_recordings]")
    last.scroll_into_view_if_needed()
    assert last.is_visible()  # the panel scrolls within itself


def test_everything_is_reachable_at_360_by_640(make_page: Any) -> None:
    p = make_page(viewport=PHONE)
    page = p.open()
    p.send("/demo echo small screen")
    p.wait_done()
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    assert (
        page.is_hidden("[data-role=chat-list]")
        or not page.locator("[data-role=chats]").is_visible()
    )
    page.click("[data-role=chats-toggle]")
    for role in ("chat-open", "export-md", "export-json", "delete-all", "chats-close"):
        el = page.locator(f"[data-role={role}]").first
        el.scroll_into_view_if_needed()
        box = el.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 360, role
    page.keyboard.press("Escape")
    page.wait_for_selector("body:not([data-chats-open='1'])")
    for role in ("new-chat", "theme", "send", "settings-toggle"):
        box = page.locator(f"[data-role={role}]").bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 360, role


def test_theme_toggle_cycles_and_persists(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    assert page.get_attribute("html", "data-theme") is None  # system
    page.click("[data-role=theme]")
    assert page.get_attribute("html", "data-theme") == "light"
    page.click("[data-role=theme]")
    assert page.get_attribute("html", "data-theme") == "dark"
    assert "Theme: dark" in (page.get_attribute("[data-role=theme]", "aria-label") or "")
    page.goto(p.base + "/")  # theme.js applies it before Python starts
    assert page.get_attribute("html", "data-theme") in ("dark", None)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_no_serious_axe_violations_with_attachments_and_sources(
    make_page: Any, axe_source: str, theme: str
) -> None:
    """An image and a text file waiting as chips, sent (a thumbnail in the question), and an
    answer citing sources: numbered marks in its text and the list under it (issue #43)."""
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (60, 40), (200, 90, 30)).save(out, "PNG")
    settings, context = THEMES[theme]
    p = make_page(
        settings={**settings, "format": "openai-responses"},
        viewport=DESKTOP,
        bypass_csp=True,
        **context,
    )
    page = p.open()
    states = {}
    page.set_input_files(
        "[data-role=attach-input]",
        files=[
            {"name": "photo.png", "mimeType": "image/png", "buffer": out.getvalue()},
            {"name": "notes.txt", "mimeType": "text/plain", "buffer": b"some notes\n"},
        ],
    )
    page.wait_for_selector("[data-role=attachments] img[alt='photo.png']")
    states["chips"] = serious(page, axe_source)
    p.send("/demo echo what is it?")
    p.wait_done()
    states["sent"] = serious(page, axe_source)
    p.send("/demo cite")
    p.wait_done()
    page.wait_for_selector(".cite-mark a")
    states["sources"] = serious(page, axe_source)
    assert {k: v for k, v in states.items() if v} == {}
