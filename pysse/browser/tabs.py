"""``pysse.app.tabs.Tabs`` over ``web/tabs.js`` (``globalThis.pysseTabs``): a BroadcastChannel
and Web Locks, in the page's worker or on its main thread."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

from pyodide.ffi import create_proxy

from ..app.tabs import Release

__all__ = ["BrowserTabs"]


class BrowserTabs:
    def __init__(self, js_tabs: Any) -> None:
        self.t = js_tabs
        self.features = frozenset(str(f) for f in js_tabs.features)
        self._proxies: list[Any] = []  # the listeners, alive as long as the page

    def post(self, message: str) -> None:
        self.t.post(message)

    def listen(self, fn: Callable[[str], object]) -> None:
        def heard(text: Any) -> None:
            try:  # (a failing handler must not reach the worker's error event)
                fn(str(text))
            except Exception:
                traceback.print_exc()

        proxy = create_proxy(heard)
        self._proxies.append(proxy)
        self.t.listen(proxy)

    async def acquire(self, name: str, wait: bool) -> Release | None:
        release = await self.t.acquire(name, wait)
        if release is None or type(release).__name__ == "JsNull":
            return None
        return lambda: release()
