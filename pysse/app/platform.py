"""What the chat page needs from where it runs, as ports: the network (``Net``), the chat store
(``StoreBackend``), a clock, the page's address, and frames. ``pysse.browser`` fills them with
the browser's (``fetch`` + the read loop, IndexedDB, ``performance.now``, BroadcastChannel and
Web Locks) in a Web Worker or on the main thread; tests fill them with scripted bytes, a dict
and a ``TabHub``.

Also the page's two small task helpers, pure: ``spawn`` (a coroutine on the event loop, kept
alive) and ``run_sliced`` (stepwise work in slices, so whichever thread runs it keeps
answering: the main thread's input, or the worker's frame and event messages).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine, Generator
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

from .. import faults
from ..call.net import Net
from ..render.frames import FrameLoop
from .tabs import TabHub, Tabs

__all__ = ["PAUSES", "ImageScaler", "Location", "Platform", "StoreBackend", "run_sliced", "spawn"]

T = TypeVar("T")
SLICE_MS = 8.0  # work between pauses: well inside a frame
PAUSES = [0]  # how often run_sliced gave the loop a turn (for the page's stats and tests)


@dataclass(frozen=True)
class Location:
    """The page's address (a worker's own ``location`` is its script's, not the page's)."""

    href: str = "http://localhost/"
    origin: str = "http://localhost"
    search: str = ""


class StoreBackend(Protocol):
    """The chat store's storage, one object store per name (``web/store.js`` over IndexedDB).
    Values are strings, or for ``recordings`` ``{"meta": str, "bytes": bytes}``. Every
    method may raise: ``storage.ChatStore`` turns a failure into one sentence."""

    def open(self) -> Awaitable[bool]: ...
    def get(self, store: str, key: str) -> Awaitable[Any]: ...
    def getMany(self, store: str, keys: list[str]) -> Awaitable[list[Any]]: ...
    def put(self, store: str, key: str, value: Any) -> Awaitable[None]: ...
    def putIfStamp(
        self, chat_id: str, expected: str | None, entries: list[tuple[str, str, Any]]
    ) -> Awaitable[tuple[bool, str | None]]:
        """Write ``entries`` in one transaction if chat ``chat_id``'s row is stamped
        ``expected`` (None: there is no row), checked in that transaction. Returns whether it
        wrote, and the stamp found (None: no row)."""

    def delete(self, store: str, key: str) -> Awaitable[None]: ...
    def all(self, store: str) -> Awaitable[list[Any]]: ...
    def keys(self, store: str) -> Awaitable[list[str]]: ...
    def delPrefix(self, store: str, prefix: str) -> Awaitable[None]: ...
    def getPrefix(self, store: str, prefix: str) -> Awaitable[list[Any]]: ...
    def keysPrefix(self, store: str, prefix: str) -> Awaitable[list[str]]: ...
    def clear(self) -> Awaitable[None]: ...


class ImageScaler(Protocol):
    """Draws an image at another size and encodes it: the bytes and the type it was encoded
    as (an encoder that cannot write ``out_type`` writes PNG). ``pysse.browser.images``."""

    def scale(
        self,
        data: bytes,
        media_type: str,
        width: int,
        height: int,
        out_type: str,
        quality: float | None,
    ) -> Awaitable[tuple[bytes, str]]: ...


@dataclass
class Platform:
    """Everything the page's Python reaches outside itself (see the module docstring)."""

    net: Net
    store: StoreBackend | None
    clock: Callable[[], float] = field(default=lambda: time.perf_counter() * 1000)
    location: Location = field(default_factory=Location)
    loop: FrameLoop = field(default_factory=FrameLoop)
    now_epoch_ms: Callable[[], float] = field(default=lambda: time.time() * 1000)
    stored_settings: str | None = None  # what localStorage held at start (the main thread's)
    tabs: Tabs = field(default_factory=lambda: TabHub().tab())  # the page's other tabs
    images: ImageScaler | None = None  # scales a large attached image (None: refused)


_TASKS: set[asyncio.Future[Any]] = set()


def spawn(coro: Coroutine[Any, Any, Any]) -> None:
    """Run a coroutine on the event loop, keeping a reference until it ends; an exception it
    raises ends that action alone and is reported (``pysse.faults``: a task nobody awaits
    would hide it)."""
    name = getattr(coro, "__qualname__", "a task")
    task = asyncio.ensure_future(coro)
    _TASKS.add(task)
    task.add_done_callback(lambda t: _done(t, name))


def _done(task: asyncio.Future[Any], name: str) -> None:
    _TASKS.discard(task)
    if not task.cancelled() and (exc := task.exception()) is not None:
        faults.report(f"the action {name}", exc)


async def run_sliced(steps: Generator[None, None, T], slice_ms: float = SLICE_MS) -> T:
    """Drive a stepwise computation (one that yields now and then, see
    ``inspector.replay_steps``) without blocking its thread: whenever ``slice_ms`` of work has
    passed, give the event loop a turn before going on."""
    start = time.perf_counter()
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            return cast(T, stop.value)
        if (time.perf_counter() - start) * 1000 >= slice_ms:
            PAUSES[0] += 1
            await asyncio.sleep(0)
            start = time.perf_counter()
