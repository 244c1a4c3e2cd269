"""The small DOM toolkit the browser package shares: query, JS objects, event listeners that
live as long as the page, and tasks on Pyodide's event loop.

Proxies matter here: a plain Python function handed to JS is destroyed when the call returns,
so listeners are wrapped in ``create_proxy`` and kept alive for the page's lifetime.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import js
from pyodide.ffi import create_proxy, to_js

__all__ = ["Listeners", "js_obj", "q", "spawn"]


def q(sel: str, root: Any = None) -> Any:
    """``querySelector`` on ``root`` (the document by default); None when nothing matches."""
    return (root or js.document).querySelector(sel)


def js_obj(d: dict[str, Any]) -> Any:
    """A plain JS object (not a Map) from a dict, for fetch headers and options."""
    return to_js(d, dict_converter=js.Object.fromEntries)


class Listeners:
    """Event listeners bound for the life of the page (their proxies are kept here)."""

    def __init__(self) -> None:
        self._proxies: list[Any] = []

    def on(self, el: Any, name: str, fn: Callable[[Any], object], capture: bool = False) -> None:
        proxy = create_proxy(fn)
        self._proxies.append(proxy)
        el.addEventListener(name, proxy, capture)


_TASKS: set[asyncio.Task[None]] = set()


def spawn(coro: Coroutine[Any, Any, None]) -> None:
    """Run a coroutine on Pyodide's event loop, keeping a reference until it ends."""
    task = asyncio.ensure_future(coro)
    _TASKS.add(task)
    task.add_done_callback(_TASKS.discard)
