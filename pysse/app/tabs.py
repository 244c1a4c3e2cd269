"""The page's other tabs: the port through which a tab tells the others what it changed in the
shared chat store, hears them, and takes a lock that no other tab holds at the same time.

In the browser, ``web/tabs.js`` fills it with a ``BroadcastChannel`` and Web Locks
(``pysse.browser.tabs``), in the page's worker or on its main thread. ``TabHub`` is the same
contract in one process: the page's own default (one tab: nobody hears, every lock is free),
and the tests' way to put two pages on one store.

The messages are JSON texts (``app.chats``: ``saved``, ``deleted``, ``cleared``); a lock is
named for what it guards (``pysse-chat:ID`` while a chat is read, merged and written,
``pysse-answer:CHAT/MESSAGE`` while an answer streams in one tab).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Protocol

__all__ = ["Release", "TabHub", "Tabs"]

Release = Callable[[], object]


class Tabs(Protocol):
    """What a tab can do with the others. ``features``: which of "broadcast" and "locks" this
    engine gives (without "locks", ``acquire`` grants at once and guards nothing; without
    "broadcast", no tab hears another: the page says so)."""

    features: frozenset[str]

    def post(self, message: str) -> None: ...
    def listen(self, fn: Callable[[str], object]) -> None: ...
    def acquire(self, name: str, wait: bool) -> Awaitable[Release | None]: ...


class TabHub:
    """Tabs in one process: ``hub.tab()`` is one more tab."""

    def __init__(self) -> None:
        self.listeners: list[tuple[int, Callable[[str], object]]] = []
        self.held: dict[str, int] = {}  # lock name -> the tab holding it
        self.waiters: dict[str, list[tuple[int, asyncio.Future[Release]]]] = {}
        self._tabs = 0

    def tab(self) -> HubTab:
        self._tabs += 1
        return HubTab(self, self._tabs)

    def _grant(self, name: str, who: int) -> Release:
        self.held[name] = who
        released = [False]

        def release() -> None:
            if released[0]:
                return
            released[0] = True
            del self.held[name]
            queue = self.waiters.get(name, [])
            while queue:
                nxt, fut = queue.pop(0)
                if not fut.done():
                    fut.set_result(self._grant(name, nxt))
                    return

        return release

    def close(self, who: int) -> None:
        """A tab closed: its listeners go, and the browser lets go of its locks."""
        self.listeners = [(t, fn) for t, fn in self.listeners if t != who]
        for name, holder in list(self.held.items()):
            if holder == who:
                del self.held[name]
                queue = self.waiters.get(name, [])
                if queue:
                    nxt, fut = queue.pop(0)
                    fut.set_result(self._grant(name, nxt))


class HubTab:
    features = frozenset({"broadcast", "locks"})

    def __init__(self, hub: TabHub, who: int) -> None:
        self.hub = hub
        self.who = who

    def post(self, message: str) -> None:
        """Every other tab hears it, later (a BroadcastChannel's message is a task)."""
        loop = asyncio.get_event_loop()
        for who, fn in self.hub.listeners:
            if who != self.who:
                loop.call_soon(fn, message)

    def listen(self, fn: Callable[[str], object]) -> None:
        self.hub.listeners.append((self.who, fn))

    async def acquire(self, name: str, wait: bool) -> Release | None:
        if name not in self.hub.held:
            return self.hub._grant(name, self.who)
        if not wait:
            return None
        fut: asyncio.Future[Release] = asyncio.get_event_loop().create_future()
        self.hub.waiters.setdefault(name, []).append((self.who, fut))
        return await fut

    def close(self) -> None:
        self.hub.close(self.who)
