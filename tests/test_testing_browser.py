"""docs/testing-kit.md's example, as a real test: a saved stream
replayed into the bundled page at 1-byte chunks, Stop, a drop mid-answer, a stall. The block
between the markers is the one in docs/testing-kit.md, verbatim (checked below), so it cannot rot."""

# --- docs example: begin ---
# test_my_page.py: `page` comes from pytest-playwright, `sse_server` from pysse[testing]
import json
from pathlib import Path

from playwright.sync_api import expect

from pysse.testing import Script

SAVED = Script.from_file(Path(__file__).parent / "fixtures" / "openai_chat_text.sse")


def ask(page, app_url, relay, question, **settings):
    # the bundled page reads its relay URL from its saved settings; tell yours your way
    saved = json.dumps({"relay": relay, **settings})
    page.add_init_script(f"localStorage.setItem('pysse.settings.v1', {json.dumps(saved)})")
    page.goto(app_url)
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    page.fill("[data-role=prompt]", question)
    page.press("[data-role=prompt]", "Enter")
    return page.locator("[data-role=assistant]").last


def test_stop_cancels_the_request(page, app_url, sse_server):
    sse_server.play(SAVED.chunked(1).stall(after_event=3))  # 1-byte chunks, then silence
    answer = ask(page, app_url, sse_server.url, "Where is Lisbon?")
    expect(answer).to_contain_text("The capital of Portugal")
    page.click("[data-role=stop]")
    expect(answer).to_have_attribute("data-state", "aborted")
    assert sse_server.last_request.wait_disconnected(timeout=5)  # the server saw it go


def test_a_drop_mid_answer_shows_truncated(page, app_url, sse_server):
    # 1-byte chunks, a second of silence, then the line dies
    sse_server.play(SAVED.chunked(1).stall(1, after_event=3).drop(after_event=3))
    answer = ask(page, app_url, sse_server.url, "Where is Lisbon?")
    expect(answer).to_have_attribute("data-state", "truncated")
    expect(answer.locator(".status")).to_contain_text("Truncated")
    expect(answer).to_have_attribute("data-text", "The capital of Portugal — ")
    assert sse_server.last_request.json()["messages"][-1]["content"] == "Where is Lisbon?"


def test_a_stall_ends_by_the_idle_timeout(page, app_url, sse_server):
    sse_server.play(SAVED.stall(60, after_event=3))  # three events, then a minute of silence
    answer = ask(page, app_url, sse_server.url, "Where is Lisbon?", idle_s=1)
    expect(answer).to_have_attribute("data-state", "error", timeout=15_000)
    expect(answer.locator(".status")).to_contain_text("timed out")
    assert sse_server.last_request.wait_disconnected(timeout=5)  # the page hung up


# --- docs example: end ---

# The suite's stand-ins for what a user's project provides: pytest-playwright's `page` (here
# from the suite's Chromium) and the URL of the page under test (here the bundled page).

import pytest  # noqa: E402

pytestmark = pytest.mark.browser


@pytest.fixture
def page(browser):
    context = browser.new_context()
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    yield page
    context.close()
    assert errors == []


@pytest.fixture
def app_url(server):
    return server.url + "/"


def test_the_docs_show_this_example_verbatim():
    root = Path(__file__).resolve().parents[1]
    readme = (root / "docs" / "testing-kit.md").read_text()
    section = readme.split("# The testing kit", 1)[1]
    block = section.split("```python\n", 1)[1].split("```", 1)[0]
    source = Path(__file__).read_text()
    example = source.split("# --- docs example: begin ---\n", 1)[1]
    example = example.split("\n\n# --- docs example: end ---", 1)[0] + "\n"
    assert block == example


# -- pysse.testing.browser itself ------------------------------------------------------------------


def executable(path):
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return str(path)


def test_find_chromium_prefers_the_environment(tmp_path, monkeypatch):
    from pysse.testing import find_chromium

    fake = executable(tmp_path / "my-chromium")
    monkeypatch.setenv("PYSSE_CHROMIUM", fake)
    assert find_chromium() == fake
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PYSSE_CHROMIUM", "my-chromium")  # a command name: looked up on PATH
    assert find_chromium() == fake


@pytest.mark.parametrize(
    ("setting", "why"),
    [
        ("missing", "no such file"),
        ("a-directory", "is a directory"),
        ("not-executable", "is not executable"),
        ("no-such-command", "no such command on PATH"),
    ],
)
def test_a_wrong_pysse_chromium_is_an_error_naming_it(tmp_path, monkeypatch, setting, why):
    # Issue 24: a wrong setting was silently passed over for Debian's Chromium.
    from pysse import ConfigError
    from pysse.testing import find_chromium

    (tmp_path / "a-directory").mkdir()
    (tmp_path / "not-executable").write_text("")
    value = setting if setting == "no-such-command" else str(tmp_path / setting)
    monkeypatch.setenv("PYSSE_CHROMIUM", value)
    with pytest.raises(ConfigError, match=why) as info:
        find_chromium()
    assert f"PYSSE_CHROMIUM={value}" in str(info.value) and "unset it" in str(info.value)


def test_no_chromium_is_a_config_error_naming_the_fix(monkeypatch):
    from pysse import ConfigError
    from pysse.testing import browser as kit_browser

    monkeypatch.delenv("PYSSE_CHROMIUM", raising=False)
    monkeypatch.setattr(kit_browser.shutil, "which", lambda name: None)
    monkeypatch.setattr(kit_browser, "Path", tmp_missing)
    with pytest.raises(ConfigError, match="apt-get install chromium"):
        kit_browser.find_chromium()


def tmp_missing(path):
    return Path("/nonexistent-pysse") / Path(path).name


def test_launch_chromium_passes_the_path_and_flags(tmp_path, monkeypatch):
    from pysse.testing import CHROMIUM_ARGS, launch_chromium

    fake = executable(tmp_path / "chromium")
    monkeypatch.setenv("PYSSE_CHROMIUM", fake)
    launched = {}

    class Chromium:
        def launch(self, **kw):
            launched.update(kw)
            return "a browser"

    class Playwright:
        chromium = Chromium()

    assert launch_chromium(Playwright(), args=["--mute-audio"], headless=True) == "a browser"
    assert launched == {
        "executable_path": fake,
        "args": [*CHROMIUM_ARGS, "--mute-audio"],
        "headless": True,
    }
