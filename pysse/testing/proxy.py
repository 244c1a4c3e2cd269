"""A TCP proxy on loopback that a test can cut, like pulling a network cable between a client
(your page, your SDK) and a server (your relay): ``cut()`` resets every open connection at
once, so the client's read fails mid-body; new connections go through again. What a test of
reconnecting or resuming needs, with the real client and the real server on either side.

    with CutProxy(relay_port) as proxy:        # point the client at proxy.url
        ...                                    # mid-answer:
        proxy.cut()                            # the client sees a broken stream
        proxy.unplug(); ...; proxy.plug()      # and no connection at all for a while
        proxy.freeze()                         # or: open, and silent (a dead connection)

It listens from construction on: ``proxy = CutProxy(port)`` works as well (``proxy.url`` is
right at once), and ``proxy.close()`` (or the end of the ``with`` block) stops it. A proxy
that only became usable inside ``with`` had ``url == "http://127.0.0.1:0"`` outside it, and
refused connections with nothing to say why.

Standard library only; its own event loop in a thread, like ``ScriptServer``.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
from collections.abc import Callable
from typing import Self

from ..errors import KitError

__all__ = ["CutProxy"]


class CutProxy:
    """Forwards ``host:port`` (``url``) to ``host:target_port``; ``cut()`` pulls the cable."""

    def __init__(self, target_port: int, host: str = "127.0.0.1") -> None:
        self.target = (host, target_port)
        self.host = host
        self.cuts = 0
        self.refusing = False  # the cable stays out: new connections are reset at once
        self.refused = 0
        self.frozen: set[asyncio.StreamWriter] = set()  # ends that are sent nothing more
        self._loop: asyncio.AbstractEventLoop | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._closed = False
        self._error: BaseException | None = None
        # Bound here, so the port is known (and connections queue) before the loop runs.
        self._sock = socket.create_server((host, 0))
        self.port = int(self._sock.getsockname()[1])
        self._thread = threading.Thread(target=self._run, name="pysse-cut-proxy", daemon=True)
        self._thread.start()
        if not self._ready.wait(30) or self._loop is None:
            self.close()
            why = f": {self._error}" if self._error else " within 30 s"
            raise KitError(f"the cut proxy could not start{why}") from self._error

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: the server's URL, through the proxy."""
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop listening and reset every connection still open (safe to call twice)."""
        self._closed = True
        if self._loop is not None and self._stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop already finished
                self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)
        self._sock.close()

    def cut(self) -> int:
        """Reset every connection open now (both sides: the server sees its client go too);
        returns how many sockets were reset."""

        def reset() -> int:
            count = 0
            for w in list(self._writers):
                sock = w.get_extra_info("socket")
                if sock is not None:  # RST, not FIN: a cable pulled, not a server finishing
                    with contextlib.suppress(OSError):
                        sock.setsockopt(
                            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                        )
                w.transport.abort()
                count += 1
            self._writers.clear()
            self.frozen.clear()
            return count

        count = self._on_loop(reset)
        self.cuts += 1
        return count

    def freeze(self) -> int:
        """Silence every connection open now: each stays open, but nothing more is forwarded
        either way, not even a close (a phone that put the page in the background, a NAT
        that forgot the mapping: the connection is dead and nobody says so; only a client's
        idle timeout can tell). New connections go through. Returns how many connections."""

        def freeze() -> int:
            self.frozen.update(self._writers)
            return len(self._writers) // 2

        return self._on_loop(freeze)

    def _on_loop(self, job: Callable[[], int]) -> int:
        """Run ``job`` in the proxy's event loop (its connections are that loop's) and wait."""
        if self._loop is None or self._closed:
            raise KitError("the proxy is closed (close(), or its `with` block ended): make another")
        done = threading.Event()
        result: list[int] = []
        failed: list[BaseException] = []

        def run() -> None:
            try:
                result.append(job())
            except BaseException as exc:  # told to the caller, never lost in the loop's log
                failed.append(exc)
            finally:
                done.set()

        self._loop.call_soon_threadsafe(run)
        if not done.wait(30):
            raise KitError("the proxy's loop did not run the job within 30 s: is it blocked?")
        if failed:
            raise KitError(f"the proxy's job failed: {failed[0]!r}") from failed[0]
        return result[0]

    def unplug(self) -> int:
        """``cut()``, and every new connection is reset too until ``plug()``."""
        self.refusing = True
        return self.cut()

    def plug(self) -> None:
        """New connections go through again."""
        self.refusing = False

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except Exception as exc:  # reported by __init__ (or, later, by cut() saying closed)
            self._error = exc
        finally:
            self._ready.set()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._serve, sock=self._sock)
        self._loop = asyncio.get_running_loop()
        self._ready.set()
        async with server:
            await self._stop.wait()
            for w in list(self._writers):
                w.transport.abort()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.refusing:
            self.refused += 1
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, up_writer))

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, asyncio.CancelledError):
                while data := await src.read(65536):
                    if dst in self.frozen:
                        continue  # swallowed: the far end never hears of it
                    dst.write(data)
                    await dst.drain()
            with contextlib.suppress(OSError, RuntimeError):
                if dst not in self.frozen:
                    dst.close()

        try:
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        except asyncio.CancelledError:  # the proxy is stopping
            pass
        finally:
            self._writers.discard(writer)
            self._writers.discard(up_writer)
            self.frozen.discard(writer)
            self.frozen.discard(up_writer)
