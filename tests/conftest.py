"""Shared fixtures for the browser tests: the built site, a live server, headless Chromium.

Chromium is Debian's (``$PYSSE_CHROMIUM`` or /usr/bin/chromium); pysse never downloads a
browser. ``python build.py test`` finds or installs it and builds the site first; running
pytest directly builds the site on demand.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from support import CHROMIUM_ARGS, LiveServer, RedisServer, chromium_path

ROOT = Path(__file__).resolve().parents[1]
# How long an event may take before a test gives up: bounds for a broken page, never a speed
# a working one must reach (a plain boot took over 60 s on a 2-core machine at load 20).
READY_MS = 180_000  # the page booted
DONE_MS = 120_000  # an answer ended


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Fast tests first; the browser and Pyodide tests (slow, need the built site) last."""
    items.sort(
        key=lambda it: (
            it.get_closest_marker("browser") is not None
            or it.get_closest_marker("pyodide") is not None
        )
    )


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    """A real ``redis-server`` of its own on a free port, stopped after the test (the
    multi-relay tests: answers shared through Redis)."""
    server = RedisServer()
    try:
        yield server
    finally:
        server.stop()


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


# What the page's IndexedDB holds now: each conversation (its JSON) and each recording (its
# metadata and size). Read with evaluate, which awaits the promise (wait_for_function would
# take the promise itself as a true value).
STORED = """async () => {
  const db = await new Promise((ok, no) => {
    const r = indexedDB.open("pysse"); r.onsuccess = () => ok(r.result); r.onerror = no; });
  const all = (store) => new Promise((ok, no) => {
    if (!db.objectStoreNames.contains(store)) { ok([]); return; }
    const r = db.transaction(store).objectStore(store).getAll();
    r.onsuccess = () => ok(r.result); r.onerror = no; });
  try {
    const bodies = (await all("bodies")).map((b) => JSON.parse(b));
    const recordings = (await all("recordings")).map(
      (r) => ({ meta: JSON.parse(r.meta), size: r.bytes.length }));
    return { bodies, recordings };
  } finally { db.close(); }
}"""


def wait_stored(page: Any, ready: Callable[[dict[str, Any]], bool], timeout: float = 60) -> Any:
    """Wait until what the page stored satisfies ``ready`` (the writes are asynchronous: a
    reload right after an answer ended raced them); what it stored."""
    deadline = time.monotonic() + timeout
    while True:
        stored = page.evaluate(STORED)
        if ready(stored):
            return stored
        assert time.monotonic() < deadline, f"never stored as expected: {stored}"[:2000]
        time.sleep(0.1)


def py(page: Any, code: str) -> Any:
    """Python code run in the page's namespace (``app``: the page's ``App``; in its worker or
    on its main thread), awaited: its last expression's value, as JSON."""
    return page.evaluate("(code) => pysse.py(code)", code)


def beside_python(page: Any, code: str) -> Any:
    """JavaScript ``code`` (an expression, maybe a promise) run in the realm the page's Python
    runs in (its worker, or the main thread): where IndexedDB is used, for instance; awaited,
    its value as JSON. In main-thread mode it is evaluated by the test driver, as the page's
    policy (no 'unsafe-eval') forbids ``run_js`` there."""
    if page.evaluate("() => pysse.mode") == "main":
        return page.evaluate(f"async () => {{ const v = await ({code}); return v ?? null; }}")
    return py(page, IN_WORKER.replace("CODE", json.dumps(code)))


IN_WORKER = """from pyodide.code import run_js
import json
value = await run_js("(async () => (" + CODE + "))")()
json.loads(run_js("(v) => JSON.stringify(v === undefined ? null : v)")(value))"""


def wait_beside_python(page: Any, code: str, timeout: float = 60) -> Any:
    """Poll ``beside_python(page, code)`` until its value is truthy; that value."""
    deadline = time.monotonic() + timeout
    while not (value := beside_python(page, code)):
        assert time.monotonic() < deadline, f"never true: {code}"
        time.sleep(0.05)
    return value


