"""The small DOM toolkit the browser package shares: query, JS objects, event listeners that
live as long as the page, and tasks on Pyodide's event loop.

Proxies matter here: a plain Python function handed to JS is destroyed when the call returns,
so listeners are wrapped in ``create_proxy`` and kept alive for the page's lifetime.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Generator
from typing import Any, TypeVar, cast

import js
from pyodide.ffi import create_proxy, to_js

__all__ = ["Listeners", "attr", "download", "flash", "js_obj", "q", "run_sliced", "spawn"]

T = TypeVar("T")
SLICE_MS = 8.0  # work between pauses: well inside a frame, so input and painting go on
PAUSES = [0]  # how often run_sliced gave the page a turn (for the page's stats and tests)


def q(sel: str, root: Any = None) -> Any:
    """``querySelector`` on ``root`` (the document by default); None when nothing matches."""
    return (root or js.document).querySelector(sel)


def attr(el: Any, name: str) -> str:
    """An attribute's value, "" when absent (reading a missing ``dataset`` key from Python
    raises AttributeError)."""
    return str(el.getAttribute(name) or "")


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


async def run_sliced(steps: Generator[None, None, T], slice_ms: float = SLICE_MS) -> T:
    """Drive a stepwise computation (one that yields now and then, see
    ``inspector.replay_steps``) without blocking the page: whenever ``slice_ms`` of work has
    passed, give the event loop a turn (input, painting) before going on."""
    start = js.performance.now()
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            return cast(T, stop.value)
        if js.performance.now() - start >= slice_ms:
            PAUSES[0] += 1
            await asyncio.sleep(0)
            start = js.performance.now()


def download(name: str, data: str | bytes, mime: str) -> None:
    """Offer ``data`` as a file download (Save .sse, Export)."""
    from pyodide.ffi import create_once_callable

    part = to_js(data) if isinstance(data, bytes) else data
    blob = js.Blob.new([part], js_obj({"type": mime}))
    url = js.URL.createObjectURL(blob)
    a = js.document.createElement("a")
    a.href = url
    a.download = name
    js.document.body.appendChild(a)
    a.click()
    a.remove()
    js.setTimeout(create_once_callable(lambda: js.URL.revokeObjectURL(url)), 1000)


def flash(btn: Any, text: str, ms: int = 1500) -> None:
    """Show ``text`` on a button for a moment ("Copied"), then its own label again."""
    from pyodide.ffi import create_once_callable

    original = attr(btn, "data-label") or str(btn.textContent)
    btn.dataset.label = original
    btn.textContent = text

    def reset() -> None:
        btn.textContent = attr(btn, "data-label") or original

    js.setTimeout(create_once_callable(reset), ms)
