"""The scripted stream server: a small HTTP/1.1 server on a free loopback port that answers
each request by playing a :class:`~pysse.testing.script.Script`, and records what it received.

Why its own server rather than an ASGI app under uvicorn: a test of a streaming client needs
control that ASGI does not give. Each write must leave as its own HTTP chunk at once (asyncio
sets ``TCP_NODELAY``; every write is drained before the next); a drop must close the
connection *without* the terminating zero-length chunk, so the client sees a broken body; slow
headers must mean no byte at all, not even the status line. It also notices when the client
goes away mid-answer (Stop, a closed tab, a cancelled request), which is what a test asserts.

It runs its own event loop in a thread, so plain, async and Playwright (sync or async) tests
can all use it. Every response says ``Connection: close``. Cross-origin pages are let in:
CORS preflights are answered (not recorded) and responses carry ``Access-Control-Allow-Origin``
unless the script sets it itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Self

from ..errors import KitError
from .player import play
from .script import Script

__all__ = ["RecordedRequest", "ScriptServer"]

MAX_HEAD = 64 * 1024
MAX_BODY = 16 * 1024 * 1024

NO_SCRIPT = Script.http_error(
    500, "pysse.testing: no script to play; call ScriptServer.play(Script...) first"
)


@dataclass(eq=False)
class RecordedRequest:
    """One request the server received, and what became of its answer.

    ``headers`` has lower-case names (repeated headers joined with ``", "``); ``received_at``
    is ``time.perf_counter()`` when the request had fully arrived; ``script`` is what was
    played in answer.
    """

    method: str
    target: str
    headers: dict[str, str]
    body: bytes
    script: Script
    received_at: float = field(default_factory=time.perf_counter)
    _ended: threading.Event = field(default_factory=threading.Event, repr=False)
    _disconnected: bool = field(default=False, repr=False)
    _release: Callable[[], None] | None = field(default=None, repr=False)

    @property
    def path(self) -> str:
        """The target without its query string."""
        return self.target.split("?", 1)[0]

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)

    @property
    def ended(self) -> bool:
        """The answer is over: played to its end, or the client went away."""
        return self._ended.is_set()

    @property
    def disconnected(self) -> bool:
        """The client closed the connection before the script was played to its end (Stop, a
        closed tab, a cancelled request)."""
        return self._disconnected

    def wait_ended(self, timeout: float = 10.0) -> bool:
        """Wait until the answer is over; False if it is still going after ``timeout`` s."""
        return self._ended.wait(timeout)

    def wait_disconnected(self, timeout: float = 10.0) -> bool:
        """Wait until the answer is over and say whether the client left before its end:
        ``assert request.wait_disconnected()`` is "Stop cancelled the request". Returns as
        soon as the answer ends either way, so a finished answer answers False at once."""
        return self._ended.wait(timeout) and self._disconnected

    def release(self) -> None:
        """Let the answer go on past its current (or next) wait for ever: a ``.stall()``
        without seconds, ``first_byte_after(math.inf)``, ``headers_after(math.inf)``. A test
        holds the answer there for as long as it takes to check the client (no race with a
        timed stall on a busy machine), then releases it; one call per such wait."""
        if self._release is not None:
            self._release()

    def _end(self, disconnected: bool) -> None:
        self._disconnected = disconnected
        self._ended.set()


class ScriptServer:
    """Plays scripts to whoever connects, at :attr:`url` (any path, any method).

    ``with ScriptServer(script) as server:`` or the ``sse_server`` pytest fixture.
    :meth:`play` chooses what the next requests get; :attr:`requests` is what arrived.
    """

    def __init__(
        self, *scripts: Script, host: str = "127.0.0.1", port: int = 0, cors: bool = True
    ) -> None:
        self.host = host
        self.port = port
        self.cors = cors
        self._scripts: list[Script] = list(scripts)
        self._requests: list[RecordedRequest] = []
        self._cond = threading.Condition()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- the test's side -----------------------------------------------------------------------

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: post to any path under it."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def play(self, *scripts: Script) -> Self:
        """The scripts for the next requests, in order; the last one answers every request
        after them. Returns the server, so ``server = sse_server.play(script)`` reads well."""
        if not scripts:
            raise ValueError("play() needs at least one Script")
        with self._cond:
            self._scripts = list(scripts)
        return self

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far (CORS preflights aside), oldest first."""
        with self._cond:
            return list(self._requests)

    @property
    def last_request(self) -> RecordedRequest:
        """The latest request; :class:`~pysse.errors.KitError` if none came yet (use
        :meth:`wait_for_requests` to wait for one)."""
        with self._cond:
            if not self._requests:
                raise KitError(f"no request reached {self.url} yet")
            return self._requests[-1]

    def wait_for_requests(self, count: int = 1, timeout: float = 10.0) -> list[RecordedRequest]:
        """Wait until at least ``count`` requests arrived; all of them. ``KitError`` after
        ``timeout`` seconds, saying how many came."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._requests) >= count, timeout):
                raise KitError(
                    f"expected {count} request(s) at {self.url} within {timeout:g} s, "
                    f"got {len(self._requests)}"
                )
            return list(self._requests)

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> Self:
        """Listen (a free port unless one was given) and return once connections are taken."""
        if self._thread is not None:
            raise KitError("this ScriptServer was already started")
        self._thread = threading.Thread(target=self._run, name="pysse-script-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(20):
            raise KitError("the scripted server did not start within 20 s")
        if self._error is not None:
            raise KitError(
                f"the scripted server could not listen on {self.host}:{self.port}: {self._error}"
            ) from self._error
        return self

    def stop(self) -> None:
        """Close every connection (answers still playing are cut off) and stop listening."""
        loop, stopping = self._loop, self._stopping
        if loop is not None and stopping is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop already finished
                loop.call_soon_threadsafe(stopping.set)
        if self._thread is not None:
            self._thread.join(20)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<ScriptServer {self.url} requests={len(self._requests)}>"

    # -- the server's side (its own thread and event loop) -------------------------------------

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # reported by start(); nothing else may see it
            self._error = exc
        finally:
            self._ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        server = await asyncio.start_server(self._serve, self.host, self.port, limit=MAX_HEAD)
        self.port = int(server.sockets[0].getsockname()[1])
        self._ready.set()
        try:
            await self._stopping.wait()
        finally:
            server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(5):
                    await server.wait_closed()

    def _next_script(self) -> Script:
        with self._cond:
            if not self._scripts:
                return NO_SCRIPT
            return self._scripts.pop(0) if len(self._scripts) > 1 else self._scripts[0]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._answer(reader, writer)
        except asyncio.CancelledError:
            # stop() cancels the connections still open; ending normally keeps Python 3.11's
            # streams callback from logging the cancellation as an error.
            pass
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                async with asyncio.timeout(5):
                    await writer.wait_closed()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            got = await _read_request(reader, writer)
        except (ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            with contextlib.suppress(ConnectionError):
                writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n")
                writer.write(b"connection: close\r\n\r\n")
                await writer.drain()
            return
        except ConnectionError:
            return
        if got is None:  # connected and left without a request (a browser's preconnect)
            return
        method, target, headers, body = got
        origin = headers.get("origin")
        if self.cors and method == "OPTIONS" and "access-control-request-method" in headers:
            await _preflight(writer, headers)
            return
        script = self._next_script()
        release = asyncio.Semaphore(0)  # one per wait for ever that the test lets pass
        loop = asyncio.get_running_loop()

        def release_soon() -> None:
            with contextlib.suppress(RuntimeError):  # the server already stopped
                loop.call_soon_threadsafe(release.release)

        record = RecordedRequest(method, target, headers, body, script, _release=release_soon)
        with self._cond:
            self._requests.append(record)
            self._cond.notify_all()
        extra = [("connection", "close")]
        if (
            self.cors
            and origin
            and not any(n.lower() == "access-control-allow-origin" for n, _ in script.headers)
        ):
            exposed = ", ".join(sorted({n.lower() for n, _ in script.headers}))
            extra += [
                ("access-control-allow-origin", origin),
                ("access-control-allow-credentials", "true"),
                ("vary", "origin"),
            ]
            if exposed:
                extra.append(("access-control-expose-headers", exposed))
        sink = _SocketSink(writer, extra, head_only=method == "HEAD")
        playing = asyncio.create_task(play(script, sink, release))
        watching = asyncio.create_task(_until_client_leaves(reader))
        try:
            await asyncio.wait({playing, watching}, return_when=asyncio.FIRST_COMPLETED)
        finally:  # played to the end, the client left, or the server stops
            finished = playing.done() and not playing.cancelled() and not playing.exception()
            left = watching.done() and not watching.cancelled()
            watching.cancel()
            playing.cancel()
            await asyncio.gather(playing, watching, return_exceptions=True)
            failed = None if playing.cancelled() else playing.exception()
            # The client went away before the end: its side closed, or a write to it failed.
            record._end(not finished and (left or isinstance(failed, ConnectionError)))
        if failed is not None and not isinstance(failed, ConnectionError):
            raise failed  # a bug in the kit: let asyncio report it


class _SocketSink:
    """The player's transport for one connection: HTTP/1.1 framing by hand."""

    def __init__(
        self, writer: asyncio.StreamWriter, extra: list[tuple[str, str]], head_only: bool
    ) -> None:
        self.writer = writer
        self.extra = extra
        self.head_only = head_only
        self.chunked = True

    async def _send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def start(self, status: int, headers: Sequence[tuple[str, str]]) -> None:
        names = {n.lower() for n, _ in headers}
        self.chunked = "content-length" not in names
        lines = [f"HTTP/1.1 {status} {_reason(status)}"]
        lines += [f"{n}: {v}" for n, v in [*headers, *self.extra]]
        if self.chunked and "transfer-encoding" not in names:
            lines.append("transfer-encoding: chunked")
        await self._send(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    async def write(self, data: bytes) -> None:
        if self.head_only:
            return
        if self.chunked:
            data = b"%x\r\n%s\r\n" % (len(data), data)
        await self._send(data)

    async def finish(self) -> None:
        if self.chunked and not self.head_only:
            await self._send(b"0\r\n\r\n")

    async def drop(self) -> None:
        """Nothing more: the connection is closed next, with no terminating chunk."""


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


async def _read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> tuple[str, str, dict[str, str], bytes] | None:
    """One request: method, target, headers (lower-case names), body. None if the client
    closed the connection before sending anything; ValueError if it is not HTTP/1.x."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial.strip():
            return None
        raise
    request_line, *lines = head.decode("latin-1").split("\r\n")
    method, target, version = request_line.split(" ", 2)
    if not version.startswith("HTTP/1."):
        raise ValueError(f"not HTTP/1.x: {request_line!r}")
    headers: dict[str, str] = {}
    for line in lines:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            raise ValueError(f"bad header line {line!r}")
        key = name.strip().lower()
        headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        await writer.drain()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = await _read_chunked(reader)
    elif headers.get("content-length"):
        size = int(headers["content-length"])
        if not 0 <= size <= MAX_BODY:
            raise ValueError(f"content-length {size} is outside 0-{MAX_BODY}")
        body = await reader.readexactly(size)
    else:
        body = b""
    return method, target, headers, body


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0].strip(), 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                pass
            return b"".join(parts)
        total += size
        if total > MAX_BODY:
            raise ValueError(f"a chunked request body over {MAX_BODY} bytes")
        parts.append((await reader.readexactly(size + 2))[:-2])


async def _preflight(writer: asyncio.StreamWriter, headers: dict[str, str]) -> None:
    """Allow whatever the page asks for: this server exists to be called by test pages."""
    lines = [
        "HTTP/1.1 204 No Content",
        f"access-control-allow-origin: {headers.get('origin', '*')}",
        "access-control-allow-credentials: true",
        f"access-control-allow-methods: {headers['access-control-request-method']}",
        "access-control-max-age: 600",
        "vary: origin",
        "content-length: 0",
        "connection: close",
    ]
    if "access-control-request-headers" in headers:
        lines.append(f"access-control-allow-headers: {headers['access-control-request-headers']}")
    if "access-control-request-private-network" in headers:
        lines.append("access-control-allow-private-network: true")
    with contextlib.suppress(ConnectionError):
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()


async def _until_client_leaves(reader: asyncio.StreamReader) -> None:
    """Return when the client closes its side: a well-behaved client sends nothing more after
    its request, so any end of input means it went away."""
    with contextlib.suppress(ConnectionError):
        while await reader.read(4096):
            pass