def in_store(page: Any, code: str) -> Any:
    """A JavaScript expression using ``pysseStore`` (web/store.js, maybe a promise), run where
    the page's Python keeps its chat store (its worker, or the main thread), awaited; its value
    as JSON."""
    return beside_python(page, code)


def settled(page: Any) -> None:
    """Wait until the page's Python has handled every event so far (its reply applied): what
    a click or a key does at once is then on screen. Before Python is up, nothing to wait for;
    a click that navigated away has nothing to wait for either."""
    page = getattr(page, "raw", page)
    try:
        page.evaluate("() => window.pysse && window.pysse.settled()")
    except Exception as exc:  # the page navigated (a reload, a link) under the wait
        if "context was destroyed" not in str(exc) and "navigat" not in str(exc).lower():
            raise


class _SettledKeyboard:
    def __init__(self, page: Any) -> None:
        self._page = page
        self.raw = page.keyboard

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)

    def press(self, *args: Any, **kw: Any) -> None:
        self.raw.press(*args, **kw)
        settled(self._page)

    def type(self, *args: Any, **kw: Any) -> None:
        self.raw.type(*args, **kw)
        settled(self._page)


ACTIONS = frozenset(
    ["click", "dblclick", "press", "fill", "select_option", "check", "tap", "set_input_files"]
)


def _wrap(page: Any, result: Any) -> Any:
    """Locators and element handles that settle their actions (lists of them too)."""
    kind = type(result).__name__
    if kind in ("Locator", "ElementHandle", "JSHandle"):
        return SettledLocator(page, result)
    if isinstance(result, list) and result and type(result[0]).__name__ == "ElementHandle":
        return [SettledLocator(page, r) for r in result]
    return result


def _settling(page: Any, value: Any) -> Any:
    """``value`` (an attribute of a page, locator or element) with its actions settled, and
    the locators and elements it makes settling too."""
    if not callable(value):
        return _wrap(page, value)

    def call(*args: Any, **kw: Any) -> Any:
        return _wrap(page, value(*args, **kw))

    return call


class SettledLocator:
    """A Playwright locator (or element handle) whose actions wait as ``SettledPage``'s do."""

    def __init__(self, page: Any, locator: Any) -> None:
        self._page = page
        self.raw = locator

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.raw, name)
        if name in ACTIONS:

            def act(*args: Any, **kw: Any) -> Any:
                result = value(*args, **kw)
                settled(self._page)
                return result

            return act
        return _settling(self._page, value)


def expect(target: Any, *args: Any, **kw: Any) -> Any:
    """Playwright's ``expect``, for a settled page or locator too."""
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(getattr(target, "raw", target), *args, **kw)


class SettledPage:
    """A Playwright page whose actions (click, press, fill, select_option, check, the
    keyboard's) return once the page's Python has handled what they did: the page answers
    by message, a frame later, where it used to answer within the event. Everything else is
    the page's own."""

    def __init__(self, page: Any) -> None:
        self.raw = page
        self.keyboard = _SettledKeyboard(page)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.raw, name)
        if name in ("locator", "get_by_role", "get_by_text", "get_by_label", "query_selector"):
            return _settling(self.raw, attr)
        if name in ("query_selector_all", "wait_for_selector"):
            return _settling(self.raw, attr)
        if name not in ACTIONS:
            return attr

        def act(*args: Any, **kw: Any) -> Any:
            result = attr(*args, **kw)
            settled(self.raw)
            return result

        return act


def wait_until(page: Any, fn: str, arg: Any = None, timeout: float = 60) -> Any:
    """Poll the async JavaScript function ``fn(arg)`` until it returns a truthy value (Playwright's
    ``wait_for_function`` takes a promise itself for true: the page's Python answers by
    promise)."""
    deadline = time.monotonic() + timeout
    while True:
        value = page.evaluate(fn, arg)
        if value:
            return value
        assert time.monotonic() < deadline, f"never true: {fn} ({arg!r})"
        time.sleep(0.05)


