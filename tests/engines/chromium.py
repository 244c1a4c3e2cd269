"""Chromium through Playwright (CDP): the suite's own browser, wrapped in the engine interface."""

from __future__ import annotations

from typing import Any, Literal

from . import Driver, EngineName, EnginePage, js_args

__all__ = ["ChromiumDriver"]


class ChromiumPage(EnginePage):
    engine: EngineName = "chromium"

    def __init__(self, browser: Any, width: int, height: int, ctx: Any = None) -> None:
        self.twin_of = ctx is not None
        self.ctx = ctx or browser.new_context(viewport={"width": width, "height": height})
        self.browser = browser
        self.page = self.ctx.new_page()
        self.native: list[str] = []
        self.page.on("pageerror", lambda e: self.native.append(f"pageerror: {e}"))

    def twin(self) -> EnginePage:
        return ChromiumPage(self.browser, 0, 0, ctx=self.ctx)

    def goto(self, url: str) -> None:
        self.page.goto(url)

    def evaluate(self, fn: str, *args: Any) -> Any:
        # An expression, not a function and an argument: Playwright passes one argument only.
        return self.page.evaluate(f"({fn})({js_args(args)})")

    def type(self, selector: str, text: str) -> None:
        self.page.focus(selector)
        self.page.keyboard.type(text)

    def press(self, selector: str, key: Literal["Enter", "Escape", "Tab"]) -> None:
        self.page.press(selector, key)

    def click(self, selector: str) -> None:
        self.page.click(selector)

    def screenshot(self, path: str) -> None:
        self.page.screenshot(path=path)

    def errors(self) -> list[str]:
        return [*self.native, *super().errors()]

    def close(self) -> None:
        if self.twin_of:
            self.page.close()
        else:
            self.ctx.close()


class ChromiumDriver(Driver):
    """Wraps the session's Playwright browser (one ``sync_playwright`` per thread)."""

    name: EngineName = "chromium"

    def __init__(self, browser: Any) -> None:
        self.browser = browser
        self.version = str(browser.version)

    def new_page(self, width: int = 1000, height: int = 700) -> EnginePage:
        return ChromiumPage(self.browser, width, height)

    def close(self) -> None:
        """The browser belongs to the session's ``browser`` fixture."""
