"""``CutProxy`` that can also go silent: ``freeze()`` keeps every open connection open but
forwards nothing more, what a phone does to a page it puts in the background (the connection
is dead, and nobody says so). New connections go through as usual."""

from __future__ import annotations

import asyncio
import contextlib

from pysse.testing import CutProxy

__all__ = ["FreezeProxy"]


class FreezeProxy(CutProxy):
    def __init__(self, target_port: int, host: str = "127.0.0.1") -> None:
        super().__init__(target_port, host)
        self.frozen: set[asyncio.StreamWriter] = set()  # connections that forward nothing

    def freeze(self) -> int:
        """Silence every connection open now; returns how many."""
        self.frozen = set(self._writers)
        return len(self.frozen) // 2

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
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
                        continue  # swallowed: the far side never hears of it
                    dst.write(data)
                    await dst.drain()
            with contextlib.suppress(OSError, RuntimeError):
                if dst not in self.frozen:
                    dst.close()

        try:
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        except asyncio.CancelledError:
            pass
        finally:
            self._writers.discard(writer)
            self._writers.discard(up_writer)