# One rendering update of the page: a frame's callbacks, then a task after them (the frame's
# style and layout have run by then).
FRAME = "() => new Promise((ok) => requestAnimationFrame(() => setTimeout(ok, 0)))"


def shown_text(el: Any) -> str:
    """``el.inner_text()`` (an element handle or a locator) once the page has rendered since
    it changed. The log's messages are ``content-visibility: auto`` (web/style.css): until a
    rendering update has found a new message on screen, its contents are skipped and their
    innerText is "" (a notice read right after the key press that wrote it was "" on a loaded
    CI machine). Waiting for a selector does not wait for a frame: this does."""
    el.evaluate(FRAME)
    return str(el.inner_text())


def stored_answers(stored: dict[str, Any]) -> list[dict[str, Any]]:
    """Every stored assistant message, of every chat."""
    return [m for b in stored["bodies"] for m in b["messages"] if m["role"] == "assistant"]


# Where the page's Python runs: "worker" (the default) or "main" (its fallback, also chosen by
# ?thread=main). PYSSE_PAGE_THREAD=main runs the tests that do not choose in the main-thread
# mode (the smaller matrix: .ci/run).
PAGE_THREAD = os.environ.get("PYSSE_PAGE_THREAD", "worker")


# A phone in the hand: its viewport, and a touch screen (``make_page(viewport=PHONE, **TOUCH)``).
PHONE = {"width": 390, "height": 844}
TOUCH = {"is_mobile": True, "has_touch": True}


def center(page: Any, selector: str) -> tuple[float, float]:
    box = page.locator(selector).bounding_box()
    assert box, f"{selector} is not on screen"
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def tap(page: Any, selector: str) -> None:
    """A real tap at the element's centre (touch events, then the click they make)."""
    x, y = center(page, selector)
    page.touchscreen.tap(x, y)
    settled(page)


class Page:
    """A page with the chat booted, errors and requests recorded. ``thread``: where the page's
    Python runs ("worker" or "main"; by default ``PAGE_THREAD``)."""

    def __init__(
        self,
        browser: Any,
        base: str,
        settings: dict[str, Any] | None = None,
        viewport: dict[str, int] | None = None,
        thread: str | None = None,
        boot: str = "",
        first_visit: bool = False,
        **context: Any,
    ) -> None:
        self.thread = thread or PAGE_THREAD
        self.boot = boot  # "snapshot" or "plain" (?boot=); "": the page's own choice
        # (the service worker has tests of its own: test_browser_offline.py)
        context.setdefault("service_workers", "block")
        self.ctx = browser.new_context(
            viewport=viewport or {"width": 1000, "height": 700}, **context
        )
        self.page: Any = SettledPage(self.ctx.new_page())
        self.base = base
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        s = {"headers": "X-Demo-Pace: 0.05"}
        s.update(settings or {})
        keep = "localStorage.setItem('pysse.settings.v1', " + json.dumps(json.dumps(s)) + ");"
        self.page.add_init_script(  # (the page only: not a sandboxed iframe, which has no storage)
            "if (window.top === window) {"
            + ("" if first_visit else keep)  # (first_visit: nothing stored, as a new visitor)
            + "window.__frames = 0; (function tick(){ window.__frames++; "
            "requestAnimationFrame(tick); })(); }"
        )

    @property
    def url(self) -> str:
        query = {"thread": "main" if self.thread == "main" else "", "boot": self.boot}
        shown = "&".join(f"{k}={v}" for k, v in query.items() if v)
        return self.base + "/" + (f"?{shown}" if shown else "")

    def open(self, wait_ready: bool = True) -> Any:
        self.page.goto(self.url)
        if wait_ready:
            self.page.wait_for_selector("body[data-ready='1']", timeout=READY_MS)
        return self.page

    def send(self, text: str) -> None:
        self.page.fill("[data-role=prompt]", text)
        self.page.press("[data-role=prompt]", "Enter")
        settled(self.page)

    def click(self, selector: str) -> None:
        """Click, and wait until the page's Python has handled it (it answers by message)."""
        self.page.click(selector)
        settled(self.page)

    def wait_done(self, index: int = -1, timeout: float = DONE_MS) -> Any:
        sel = "[data-role=assistant]"
        self.page.wait_for_function(
            f"""() => {{ const a = [...document.querySelectorAll('{sel}')];
                 const m = a.at({index}); return m && m.dataset.state !== 'streaming'
                   && !(window.pysseSwapsPending && window.pysseSwapsPending()); }}""",
            timeout=timeout,
        )
        return self.page.query_selector_all(sel)[index]

    def reload(self) -> Any:
        self.page.reload()
        self.page.wait_for_selector("body[data-ready='1']", timeout=READY_MS)
        return self.page

    def answers(self) -> list[Any]:
        return list(self.page.query_selector_all("[data-role=assistant]"))

    def close(self) -> None:
        self.ctx.close()


