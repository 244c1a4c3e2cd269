"""Start a driver for an engine by name (the ``engine`` fixture's one entry point)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import Driver, EngineUnavailable
from .find import find_firefox, find_node, find_puppeteer_core, find_webkit

__all__ = ["launch"]


def _chromium(request: Any) -> Driver:
    from .chromium import ChromiumDriver

    return ChromiumDriver(request.getfixturevalue("browser"))


def _firefox(request: Any) -> Driver:
    from .firefox import FirefoxDriver

    return FirefoxDriver(find_node(), find_puppeteer_core(), find_firefox())


def _webkit(request: Any) -> Driver:
    from .webkit import WebKitDriver

    return WebKitDriver(*find_webkit())


LAUNCHERS: dict[str, Callable[[Any], Driver]] = {
    "chromium": _chromium,
    "firefox": _firefox,
    "webkit": _webkit,
}


def launch(name: str, request: Any) -> Driver:
    """A running ``name`` browser; ``request`` is pytest's (Chromium reuses the session's
    Playwright browser)."""
    if name not in LAUNCHERS:
        raise EngineUnavailable(f"unknown engine {name!r}: expected one of {', '.join(LAUNCHERS)}")
    return LAUNCHERS[name](request)
