"""The deployment path as a new user meets it (issue #11): the static site on one loopback
origin (``python -m http.server``, as the README's walkthrough uses), relays on others, the
demo model as their upstream.
Every mistake shows its own specific message, keeps the conversation usable and loses no
typed text. Servers are shared by the whole module."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import DONE_MS, READY_MS, Page, expect, shown_text
from pysse.server.app import create_app
from pysse.server.demo import RICH_ANSWER
from pysse.server.relay import RelayConfig, create_relay_app
from support import LiveServer, ServerProcess, free_port

pytestmark = pytest.mark.browser


@dataclass
class Deploy:
    static: ServerProcess  # /plain: no relay configured; /conf: built with --relay
    relays: dict[str, LiveServer]

    @property
    def origin(self) -> str:
        return self.static.url

    def relay(self, name: str) -> str:
        return self.relays[name].url + "/relay"


def site_copy(site: Path, dest: Path, config: dict[str, Any]) -> None:
    """The built site with its own site.json (everything else linked, not copied)."""
    dest.mkdir(parents=True)
    for item in site.iterdir():
        if item.name != "site.json":
            (dest / item.name).symlink_to(item)
    base = json.loads((site / "site.json").read_text())
    (dest / "site.json").write_text(json.dumps({**base, **config}))


@pytest.fixture(scope="module")
def deploy(site: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deploy]:
    root = tmp_path_factory.mktemp("deploy")
    demo = LiveServer(create_app(None, demo_pace=0.02))
    static_port = free_port()
    origin = f"http://127.0.0.1:{static_port}"

    def relay(**kw: Any) -> LiveServer:
        kw.setdefault("allow_origins", [origin])
        return LiveServer(create_relay_app(RelayConfig(upstream=demo.url + "/v1", **kw)))

    relays = {
        "openai": relay(format="openai-chat"),
        "anthropic": relay(format="anthropic"),
        "elsewhere": relay(allow_origins=["https://chat.example"]),
        "secret": relay(shared_secret="s3cret"),
    }
    site_copy(site, root / "plain", {"relay": ""})
    site_copy(site, root / "conf", {"relay": relays["openai"].url + "/relay"})
    servers = [demo, *relays.values()]
    for s in servers:
        s.__enter__()
    http_server = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1"]
    static = ServerProcess([*http_server, "--directory", str(root), str(static_port)], static_port)
    try:
        yield Deploy(static, relays)
    finally:
        static.stop()
        for s in reversed(servers):
            s.__exit__()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def open_page(browser: Any, deploy: Deploy) -> Iterator[Any]:
    pages: list[Page] = []

    def make(path: str = "/conf", wait_ready: bool = True, **settings: Any) -> Page:
        p = Page(browser, deploy.origin + path, settings={"headers": "", **settings})
        pages.append(p)
        p.open(wait_ready=wait_ready)
        return p

    yield make
    for p in pages:
        errors = list(p.errors)
        p.close()
        assert errors == [], errors


def status_of(msg: Any) -> str:
    return str(msg.query_selector(".status").inner_text())


def fix_relay_and_retry(p: Page, url: str, headers: str = "") -> Any:
    """Correct Settings the way a person would, then press Regenerate: the answer arrives."""
    page = p.page
    page.click("summary")
    page.fill("[data-setting=relay]", url)
    page.fill("[data-setting=headers]", headers)
    page.press("[data-setting=headers]", "Tab")
    page.click("[data-role=assistant] [data-role=regenerate]")
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-role=assistant]')].at(-1).dataset.state"
        " === 'completed'",
        timeout=DONE_MS,
    )
    msg = page.query_selector_all("[data-role=assistant]")[-1]
    assert page.locator("[data-role=assistant]").count() == 1  # regenerated in place
    return msg


def test_configured_site_streams_through_its_relay(open_page: Any, deploy: Deploy) -> None:
    p = open_page("/conf")
    p.send("hello")
    msg = p.wait_done()
    assert msg.get_attribute("data-state") == "completed"
    assert msg.get_attribute("data-text") == RICH_ANSWER
    assert msg.get_attribute("data-url") == deploy.relay("openai")
    assert p.page.is_hidden("[data-role=demo-hint]")


def test_no_relay_configured_shows_setup_instead_of_sending(open_page: Any, deploy: Deploy) -> None:
    p = open_page("/plain")
    page = p.page
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    p.send("my carefully typed question")
    notice = page.wait_for_selector("[data-role=notice]")
    text = shown_text(notice)  # (written by the key press: its message not rendered yet)
    assert "No relay is configured" in text and "pip install 'pysse[relay]'" in text
    assert f"--allow-origin {deploy.origin}" in text and "Settings → Relay URL" in text
    assert page.input_value("[data-role=prompt]") == "my carefully typed question"
    assert posts == [] and page.locator("[data-role=assistant]").count() == 0
    assert page.is_hidden("[data-role=demo-hint]")
    assert "/demo" not in (page.get_attribute("[data-role=prompt]", "placeholder") or "")
    # Configure it in Settings: the kept text goes out.
    page.click("summary")
    page.fill("[data-setting=relay]", deploy.relay("openai"))
    page.press("[data-setting=relay]", "Tab")
    page.press("[data-role=prompt]", "Enter")
    assert p.wait_done().get_attribute("data-state") == "completed"


def test_an_invalid_relay_url_is_flagged_as_typed(open_page: Any) -> None:
    p = open_page("/plain")
    page = p.page
    page.click("summary")
    page.fill("[data-setting=relay]", "relay.example/relay")
    page.press("[data-setting=relay]", "Tab")
    assert "must start with https://" in page.inner_text("[data-role=relay-url-error]")
    p.send("still here")
    # The notice is written by the page's Python after the key press: wait for it.
    expect(page.locator("[data-role=notice]")).to_contain_text(
        "Relay URL: the relay URL must start with"
    )
    assert page.input_value("[data-role=prompt]") == "still here"


def test_wrong_url_names_the_status_and_the_likely_mistake(open_page: Any, deploy: Deploy) -> None:
    wrong = deploy.origin + "/plain/"
    p = open_page("/plain", relay=wrong)
    p.send("hello")
    msg = p.wait_done()
    status = status_of(msg)
    # http.server answers a POST with a 501 HTML page: its title and message, never markup.
    assert status.startswith("Error: HTTP 501 Not Implemented: Error response")
    assert "Unsupported method ('POST')" in status
    assert f"{wrong} does not look like a relay" in status
    assert "<" not in status
    assert fix_relay_and_retry(p, deploy.relay("openai")).get_attribute("data-text") == RICH_ANSWER


def test_relay_down(open_page: Any, deploy: Deploy) -> None:
    down = f"http://127.0.0.1:{free_port()}/relay"
    p = open_page("/plain", relay=down)
    p.send("hello")
    status = status_of(p.wait_done())
    assert status.startswith(
        f"Error: could not reach the relay at {down}: the relay is not running"
    )
    assert "Failed to fetch" not in status
    fix_relay_and_retry(p, deploy.relay("openai"))


def test_origin_not_allowed(open_page: Any, deploy: Deploy) -> None:
    p = open_page("/plain", relay=deploy.relay("elsewhere"))
    p.send("hello")
    status = status_of(p.wait_done())
    o = deploy.origin
    assert f"does not allow the origin {o}; start it with --allow-origin {o}" in status


def test_header_not_allowed_is_diagnosed_as_a_preflight_failure(
    open_page: Any, deploy: Deploy
) -> None:
    p = open_page("/plain", relay=deploy.relay("openai"), headers="X-Custom: 1")
    p.send("hello")
    status = status_of(p.wait_done())
    assert "refused the preflight: the request header x-custom is not allowed" in status
    assert "--allow-header x-custom" in status
    fix_relay_and_retry(p, deploy.relay("openai"), headers="")


def test_wrong_secret(open_page: Any, deploy: Deploy) -> None:
    p = open_page("/plain", relay=deploy.relay("secret"), headers="X-Relay-Secret: nope")
    p.send("hello")
    status = status_of(p.wait_done())
    assert status.startswith("Error: HTTP 401 Unauthorized: wrong relay secret")
    assert "X-Relay-Secret" in status
    msg = fix_relay_and_retry(p, deploy.relay("secret"), headers="X-Relay-Secret: s3cret")
    assert msg.get_attribute("data-text") == RICH_ANSWER


@pytest.mark.parametrize(
    ("chosen", "relay", "needle", "switched"),
    [
        (
            "anthropic",
            "openai",
            "this is an OpenAI Chat Completions stream but Format is Anthropic Messages",
            "openai-chat",
        ),
        (
            "openai-chat",
            "anthropic",
            "this is an Anthropic Messages stream but Format is OpenAI Chat Completions",
            "anthropic",
        ),
    ],
)
def test_format_mismatch_is_named_and_the_relays_format_taken(
    open_page: Any, deploy: Deploy, chosen: str, relay: str, needle: str, switched: str
) -> None:
    p = open_page("/plain", relay=deploy.relay(relay), format=chosen)
    page = p.page
    p.send("hello")
    status = status_of(p.wait_done())
    assert needle in status, status
    expect(page.locator("[data-role=notice]")).to_contain_text("Format is now")
    assert page.input_value("[data-setting=format]") == switched
    page.click("[data-role=assistant] [data-role=regenerate]")
    page.wait_for_function(
        "() => document.querySelector('[data-role=assistant]').dataset.state === 'completed'",
        timeout=DONE_MS,
    )


def test_auto_asks_the_relay_its_format_before_the_first_message(
    open_page: Any, deploy: Deploy
) -> None:
    p = open_page("/plain", relay=deploy.relay("anthropic"))
    p.page.wait_for_selector("body[data-relay-format='anthropic']")
    p.send("hello")
    msg = p.wait_done()
    assert msg.get_attribute("data-state") == "completed"
    assert msg.get_attribute("data-text") == RICH_ANSWER


@pytest.mark.parametrize(
    ("command", "needle"),
    [
        ("/demo 401", "Error: HTTP 401 Unauthorized: Invalid API key (demo)."),
        ("/demo 429", "Rate limit reached (demo). (retry after 7 s)"),
        ("/demo 500", "Error: HTTP 500 Internal Server Error: Internal Server Error (demo)"),
        (
            "/demo html",
            "Error: HTTP 502 Bad Gateway: the upstream answered 200 with text/html, "
            "not an event stream (check --upstream and --format): "
            "Welcome to nginx!",
        ),
    ],
)
def test_upstream_failures_through_the_relay(open_page: Any, command: str, needle: str) -> None:
    p = open_page("/conf")
    p.send(command)
    msg = p.wait_done()
    assert msg.get_attribute("data-state") == "error"
    assert needle in status_of(msg)
    p.send("/demo echo still usable")
    assert p.wait_done().get_attribute("data-text") == "still usable"


def test_boot_asset_404_names_the_url_and_keeps_the_typed_message(
    open_page: Any, deploy: Deploy
) -> None:
    p = open_page("/conf", wait_ready=False)
    page = p.page
    # Reload with pysse's zip missing, as after an incomplete upload.
    page.route("**/boot/**/pysse-app.zip", lambda route: route.fulfill(status=404, body="nope"))
    page.reload(wait_until="commit")
    page.wait_for_selector("body[data-booting='1']")
    p.send("typed while booting")
    page.wait_for_selector("body[data-boot-error='1']", timeout=READY_MS)
    text = page.inner_text("[data-role=boot-text]")
    assert "Python failed to start: could not load" in text and "pysse-" in text
    assert "(HTTP 404" in text and "No module named" not in text
    assert page.input_value("[data-role=prompt]") == "typed while booting"
    assert page.is_visible("[data-role=reload]")
    # Enter again: nothing is lost, nothing claims it will go out.
    page.press("[data-role=prompt]", "Enter")
    assert page.input_value("[data-role=prompt]") == "typed while booting"
    assert "your message goes out" not in page.inner_text("[data-role=boot-text]")
    p.errors.clear()  # the 404 is the point of this test
    # Reload restores the typed text; with the wheel back, it boots and sends.
    page.unroute("**/boot/**/pysse-app.zip")
    page.click("[data-role=reload]")
    page.wait_for_selector("body[data-ready='1']", timeout=READY_MS)
    assert page.input_value("[data-role=prompt]") == "typed while booting"
