"""Running an ASGI app with uvicorn, hardened: bounded connections, header and keep-alive
timeouts, rate-limited logs, and a Ctrl+C that closes open streams and exits at once.

Why this exists rather than a bare ``uvicorn.run``:

* **Slowloris.** uvicorn has no timeout for a request's headers (its keep-alive timer starts
  only after a response), so a client that sends a header byte now and then holds a socket
  forever; enough of them exhaust the file descriptors (EMFILE) and every client fails.
  ``GuardedH11Protocol`` closes a connection whose headers are not complete within
  ``header_timeout`` and, at ``max_connections``, evicts the oldest connection still waiting
  for its headers before refusing anyone (a legitimate request completes its headers in one
  packet, so it is never the one waiting).
* **Logs.** One line per kind of event and interval (``RateLimit``): an attack must not
  turn into hundreds of megabytes of "Too many open files".
* **Shutdown.** uvicorn waits for open responses to finish: a streaming chat can take
  minutes. ``STOPPING`` tells every stream to end now; they end within milliseconds and the
  process exits with one line of output, also on a second Ctrl+C.
* **Start.** The listening sockets are made here (``listen``), before the banner and before
  anything slow: a port in use or a wrong host is a ``ConfigError`` naming the fix, where
  uvicorn would log its own line after the fact (and ``build.py serve`` after minutes of
  building the site).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import errno
import logging
import resource
import socket
import sys
import time
import weakref
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..errors import ConfigError

__all__ = [
    "STOPPING",
    "GuardedH11Protocol",
    "RateLimit",
    "ServerLimits",
    "Stopped",
    "listen",
    "run",
]

T = TypeVar("T")


class Stopped(Exception):
    """The server is shutting down: the waiting stream should end now."""


class Stopping:
    """Set when the server starts shutting down. One future per event loop (tests run
    several servers, each on its own loop in its own thread)."""

    def __init__(self) -> None:
        self._futures: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, asyncio.Future[None]
        ] = weakref.WeakKeyDictionary()
        self._waiters: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, set[asyncio.Future[None]]
        ] = weakref.WeakKeyDictionary()

    def future(self) -> asyncio.Future[None]:
        loop = asyncio.get_running_loop()
        fut = self._futures.get(loop)
        if fut is None:
            fut = self._futures[loop] = loop.create_future()
        return fut

    def waiter(self) -> asyncio.Future[None]:
        """A future of the caller's own, done when the server stops; cancel it when done
        waiting. Why not the shared ``future()``: every wait on a future adds a callback to
        it and removes it after, and removing one is O(callbacks), so thousands of streams
        waiting on one future made each stream's end O(streams)."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        shared = self.future()
        if shared.done():
            fut.set_result(None)
            return fut
        waiters = self._waiters.get(loop)
        if waiters is None:
            waiters = self._waiters[loop] = set()
            shared.add_done_callback(lambda _: self._wake(waiters))
        waiters.add(fut)
        fut.add_done_callback(waiters.discard)
        return fut

    @staticmethod
    def _wake(waiters: set[asyncio.Future[None]]) -> None:
        for fut in list(waiters):
            if not fut.done():
                fut.set_result(None)

    def set(self) -> None:
        fut = self.future()
        if not fut.done():
            fut.set_result(None)

    def is_set(self) -> bool:
        return self.future().done()

    async def race(self, aw: Awaitable[T], timeout: float | None) -> T:
        """``await aw`` with a timeout (``TimeoutError``), or ``Stopped`` if the server stops
        first. The awaitable is cancelled when it loses."""
        task: asyncio.Future[T] = asyncio.ensure_future(aw)
        stop = self.waiter()
        waiting: set[asyncio.Future[Any]] = {task, stop}
        try:
            done, _ = await asyncio.wait(waiting, timeout=timeout, return_when="FIRST_COMPLETED")
        except BaseException:  # this task was cancelled (the client went away): pass it on
            task.cancel()
            raise
        finally:
            stop.cancel()
        if task in done:
            return task.result()
        task.cancel()
        if stop in done:
            raise Stopped
        raise TimeoutError


STOPPING = Stopping()


class RateLimit(logging.Filter):
    """Lets each message template through at most ``burst`` times per ``interval`` seconds;
    the next one that passes says how many were dropped."""

    def __init__(self, interval: float = 10.0, burst: int = 20) -> None:
        super().__init__()
        self.interval = interval
        self.burst = burst
        self._window: dict[str, tuple[float, int]] = {}
        self._dropped: collections.Counter[str] = collections.Counter()

    def filter(self, record: logging.LogRecord) -> bool:
        key = f"{record.name}:{record.msg}"
        now = time.monotonic()
        start, count = self._window.get(key, (now, 0))
        if now - start >= self.interval:
            start, count = now, 0
        if count >= self.burst:
            self._dropped[key] += 1
            self._window[key] = (start, count)
            return False
        self._window[key] = (start, count + 1)
        dropped = self._dropped.pop(key, 0)
        if dropped:
            record.msg = f"{record.msg} ({dropped} more like this were not logged)"
        if record.exc_info and isinstance(record.exc_info[1], OSError):
            record.exc_info = None  # EMFILE and friends: the message says it, no traceback
        return True


