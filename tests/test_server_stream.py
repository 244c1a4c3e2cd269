"""The relay's per-chunk path (``pysse.server.stream``), counted rather than timed: a stream
of a hundred chunks through ``passthrough`` starts no task and no timer of its own per chunk
(the deadlines were a task, a future and a timer around every read); its bytes arrive
unchanged; the one sweeper of a relay ends a stream that goes quiet."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from pysse.server.stream import StreamGuard, passthrough
from pysse.server.upstream import Scrubber
from pysse.testing import Script, ScriptServer

BODY = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


async def open_stream(client: httpx.AsyncClient, url: str) -> httpx.Response:
    request = client.build_request("POST", url + "/v1/chat/completions", json=BODY)
    return await client.send(request, stream=True)


def test_a_chunk_costs_no_task_and_no_timer(sse_server: ScriptServer) -> None:
    script = Script.answer("word " * 100).chunked(6).paced(0.002)
    sse_server.play(script)

    async def main() -> tuple[list[bytes], int, int]:
        loop = asyncio.get_running_loop()
        async with httpx.AsyncClient(timeout=30) as client:
            resp = await open_stream(client, sse_server.url)
            tasks, timers = [0], [0]
            real_call_at = loop.call_at

            def counting_factory(lp: Any, coro: Any, **kw: Any) -> asyncio.Task[Any]:
                tasks[0] += 1
                return asyncio.Task(coro, loop=lp, **kw)

            def counting_call_at(*args: Any, **kw: Any) -> asyncio.TimerHandle:
                timers[0] += 1
                return real_call_at(*args, **kw)

            loop.set_task_factory(counting_factory)
            loop.call_at = counting_call_at  # type: ignore[method-assign]
            guard = StreamGuard(idle=60, content=300, total=None)
            chunks = [c async for c in passthrough(resp, None, Scrubber([]), guard, lambda: None)]
            loop.set_task_factory(None)
            loop.call_at = real_call_at  # type: ignore[method-assign]
        return chunks, tasks[0], timers[0]

    chunks, tasks, timers = asyncio.run(main())
    assert b"".join(chunks) == script.sent
    assert len(chunks) > 50  # each arrived on its own
    assert tasks <= 1  # the relay's one deadline sweeper, for every stream
    # httpcore's read timeout (anyio) is one timer per read; the relay adds none. Before,
    # each chunk also cost a task and asyncio.wait's own timer: more than two per chunk.
    # (A busy machine makes a few more reads than chunks: 4,135 timers for 4,125 chunks in a
    # clean-clone CI run; the bound is per chunk, with that slack.)
    assert timers <= 1.1 * len(chunks) + 5


def test_the_sweeper_ends_a_quiet_stream_with_a_note(sse_server: ScriptServer) -> None:
    sse_server.play(Script.answer("then silence " * 3).stall(after_event=2))

    async def main() -> bytes:
        async with httpx.AsyncClient(timeout=30) as client:
            resp = await open_stream(client, sse_server.url)
            guard = StreamGuard(idle=0.4, content=300, total=None)
            out = [c async for c in passthrough(resp, None, Scrubber([]), guard, lambda: None)]
            assert guard.open_streams == 0
            return b"".join(out)

    data = asyncio.run(main())
    assert data.endswith(b": pysse relay: stream ended, no bytes for 0.4 s\n\n")


def test_a_slow_reader_is_not_the_upstreams_silence(sse_server: ScriptServer) -> None:
    # The time a reader holds a chunk (a slow client, or a producer waiting for a slow
    # reader: the store's backlog bound) is not time the upstream was silent. Before, the
    # sweeper counted it and cut a healthy stream with "no bytes for 1 s".
    script = Script.answer("held but not silent " * 4).chunked(5).paced(0.01)
    sse_server.play(script)

    async def main() -> bytes:
        async with httpx.AsyncClient(timeout=30) as client:
            resp = await open_stream(client, sse_server.url)
            guard = StreamGuard(idle=1.0, content=300, total=None)
            out = []
            async for chunk in passthrough(resp, None, Scrubber([]), guard, lambda: None):
                if not out:
                    await asyncio.sleep(2.5)  # idle timeouts with the first chunk held
                out.append(chunk)
            return b"".join(out)

    data = asyncio.run(main())
    assert b"stream ended" not in data
    assert data == script.sent
