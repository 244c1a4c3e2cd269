"""The embedding examples (``examples/``, docs/embedding.md) as a new user runs them: written
by ``build.py examples``, served by a real static file server (``python -m http.server``),
asking a real relay in front of the demo model and a testing-kit ``ScriptServer``, each on an
origin of its own (so every request is a CORS request, as on a real site).

Each example boots once per engine (module scope: a cold Pyodide and a micropip install
cost seconds) and answers every scenario in turn: the text, Stop, a drop ending
``truncated``, an HTTP error in words. The tests speak to ``ExamplePage`` only
(``example_driver``), so the engine matrix adds an engine by adding a Driver."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from conftest import ENGINE_NAMES
from example_driver import Driver, EngineDriver, ExamplePage, PlaywrightDriver
from pysse.render.markdown import render
from pysse.server.app import create_app
from pysse.server.demo import RICH_ANSWER
from pysse.server.relay import RelayConfig, create_relay_app
from pysse.testing import Script, ScriptServer
from support import LiveServer, ServerProcess, free_port

pytestmark = pytest.mark.browser

EXAMPLES = ("minimal", "pyscript", "worker")
ENGINES = tuple(ENGINE_NAMES)  # $PYSSE_ENGINES: chromium, firefox, webkit by default
LAST_WORDS = RICH_ANSWER.strip().rsplit("\n", 1)[-1][-12:]
SAVED = Script.from_file(Path(__file__).parent / "fixtures" / "openai_chat_text.sse")


@dataclass
class Servers:
    static: ServerProcess
    relay: LiveServer  # pysse's relay, the demo model as its upstream
    kit: ScriptServer

    @property
    def origin(self) -> str:
        return self.static.url

    @property
    def relay_url(self) -> str:
        return self.relay.url + "/relay"


@pytest.fixture(scope="module")
def servers(examples_dir: Path) -> Iterator[Servers]:
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    demo = LiveServer(create_app(None, demo_pace=0.05))
    relay = LiveServer(
        create_relay_app(
            RelayConfig(upstream=demo.url + "/v1", format="openai-chat", allow_origins=[origin])
        )
    )
    argv = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1"]
    with demo, relay, ScriptServer() as kit:
        static = ServerProcess([*argv, "--directory", str(examples_dir), str(port)], port)
        try:
            yield Servers(static, relay, kit)
        finally:
            static.stop()


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


@pytest.fixture(scope="module")
def browsers(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """Firefox and WebKit, each started once for this module (on first use) and closed after."""
    running: dict[str, Any] = {}
    yield running
    for driver in running.values():
        driver.close()


def driver_for(engine: str, request: pytest.FixtureRequest, browsers: dict[str, Any]) -> Driver:
    if engine == "chromium":
        return PlaywrightDriver(request.getfixturevalue("browser"))
    from engines import EngineUnavailable
    from engines.launch import launch

    if engine not in browsers:
        try:
            browsers[engine] = launch(engine, request)
        except EngineUnavailable as exc:
            pytest.fail(f"{engine}: {exc}", pytrace=False)
    return EngineDriver(browsers[engine].new_page())


@pytest.fixture(
    scope="module",
    params=[(engine, name) for engine in ENGINES for name in EXAMPLES],
    ids=lambda p: f"{p[0]}-{p[1]}",
)
def example(
    request: pytest.FixtureRequest, servers: Servers, browsers: dict[str, Any]
) -> Iterator[ExamplePage]:
    engine, name = request.param
    driver = driver_for(engine, request, browsers)
    try:
        page = ExamplePage(driver, f"{servers.origin}/{name}/")
        assert page.boot_status == "Ready.", page.boot_status
        yield page
        assert driver.errors() == []
        if isinstance(driver, PlaywrightDriver):  # every asset from the example's own origin
            origins = {origin_of(u) for u in driver.requests}
            assert origins <= {servers.origin, servers.relay.url, servers.kit.url}, origins
    finally:
        driver.close()


# -- against the relay and the demo model ---------------------------------------------------


def test_the_answer_streams_in_rendered_as_markdown(example: ExamplePage, servers: Servers) -> None:
    example.ask(servers.relay_url, "hello")
    ended = example.wait_ended()
    assert (ended.outcome, ended.detail) == ("completed", "Done")
    assert ended.html == render(RICH_ANSWER)  # streamed, it ends as the one-shot render


def test_stop_ends_the_answer_aborted_with_its_text(example: ExamplePage, servers: Servers) -> None:
    example.ask(servers.relay_url, "/demo stall")  # a third of the answer, then silence
    example.wait_for_text("Streaming, explained")
    example.stop()
    ended = example.wait_ended()
    assert ended.outcome == "aborted"
    assert ended.text.startswith("Streaming, explained") and LAST_WORDS not in ended.text


def test_an_http_error_is_shown_in_words(example: ExamplePage, servers: Servers) -> None:
    example.ask(servers.relay_url, "/demo 500")
    ended = example.wait_ended()
    assert ended.outcome == "error"
    assert "HTTP 500" in ended.detail and "Internal Server Error (demo)" in ended.detail
    assert ended.text == ""


# -- against a testing-kit ScriptServer ------------------------------------------------------


def test_one_byte_chunks_from_a_scripted_server(example: ExamplePage, servers: Servers) -> None:
    servers.kit.play(SAVED.chunked(1))
    example.ask(servers.kit.url + "/v1/chat/completions", "Where is Lisbon?")
    ended = example.wait_ended()
    assert ended.outcome == "completed"
    assert ended.html == render("The capital of Portugal — **Lisboa** 🇵🇹, 日本語.")
    sent: Any = servers.kit.last_request.json()
    assert sent["messages"] == [{"role": "user", "content": "Where is Lisbon?"}]


def test_stop_hangs_up_on_the_server(example: ExamplePage, servers: Servers) -> None:
    servers.kit.play(SAVED.chunked(1).stall(after_event=3))  # 1-byte chunks, then silence
    example.ask(servers.kit.url + "/v1/chat/completions", "Where is Lisbon?")
    example.wait_for_text("The capital")
    example.stop()
    ended = example.wait_ended()
    assert ended.outcome == "aborted" and ended.text.startswith("The capital")
    assert servers.kit.last_request.wait_disconnected(timeout=10)  # the server saw it go


def test_a_drop_mid_answer_ends_truncated(example: ExamplePage, servers: Servers) -> None:
    # 1-byte chunks, a second of silence (every byte is read: a reset would discard bytes the
    # kernel holds unread), then the line dies
    servers.kit.play(SAVED.chunked(1).stall(1, after_event=3).drop(after_event=3))
    example.ask(servers.kit.url + "/v1/chat/completions", "Where is Lisbon?")
    ended = example.wait_ended()
    assert ended.outcome == "truncated", ended
    assert ended.html == render("The capital of Portugal — ")  # what arrived is kept
    assert ended.detail.startswith("Truncated: the connection closed before"), ended.detail


def test_a_providers_http_error_is_shown_with_its_message(
    example: ExamplePage, servers: Servers
) -> None:
    servers.kit.play(Script.http_error(429, "Slow down, please.", retry_after=7))
    example.ask(servers.kit.url + "/v1/chat/completions", "Where is Lisbon?")
    ended = example.wait_ended()
    assert ended.outcome == "error"
    assert "429" in ended.detail and "Slow down, please." in ended.detail, ended.detail