def axe_path() -> Path:
    """axe-core's axe.min.js (npm; the tests inject it, the site never ships it)."""
    path = os.environ.get("PYSSE_AXE")
    if path:
        return Path(path)
    sys.path.insert(0, str(ROOT))
    import build

    return build.fetch_axe()


# -- the engine matrix (tests/engines/): the same tests in Chromium, Firefox and WebKit --------

# PYSSE_ENGINES=chromium,webkit runs the matrix in those engines only (all three by default;
# `python build.py test` installs the missing ones when it can).
ENGINE_NAMES = [
    e for e in os.environ.get("PYSSE_ENGINES", "chromium,firefox,webkit").split(",") if e.strip()
]


@pytest.fixture(scope="session", params=ENGINE_NAMES)
def engine(request: pytest.FixtureRequest) -> Iterator[Any]:
    """One running browser of each engine for the whole session (they start in seconds, and
    each page gets fresh storage)."""
    from engines import EngineUnavailable
    from engines.launch import launch

    try:
        driver = launch(request.param, request)
    except EngineUnavailable as exc:
        pytest.fail(f"{request.param}: {exc}", pytrace=False)
    yield driver
    driver.close()


@pytest.fixture(scope="session")
def engine_server(site: Path) -> Iterator[LiveServer]:
    """The page server, with the engine probe in index.html (tests/engines/probe.py)."""
    from engines.probe import AXE_PATH, with_probe
    from pysse.server.app import create_app

    with LiveServer(with_probe(create_app(site), {AXE_PATH: axe_path().read_bytes()})) as live:
        yield live


@pytest.fixture(scope="session")
def plain_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A site built without the memory snapshot (the plain boot), with the probe."""
    from engines.probe import with_probe
    from pysse.server.app import create_app

    sys.path.insert(0, str(ROOT))
    import build

    plain = build.build_site(tmp_path_factory.mktemp("engines") / "plain", snapshot=False)
    with LiveServer(with_probe(create_app(plain))) as live:
        yield live


@pytest.fixture
def open_chat(engine: Any, engine_server: LiveServer) -> Iterator[Any]:
    """``open_chat(settings=..., width=..., height=..., base=...)``: the chat page, booted, in
    the engine under test; every page's errors fail the test."""
    from engines.chat import Chat

    chats: list[Any] = []

    def make(
        settings: dict[str, Any] | None = None,
        width: int = 1000,
        height: int = 700,
        base: str | None = None,
        without: tuple[str, ...] = (),
        path: str = "/",
    ) -> Any:
        chat = Chat(engine.new_page(width, height), base or engine_server.url)
        chats.append(chat)
        return chat.open(settings, path=path, without=without)

    yield make
    problems = []
    for chat in chats:
        try:
            problems += chat.page.errors()
        finally:
            chat.page.close()
    assert problems == [], problems


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
        try:  # the view's own check: every op applied, every handle where Python put it
            view_error = p.page.evaluate("() => document.body && document.body.dataset.viewError")
        except Exception:  # (a page closed by its test)
            view_error = None
        p.close()
        assert errors == [], errors
        assert not view_error, view_error
