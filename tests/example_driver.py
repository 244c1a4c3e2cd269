"""Driving the embedding examples (``examples/``) from a test, in any browser engine.

The tests speak to :class:`ExamplePage` (ask, stop, wait for the end), which speaks to a
:class:`Driver`: five calls every automation protocol has (go to a URL, fill a field, click,
run a JavaScript function, wait until one returns true). Chromium runs through Playwright
(:class:`PlaywrightDriver`); another engine (Firefox over WebDriver BiDi, WebKitGTK over
Selenium) needs only its own Driver, and the same tests run there.

Every example has the same hooks: ``#relay``, ``#prompt``, ``#ask``, ``#stop``, ``#answer``
and ``#status``, which reads ``Ready.`` once Python is up, ``Streaming…`` while an answer
streams, then ``OUTCOME: DETAIL`` (the ``ChatResult``) or ``Error: ...``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["Driver", "Ended", "EngineDriver", "ExamplePage", "PlaywrightDriver"]

ENDED = re.compile(r"^(completed|truncated|error|aborted): (.*)$", re.S)
BOOT_TIMEOUT_S = 240.0  # a cold Pyodide (no snapshot, stdlib compiled at start) on a busy machine
ANSWER_TIMEOUT_S = 60.0


class Driver(Protocol):
    def goto(self, url: str) -> None: ...

    def fill(self, selector: str, value: str) -> None: ...

    def click(self, selector: str) -> None: ...

    def call(self, function: str, arg: Any = None) -> Any:
        """Run the JavaScript function ``function`` (source text, ``(arg) => ...``) in the
        page with ``arg`` (JSON-able) and return its (JSON-able) result."""
        ...

    def wait_until(self, function: str, arg: Any, timeout_s: float) -> None:
        """Wait until ``function(arg)`` returns a truthy value in the page."""
        ...

    def errors(self) -> list[str]:
        """Uncaught errors the page (or its workers) threw so far."""
        ...

    def close(self) -> None: ...


class PlaywrightDriver:
    """Chromium through Playwright: a fresh context per page (nothing shared between pages)."""

    def __init__(self, browser: Any) -> None:
        self.context = browser.new_context()
        self.page = self.context.new_page()
        self._errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("pageerror", lambda e: self._errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.context.on("weberror", lambda e: self._errors.append(str(e.error)))

    def goto(self, url: str) -> None:
        self.page.goto(url)

    def fill(self, selector: str, value: str) -> None:
        self.page.fill(selector, value)

    def click(self, selector: str) -> None:
        self.page.click(selector)

    def call(self, function: str, arg: Any = None) -> Any:
        return self.page.evaluate(function, arg)

    def wait_until(self, function: str, arg: Any, timeout_s: float) -> None:
        self.page.wait_for_function(function, arg=arg, timeout=timeout_s * 1000)

    def errors(self) -> list[str]:
        return list(self._errors)

    def close(self) -> None:
        self.context.close()


class EngineDriver:
    """Firefox or WebKit through the engine matrix's page (``tests/engines``: WebDriver BiDi,
    or WebKitGTK's WebDriver under Selenium). Their pages have no request log, and a page not
    served through the matrix's probe reports only what the engine itself raised, so the
    origin check and the error check are Chromium's; every answer check runs here too."""

    def __init__(self, page: Any) -> None:
        self.page = page  # an engines.EnginePage

    def goto(self, url: str) -> None:
        self.page.goto(url)

    def fill(self, selector: str, value: str) -> None:
        self.page.evaluate(
            "(s, v) => { const e = document.querySelector(s); e.value = v;"
            " e.dispatchEvent(new Event('input', {bubbles: true})); return true; }",
            selector,
            value,
        )

    def click(self, selector: str) -> None:
        self.page.click(selector)

    def call(self, function: str, arg: Any = None) -> Any:
        return self.page.evaluate(function, arg)

    def wait_until(self, function: str, arg: Any, timeout_s: float) -> None:
        self.page.wait_for(function, arg, timeout=timeout_s)

    def errors(self) -> list[str]:
        return [str(e) for e in self.page.errors()]

    def close(self) -> None:
        self.page.close()


@dataclass(frozen=True)
class Ended:
    """How an answer ended, as the example shows it."""

    outcome: str
    detail: str
    text: str  # the answer element's textContent
    html: str


_STATUS = "() => document.getElementById('status').textContent"


class ExamplePage:
    """One example, opened and booted (``Ready.``), asked one question at a time."""

    def __init__(self, driver: Driver, url: str) -> None:
        self.driver = driver
        driver.goto(url)
        driver.wait_until(
            "() => /^(Ready\\.|Error: )/.test(document.getElementById('status').textContent)",
            None,
            BOOT_TIMEOUT_S,
        )
        self.boot_status = self.status()

    def status(self) -> str:
        return str(self.driver.call(_STATUS))

    def answer_text(self) -> str:
        return str(self.driver.call("() => document.getElementById('answer').textContent"))

    def ask(self, relay: str, prompt: str) -> None:
        """Send ``prompt`` to ``relay``; returns once the example's handler has run (the
        status line, blanked here first, is written again: ``Streaming…``, or already how the
        answer ended). By then the last answer is cleared away and Stop reaches this one, so
        neither :meth:`wait_for_text` nor :meth:`wait_ended` can see the last answer."""
        self.driver.call("() => { document.getElementById('status').textContent = ''; }")
        self.driver.fill("#relay", relay)
        self.driver.fill("#prompt", prompt)
        self.driver.click("#ask")
        self.driver.wait_until(
            "() => document.getElementById('status').textContent !== ''", None, ANSWER_TIMEOUT_S
        )

    def wait_for_text(self, needle: str) -> None:
        self.driver.wait_until(
            "(n) => document.getElementById('answer').textContent.includes(n)",
            needle,
            ANSWER_TIMEOUT_S,
        )

    def stop(self) -> None:
        self.driver.click("#stop")

    def wait_ended(self) -> Ended:
        self.driver.wait_until(
            "(re) => new RegExp(re, 's').test(document.getElementById('status').textContent)",
            ENDED.pattern,
            ANSWER_TIMEOUT_S,
        )
        m = ENDED.match(self.status())
        assert m, self.status()
        html = str(self.driver.call("() => document.getElementById('answer').innerHTML"))
        return Ended(m.group(1), m.group(2), self.answer_text(), html)

    def __repr__(self) -> str:
        return f"ExamplePage(status={json.dumps(self.status())})"
