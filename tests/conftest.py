"""Shared fixtures for the browser tests: the built site, a live server, headless Chromium.

Chromium is Debian's (``$PYSSE_CHROMIUM`` or /usr/bin/chromium); pysse never downloads a
browser. ``python build.py test`` finds or installs it and builds the site first; running
pytest directly builds the site on demand.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import CHROMIUM_ARGS, LiveServer, chromium_path

ROOT = Path(__file__).resolve().parents[1]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Fast tests first; the browser and Pyodide tests (slow, need the built site) last."""
    items.sort(
        key=lambda it: (
            it.get_closest_marker("browser") is not None
            or it.get_closest_marker("pyodide") is not None
        )
    )


@pytest.fixture(scope="session")
def site() -> Path:
    env = os.environ.get("PYSSE_SITE")
    if env:
        return Path(env)
    sys.path.insert(0, str(ROOT))
    import build  # the project's build script

    return build.build_site()


@pytest.fixture(scope="session")
def examples_dir() -> Path:
    """``build.py examples``' output: the embedding examples with Pyodide, PyScript and the
    wheels beside them (``python build.py test`` builds it first)."""
    env = os.environ.get("PYSSE_EXAMPLES")
    if env:
        return Path(env)
    sys.path.insert(0, str(ROOT))
    import build  # the project's build script

    return build.build_examples(build.BUILD / "examples")


@pytest.fixture(scope="session")
def server(site: Path) -> Iterator[LiveServer]:
    from pysse.server.app import create_app

    with LiveServer(create_app(site)) as live:
        yield live


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        yield b
        b.close()


def log_texts(page: Any) -> list[str]:
    """The conversation on screen: each user message's text, each answer's ``data-text``."""
    return [
        str(t)
        for t in page.eval_on_selector_all(
            "[data-role=log] article[data-id]",
            "els => els.map(e => e.dataset.role === 'user' ? e.querySelector('.content').textContent"
            " : e.dataset.text)",
        )
    ]


class Page:
    """A page with the chat booted, errors and requests recorded."""

    def __init__(
        self,
        browser: Any,
        base: str,
        settings: dict[str, Any] | None = None,
        viewport: dict[str, int] | None = None,
        **context: Any,
    ) -> None:
        self.ctx = browser.new_context(
            viewport=viewport or {"width": 1000, "height": 700}, **context
        )
        self.page = self.ctx.new_page()
        self.base = base
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        s = {"headers": "X-Demo-Pace: 0.05"}
        s.update(settings or {})
        self.page.add_init_script(
            "localStorage.setItem('pysse.settings.v1', " + json.dumps(json.dumps(s)) + ");"
            "window.__frames = 0; (function tick(){ window.__frames++; "
            "requestAnimationFrame(tick); })();"
        )

    def open(self, wait_ready: bool = True) -> Any:
        self.page.goto(self.base + "/")
        if wait_ready:
            self.page.wait_for_selector("body[data-ready='1']", timeout=60_000)
        return self.page

    def send(self, text: str) -> None:
        self.page.fill("[data-role=prompt]", text)
        self.page.press("[data-role=prompt]", "Enter")

    def wait_done(self, index: int = -1, timeout: float = 60_000) -> Any:
        sel = "[data-role=assistant]"
        self.page.wait_for_function(
            f"""() => {{ const a = [...document.querySelectorAll('{sel}')];
                 const m = a.at({index}); return m && m.dataset.state !== 'streaming'; }}""",
            timeout=timeout,
        )
        return self.page.query_selector_all(sel)[index]

    def reload(self) -> Any:
        self.page.reload()
        self.page.wait_for_selector("body[data-ready='1']", timeout=60_000)
        return self.page

    def answers(self) -> list[Any]:
        return list(self.page.query_selector_all("[data-role=assistant]"))

    def close(self) -> None:
        self.ctx.close()


@pytest.fixture
def make_page(browser: Any, server: LiveServer) -> Iterator[Any]:
    pages: list[Page] = []

    def make(**kw: Any) -> Page:
        p = Page(browser, server.url, **kw)
        pages.append(p)
        return p

    yield make
    for p in pages:
        errors = list(p.errors)
        p.close()
        assert errors == [], errors