class _Quiet(logging.Filter):
    """Drops uvicorn's shutdown chatter (pysse prints its own one line)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "timeout graceful shutdown exceeded" not in str(record.msg)


@dataclass(frozen=True)
class ServerLimits:
    max_connections: int = 1000  # open client connections; also bounded by the fd limit
    header_timeout: float = 10.0  # a request's line and headers must arrive within this
    keepalive_timeout: int = 5  # an idle keep-alive connection is closed after this
    loop: Literal["asyncio", "uvloop"] = "asyncio"  # uvloop: leaner per chunk, if installed


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a header deadline and a connection cap that evicts the
    oldest connection still waiting for its headers."""

    max_connections = 1000
    header_timeout = 10.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        pending: collections.OrderedDict[GuardedH11Protocol, None] = _pending(self.server_state)
        if len(self.connections) >= self.max_connections:
            if pending:
                oldest, _ = pending.popitem(last=False)
                oldest.transport.abort()
            else:  # every slot is serving a request: refuse this one, cheaply
                transport.abort()
                return
        super().connection_made(transport)
        self._pending = pending
        self._header_timer: asyncio.TimerHandle | None = None
        self._await_headers()

    def _await_headers(self) -> None:
        self._pending[self] = None
        self._cancel_header_timer()
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _cancel_header_timer(self) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.abort()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE and self in getattr(self, "_pending", {}):
            self._pending.pop(self, None)
            self._cancel_header_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._await_headers()  # the next request on this connection has a deadline too

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        getattr(self, "_pending", {}).pop(self, None)
        if self.transport is not None:
            super().connection_lost(exc)


def _pending(state: Any) -> collections.OrderedDict[GuardedH11Protocol, None]:
    pending = getattr(state, "pysse_pending", None)
    if pending is None:
        pending = state.pysse_pending = collections.OrderedDict()
    return pending


def fd_budget() -> int:
    """Raise the open-files soft limit to the hard limit; return how many client connections
    fit: each relayed chat also holds an upstream socket, and sockets accepted but not yet
    handed to a protocol (up to the backlog) hold descriptors too, so a third, less a margin."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = 65536 if hard == resource.RLIM_INFINITY else hard
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
    return max(16, (soft - 64) // 3)


def protocol_class(limits: ServerLimits) -> type[GuardedH11Protocol]:
    cap = min(limits.max_connections, fd_budget())
    return type(
        "GuardedH11Protocol",
        (GuardedH11Protocol,),
        {"max_connections": cap, "header_timeout": limits.header_timeout},
    )


class _Server(uvicorn.Server):
    async def shutdown(self, sockets: Any = None) -> None:
        STOPPING.set()  # every open stream ends itself now
        await super().shutdown(sockets)


def setup_logging() -> None:
    """One handler for pysse's own lines; rate limits on everything a flood could repeat."""
    log = logging.getLogger("pysse")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False
    for name, burst in (("pysse", 20), ("asyncio", 3), ("uvicorn.error", 3)):
        logger = logging.getLogger(name)
        if not any(isinstance(f, RateLimit) for f in logger.filters):
            logger.addFilter(RateLimit(burst=burst))
    logging.getLogger("uvicorn.error").addFilter(_Quiet())


def config(app: Any, host: str, port: int, limits: ServerLimits) -> uvicorn.Config:
    protocol = protocol_class(limits)
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=protocol,
        # asyncio accepts up to `backlog` sockets per loop turn before any protocol sees them:
        # keep that well inside the descriptor budget, or a burst of connections hits EMFILE
        # before the connection cap can evict anyone.
        backlog=max(16, min(2048, protocol.max_connections // 4)),
        timeout_keep_alive=limits.keepalive_timeout,
        loop=limits.loop,
        timeout_graceful_shutdown=2,  # a backstop: streams end themselves on STOPPING
        h11_max_incomplete_event_size=16 * 1024,  # request line + headers
        log_level="warning",
        lifespan="off",
    )


OTHER_HOST = "pass --host 127.0.0.1 (this machine only) or --host 0.0.0.0 (every interface)"


def listen(host: str, port: int) -> list[socket.socket]:
    """Sockets listening on ``host``:``port``, one per address the host resolves to (as
    uvicorn binds them: ``localhost`` is 127.0.0.1 and ::1). Listening at once holds the
    port while ``build.py serve`` builds the site. A ``ConfigError`` naming the setting and
    the fix when it cannot be done."""
    if not 1 <= port <= 65535:
        raise ConfigError(f"--port {port}: expected a port number from 1 to 65535")
    try:
        found = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except (socket.gaierror, UnicodeError):  # UnicodeError: "a..b", no name at all
        raise ConfigError(f"--host {host}: no such host name or address; {OTHER_HOST}") from None
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(found):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # as asyncio: the IPv4 address has its own socket
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(128)  # asyncio sets the configured backlog when it starts serving
    except OSError as exc:
        for sock in sockets:
            sock.close()
        raise ConfigError(_cannot_listen(host, port, exc)) from None
    return sockets


def _cannot_listen(host: str, port: int, exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return (
            f"port {port} is in use (another pysse-relay or build.py serve?): pass --port N "
            "or stop the other server"
        )
    if exc.errno == errno.EACCES:
        return (
            f"port {port} needs privileges this user does not have (ports below 1024 "
            "usually do): pass --port N with N from 1024 to 65535"
        )
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"--host {host} is not an address of this machine; {OTHER_HOST}"
    reason = exc.strerror or exc
    return f"cannot listen on {host} port {port} ({reason}): pass another --host or --port"


def run(
    app: Any,
    host: str,
    port: int,
    limits: ServerLimits | None = None,
    sockets: list[socket.socket] | None = None,
) -> None:
    """Serve ``app`` until Ctrl+C / SIGTERM; then close open streams and return within about
    a second, printing one line. ``sockets``: already listening (``listen``, checked at
    start); else they are made here, a ``ConfigError`` if that fails."""
    listening = listen(host, port) if sockets is None else sockets
    setup_logging()
    server = _Server(config(app, host, port, limits or ServerLimits()))
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=listening)
    print("pysse: stopped", flush=True)
