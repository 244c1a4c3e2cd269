"""One small driver interface for the browser tests that run in every engine (issue #27).

Three implementations, each over the engine's own automation protocol:

* ``chromium``: Debian's Chromium through Playwright (CDP), as the rest of the suite;
* ``firefox``: Debian's Firefox ESR over WebDriver BiDi, through puppeteer-core in a long-lived
  Node process (``firefox_driver.cjs``) that this side talks to in JSON lines;
* ``webkit``: WebKitGTK's MiniBrowser through Selenium and ``WebKitWebDriver`` (classic
  WebDriver: no BiDi there, so no init scripts and no console log), under ``xvfb-run``.

What a test can do is what all three can do: open a URL, evaluate a function, wait for a
condition, type, press a key, click, take a screenshot, and read the page's errors. The
page's errors (uncaught errors, unhandled rejections, ``console.error``) are recorded by a
probe script the test server puts first in ``index.html`` (``probe.py``): the one way that
works in WebKit, and the same in every engine.
"""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any, Literal

__all__ = ["ENGINES", "Driver", "EngineName", "EnginePage", "EngineUnavailable"]

EngineName = Literal["chromium", "firefox", "webkit"]
ENGINES: tuple[EngineName, ...] = ("chromium", "firefox", "webkit")


class EngineUnavailable(RuntimeError):
    """The engine is not installed here (the message says how to get it)."""


def _settling(action: Any) -> Any:
    """``action`` (a click, a key, typing), then a wait until the page's Python handled what
    it did (it answers by message, a frame later: ``pysse.settled()``)."""

    def act(self: EnginePage, *args: Any, **kw: Any) -> Any:
        result = action(self, *args, **kw)
        self.settled()
        return result

    return act


class EnginePage:
    """One tab with its own storage. Subclasses implement the primitives; the waits and the
    chat-page helpers are written once, on top of ``evaluate``. A subclass's ``type``,
    ``press`` and ``click`` return once the page's Python has handled them."""

    engine: EngineName

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        for name in ("type", "press", "click"):
            if name in cls.__dict__:
                setattr(cls, name, _settling(cls.__dict__[name]))

    def settled(self) -> None:
        # (a page that navigated under the wait has nothing left to wait for)
        with contextlib.suppress(Exception):
            self.evaluate("() => window.pysse ? window.pysse.settled() : null")

    # -- primitives (one per engine) ---------------------------------------------------------

    def goto(self, url: str) -> None:
        raise NotImplementedError

    def evaluate(self, fn: str, *args: Any) -> Any:
        """Call the JavaScript function ``fn`` (source text, e.g. ``"(a) => a + 1"``) with
        ``args`` (JSON values) in the page; a promise is awaited. Returns a JSON value."""
        raise NotImplementedError

    def type(self, selector: str, text: str) -> None:
        """Focus ``selector`` and type ``text`` with real key events."""
        raise NotImplementedError

    def press(self, selector: str, key: Literal["Enter", "Escape", "Tab"]) -> None:
        raise NotImplementedError

    def click(self, selector: str) -> None:
        raise NotImplementedError

    def screenshot(self, path: str) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def twin(self) -> EnginePage:
        """Another tab of the same browser profile: the same storage, cookies and origin
        state (two tabs of the page on one chat store)."""
        raise NotImplementedError

    # -- written once --------------------------------------------------------------------------

    def wait_for(self, fn: str, *args: Any, timeout: float = 60.0, every: float = 0.1) -> Any:
        """Poll ``fn`` until it returns a truthy value (returned); a timeout says what."""
        deadline = time.monotonic() + timeout
        failed: Exception | None = None
        while True:
            try:  # a navigation under way (a reload) destroys the context being evaluated in
                value = self.evaluate(fn, *args)
            except Exception as exc:
                failed, value = exc, None
            if value:
                return value
            if time.monotonic() > deadline:
                why = f" (last: {failed})" if failed is not None else ""
                raise TimeoutError(f"{self.engine}: not true after {timeout:g} s: {fn} {args}{why}")
            time.sleep(every)

    def errors(self) -> list[str]:
        """What the probe recorded in this document (uncaught errors, rejections,
        ``console.error``), plus any the driver saw itself."""
        got = self.evaluate("() => (window.__probe ? window.__probe.errors : [])")
        return [str(e) for e in got or []]


class Driver:
    """One running browser of an engine; ``new_page`` gives a tab with fresh storage."""

    name: EngineName
    version: str = ""

    def new_page(self, width: int = 1000, height: int = 700) -> EnginePage:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


def js_args(args: tuple[Any, ...]) -> str:
    """``args`` as JavaScript source (JSON is JavaScript)."""
    return ", ".join(json.dumps(a) for a in args)
