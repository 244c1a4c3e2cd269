"""``ChatCall`` (pysse.call.call): one answer's faults stay with that answer. In CPython, with
a scripted network and frames run by the test."""

from __future__ import annotations

import asyncio
from typing import Any

from pysse import faults
from pysse.call.answer import AnswerSession
from pysse.call.call import ChatCall
from pysse.call.net import Timeouts
from pysse.render.frames import FrameLoop
from pysse.render.update import Update
from pysse.testing import Script


class Handle:
    def __init__(self) -> None:
        self.aborted = False

    def abort(self) -> None:
        self.aborted = True

    def revive(self) -> None:
        """(nothing to revive)"""


class Net:
    """Starts nothing: the test feeds the sink itself."""

    def start(self, url: str, headers: Any, body: str, sink: Any, t: Timeouts) -> Handle:
        return Handle()


class BrokenCall(ChatCall):
    """A call whose render raises once its text holds ``boom``."""

    def render(self) -> None:
        if "boom" in self.session.text:
            raise ValueError("cannot draw a boom")
        super().render()


def start(loop: FrameLoop, cls: type[ChatCall] = ChatCall) -> tuple[ChatCall, list[Update]]:
    updates: list[Update] = []
    session = AnswerSession("openai-chat", clock=lambda: 0.0)
    call = cls(session, net=Net(), loop=loop, on_update=updates.append)
    call.post("http://relay.test/v1/chat/completions", {}, "{}", Timeouts())
    call.on_open(200, "text/event-stream", "", "", "")
    return call, updates


def test_a_render_that_raises_ends_that_answer_alone_as_an_error_with_its_text() -> None:
    """Issue #40: an exception in one answer's render reached the worker's message handler
    and ended every answer as "the page's Python stopped". Now that answer alone ends: its
    state is error, its text kept, the detail says what happened, its request is aborted;
    the other answer streaming in the same frames goes on to its end."""

    async def go() -> None:
        before = faults.count()
        loop = FrameLoop()
        bad, _ = start(loop, BrokenCall)
        good, updates = start(loop)
        bad_body = Script.answer("a boom in the text", "openai-chat").body
        good_body = Script.answer("the other answer, whole", "openai-chat").body
        half = len(good_body) // 2
        bad.on_chunk(bad_body[: bad_body.index(b"data: [DONE]")])  # still streaming
        good.on_chunk(good_body[:half])
        loop.on_frame()  # (raised out of here before the fix)
        assert bad.state == "error"
        assert bad.text == "a boom in the text"
        assert bad.session.note.startswith("Error: the page could not show this answer")
        assert "ValueError: cannot draw a boom" in bad.session.note
        assert "its text is kept" in bad.session.note
        assert bad.handle is not None and bad.handle.aborted  # type: ignore[attr-defined]
        assert (await bad).outcome.value == "error"
        assert faults.count() == before + 1
        assert good.state == "streaming"
        good.on_chunk(good_body[half:])
        while not good.done:
            loop.on_frame()
        assert good.state == "completed" and good.text == "the other answer, whole"
        assert updates[-1].final

    asyncio.run(go())


def test_a_render_that_raises_in_the_last_slices_marks_the_ended_answer_an_error() -> None:
    """The fault can come after the terminal signal, while the last slices render: the
    answer had ended completed, but what is on screen is not its end: it is an error too,
    and ``await call`` returns."""

    async def go() -> None:
        loop = FrameLoop()
        call, _ = start(loop)
        call.on_chunk(Script.answer("fine until the end", "openai-chat").body)
        assert call.session.state == "completed" and not call.done  # the last slices wait

        def broken() -> None:
            raise RuntimeError("late")

        call.render = broken  # type: ignore[method-assign]
        loop.on_frame()
        assert call.done and call.state == "error"
        assert "RuntimeError: late" in call.session.note
        assert (await call).text == "fine until the end"

    asyncio.run(go())
