"""One streaming answer: the network's sink, its markdown, its frames. Pure: the network
(``Net``), the frames (``FrameLoop``) and where it shows (an element of the page's model DOM,
a real element, or ``on_update``) are handed to it.

The network's read loop (``bridge.js``, behind ``pysse.browser``'s ``Net``) calls its ``on_*``
methods synchronously as facts arrive; each is handed to the answer's ``AnswerSession``
(``answer.py``), which decides what it means. The text to show goes into
``StreamingMarkdown``; at most once per frame (the ``FrameLoop``) the update is applied to the
element (``writer_for``: an op for the page's view, or a writer of a real element) and/or
handed to ``on_update`` (a worker posts it to its page). Each update does at most a frame's
budget of work (``render/budget.py``), so a phone never gets one long task, whether 24
characters arrived or the whole answer.

When the answer ends, its markdown is told (``end()``) and the last slices are rendered a
frame at a time, to the final ``Update`` (``final=True``, equal to a one-shot render); only
then do the listeners hear ``on_finish`` and ``await call`` return, so an answer is never
marked done before its final HTML is on screen. A hidden tab delivers no frames: there (and
if the tab is hidden meanwhile) the rest is rendered at once.

``stream_chat`` (``pysse.browser.stream``) is the public way to make one; the bundled page's
``Turn`` (``pysse.app.turn``) makes one per answer and listens to it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Generator, Mapping
from typing import Any

from .. import faults
from ..events import (
    ChatEvent,
    Finish,
    ReasoningDelta,
    ToolCallDelta,
)
from ..render import lazy
from ..render.dom import DomWriter
from ..render.frames import FrameLoop, FrameScheduler
from ..render.update import Update
from .answer import AnswerListener, AnswerSession
from .extras_view import ReasoningView, ToolCallsView, writer_for
from .net import Net, NetHandle, Probe, Timeouts
from .reconnect import Drop
from .result import ChatResult, result_of

LAZY_WAIT_S = 2.0  # after the end, the longest a lexer or math is waited for

__all__ = [
    "CallListener",
    "ChatCall",
    "ChatResult",
    "Net",
    "NetHandle",
    "Probe",
    "Timeouts",
    "body_json",
    "safely",
]


class CallListener(AnswerListener):
    """An ``AnswerListener`` that also hears each render (the page's scroll and stats)."""

    def on_render(self, ms: float) -> None:
        """An update was applied; it took ``ms``."""


class ChatCall(AnswerListener):
    """One answer streaming into ``into`` (an element) and/or ``on_update`` (see the module
    docstring). Await it for the :class:`ChatResult`; ``stop()`` ends it ``aborted``."""

    def __init__(
        self,
        session: AnswerSession,
        *,
        net: Net,
        loop: FrameLoop,
        into: Any = None,
        markdown: Any = None,
        on_update: Callable[[Update], object] | None = None,
        after_render: Callable[[], object] | None = None,
        reasoning_into: Any = None,
        tools_into: Any = None,
    ) -> None:
        self.session = session
        session.listeners.append(self)
        self.listeners: list[CallListener] = []
        self.net = net
        self.loop = loop
        self.into = into
        self.writer: DomWriter | Any = writer_for(into) if into is not None else None
        self.on_update = on_update
        self.after_render = after_render
        self.md: Any = None
        if into is not None or on_update is not None:
            from ..render.streaming import StreamingMarkdown  # markdown-it: imported late

            self.md = StreamingMarkdown(md=markdown)
        # The reasoning and the tool calls, when there is somewhere to show them.
        self.reasoning = ReasoningView(reasoning_into, markdown) if reasoning_into else None
        self.tools = ToolCallsView(tools_into) if tools_into is not None else None
        self.sched = FrameScheduler(self._render_safely, lambda: loop.request(self), loop.is_hidden)
        self.handle: NetHandle | None = None  # the network's: abort(), revive()
        self.renders = 0
        self.render_ms: list[float] = []
        self.longest_render_ms = 0.0
        self._future: asyncio.Future[ChatResult] = asyncio.get_event_loop().create_future()
        self._on_stop: list[Callable[[], object]] = []
        self._ending: Finish | None = None  # ended; the last slices are still rendering
        self._unsubscribe: Callable[[], None] | None = None  # from the lazy registry
        self._waiting_since: float | None = None  # ended, waiting for a lazy resource
        self.fault: str = ""  # why the page could not show this answer (``_render_failed``)
        loop.add(self)
        if session.shown_start and self.md is not None:
            self.md.append(session.shown_start)
            self._render_safely()  # now, not on the next frame: the answer never blinks empty

    # -- starting ------------------------------------------------------------------------------

    def post(self, url: str, headers: Mapping[str, str], body: str, timeouts: Timeouts) -> None:
        """POST ``body`` to ``url`` and stream the answer (resumed if it drops and the relay
        named it)."""
        self.session.url = url
        self.session.sent_headers = dict(headers)
        self.handle = self.net.start(url, headers, body, self, timeouts)

    def reattach(
        self, url: str, headers: Mapping[str, str], answer_id: str, received: int, t: Timeouts
    ) -> None:
        """Ask the relay for an answer it keeps, from byte ``received`` on (after a reload)."""
        self.session.url, self.session.answer_id = url, answer_id
        self.session.sent_headers = dict(headers)
        self.handle = self.net.reattach(url, headers, answer_id, received, self, t)

    # -- what it has -------------------------------------------------------------------------

    @property
    def state(self) -> str:
        return self.session.state

    @property
    def text(self) -> str:
        return self.session.text

    @property
    def done(self) -> bool:
        return self._future.done()

    def result(self) -> ChatResult:
        """The result once the answer ended (``asyncio.InvalidStateError`` before)."""
        return self._future.result()

    def __await__(self) -> Generator[Any, None, ChatResult]:
        return self._future.__await__()

    def stop(self) -> None:
        """Stop: the bridge aborts the request and, for a resumable answer, tells the relay
        (``DELETE ?answer=ID``): a disconnect alone would not cancel the upstream."""
        if not self.session.streaming:
            return
        if self.handle is not None:
            self.handle.abort()
        self.session.stop()

    def on_stop(self, fn: Callable[[], object]) -> None:
        """Call ``fn`` when the answer has ended (an AbortSignal's listener to remove...)."""
        self._on_stop.append(fn)

    # -- the network's sink (called synchronously by its read loop) ----------------------------

    def on_chunk(self, data: bytes) -> bool:
        return self.session.feed(data)

    def feed_bytes(self, data: bytes) -> bool:
        """Bytes that did not come through the bridge (a replay, saved bytes)."""
        return self.session.feed(data)

    def on_end(self) -> bool:
        return self.session.on_end()

    def on_open(
        self, status: int, content_type: str, fmt: str, relay: str, answer_id: str = ""
    ) -> None:
        self.session.on_open(int(status), str(content_type), str(fmt), str(relay), str(answer_id))

    def on_http_error(self, status: int, retry_after: Any, content_type: str, text: str) -> None:
        self.session.on_http_error(int(status), retry_after, str(content_type), str(text))

    def on_wrong_type(self, status: int, content_type: str, text: str) -> None:
        self.session.on_wrong_type(int(status), str(content_type), str(text))

    def on_network_error(self, name: str, message: str, probe: str = "") -> None:
        self.session.on_network_error(str(name), str(message), str(probe or ""))

    def on_read_error(self, name: str, message: str) -> None:
        self.session.on_read_error(str(name), str(message))

    def on_drop(self, kind: Drop, name: str, message: str) -> float:
        return self.session.on_drop(kind, str(name), str(message))

    def on_resumed(self, offset: int) -> None:
        self.session.on_resumed(int(offset))

    def on_resume_failed(self, status: int, text: str) -> None:
        self.session.on_resume_failed(int(status), str(text))

    def on_timeout(self, kind: str, seconds: float) -> None:
        self.session.on_timeout(str(kind), float(seconds))

    # -- from the session ----------------------------------------------------------------------

    def on_opened(self, session: AnswerSession) -> None:
        self._tell("on_opened", session)

    def on_bytes(self, t_ms: float, data: bytes, content: bool) -> None:
        self._tell("on_bytes", t_ms, data, content)

    def on_text(self, text: str) -> None:
        if self.md is not None:
            self.md.append(text)
            self.sched.request()
        self._tell("on_text", text)

    def show_reasoning(self, text: str, hidden: bool) -> None:
        """Reasoning shown before the stream's own (a continued answer's earlier piece); the
        stream's reasoning is joined to it."""
        if self.reasoning is not None and self.reasoning.add(ReasoningDelta(text, redacted=hidden)):
            self.sched.request()

    def on_event(self, event: ChatEvent) -> None:
        if isinstance(event, ReasoningDelta) and self.reasoning is not None:
            if self.reasoning.add(event):
                self.sched.request()
        elif isinstance(event, ToolCallDelta) and self.tools is not None:
            self.tools.mark(event.index)
            self.sched.request()
        self._tell("on_event", event)

    def on_reconnecting(self, on: bool, attempt: int) -> None:
        self._tell("on_reconnecting", on, attempt)

    def on_resume(self, offset: int) -> None:
        self._tell("on_resume", offset)

    def on_finish(self, finish: Finish) -> None:
        if self.fault:  # the render failed: nothing more is rendered (``_render_failed``)
            self._finished(finish)
            return
        if self.md is not None and not self.loop.is_hidden():
            self._ending = finish  # the last slices, a frame each (module docstring)
            self.md.end()
            self.sched.request()
            return
        if self.md is not None or self.reasoning is not None or self.tools is not None:
            self.sched.flush()  # the final state, synchronously: never wait on a frame
        self._finished(finish)

    def _finished(self, finish: Finish) -> None:
        self._ending = None
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.loop.remove(self)
        self._tell("on_finish", finish)
        for fn in self._on_stop:
            fn()
        if not self._future.done():
            self._future.set_result(self._result())

    # -- frames --------------------------------------------------------------------------------

    def on_frame(self) -> None:
        self.sched.on_frame()

    def on_hidden(self) -> None:
        """The tab was hidden: no more frames will come, so the last slices are rendered now."""
        if self._ending is not None:
            self.sched.flush()

    def on_visible(self) -> None:
        self.sched.on_visible()
        self.on_page_return(persisted=False)

    def on_page_return(self, persisted: bool) -> None:
        """The page is in view again: a connection killed meanwhile is resumed now."""
        if self.handle is not None and self.session.should_revive(persisted):
            self.handle.revive()

    def _render_safely(self) -> None:
        """``render``, its faults kept to this answer (looked up at each call: a patched
        render is guarded too; once failed, ``sched`` is closed and calls it no more)."""
        try:
            self.render()
        except Exception as exc:
            self._render_failed(exc)

    def _render_failed(self, exc: Exception) -> None:
        """The page could not show this answer: it ends as an error with its text and a
        sentence saying so, its request aborted, never rendered again; the other answers go
        on (issue #40: raised, it reached the worker's handler and ended them all)."""
        faults.report("an answer's render", exc)
        self.fault = f"{type(exc).__name__}: {exc}"
        self.sched.closed = True
        streaming, ending = self.session.streaming, self._ending
        self.session.page_failed(self.fault)  # streaming: its Finish reaches on_finish
        if streaming and self.handle is not None:
            self.handle.abort()
        if ending is not None and not self.done:  # had ended: its last slices were rendering
            self._finished(ending)

    def render(self) -> None:
        """Apply what changed since the last render (once per frame at most)."""
        t = time.perf_counter()
        streaming = self.session.streaming
        ending = self._ending is not None  # sliced: ``update()`` until the final one
        at_once = not streaming and not ending  # ``finish()``: a hidden tab, or a flush
        busy = False
        now = at_once or (ending and self.loop.is_hidden()) or self._waited_enough()
        final = True
        if self.reasoning is not None:
            final = self.reasoning.render(streaming, at_once=now or self.md is None)
            busy = self.reasoning.md.busy
        if self.tools is not None:
            self.tools.render(self.session.cs.tool_calls, final=not streaming)
        md = self.md
        if md is not None:
            update = md.finish() if now else md.update(self.loop.span)
            final = final and update.final
            if self.writer is not None:
                self.writer.apply(update)
            if self.on_update is not None:
                safely("on_update", self.on_update, update)
            busy = busy or md.busy
        waiting = md is not None and not busy and bool(md.waiting)
        if waiting:  # a lexer or math on its way: a render when it comes (or the cap)
            self._wait_for_resources()
        elif (streaming and busy) or (ending and not final):
            self.sched.request()  # more text than a frame's budget, a fence to highlight...
        self.renders += 1
        took = (time.perf_counter() - t) * 1000
        self.render_ms.append(round(took, 1))
        self.longest_render_ms = max(self.longest_render_ms, took)
        if self.after_render is not None:
            self.after_render()
        self._tell("on_render", took)
        if self._ending is not None and final:
            self._finished(self._ending)

    # -- lazy resources --------------------------------------------------------------------------

    def _wait_for_resources(self) -> None:
        """The answer's open blocks wait for a lazy resource (a language's lexer, math:
        ``pysse.render.lazy``): render again when one arrives or fails, and at the latest
        ``LAZY_WAIT_S`` after the answer ended, with what is here then (``finish``: a fence
        plain, a formula as its source). Never a frame a frame while waiting."""
        if self._unsubscribe is None:
            self._unsubscribe = lazy.REGISTRY.subscribe(lambda r: self.sched.request())
        if self._ending is not None and self._waiting_since is None:
            self._waiting_since = time.monotonic()
            asyncio.get_event_loop().call_later(LAZY_WAIT_S + 0.01, self.sched.request)

    def _waited_enough(self) -> bool:
        since = self._waiting_since
        return since is not None and time.monotonic() - since >= LAZY_WAIT_S

    # -- internals -----------------------------------------------------------------------------

    def _tell(self, name: str, *args: Any) -> None:
        for listener in self.listeners:
            getattr(listener, name)(*args)

    def _result(self) -> ChatResult:
        return result_of(self.session)

    def timing(self) -> dict[str, Any]:
        sched = self.sched
        return {
            **self.session.timing(),
            "renders": sched.renders,
            "deltas_per_render": sched.requests / sched.renders if sched.renders else None,
            "longest_render_ms": self.longest_render_ms,
            "render_ms": self.render_ms,
        }


# Where a failing callback is reported: stderr, and in the browser the console's errors
# (``pysse.browser`` sets it: a registry filled from above). The faults' registry: one place.
REPORT: list[Callable[[str], object]] = faults.REPORT


def safely(hook: str, fn: Callable[[Any], object], arg: Any) -> None:
    """Call the embedder's ``fn`` for ``hook``: an exception is logged (``REPORT``), never
    the end of the answer (raised from the final render, it kept ``await call`` from ever
    returning)."""
    try:
        fn(arg)
    except Exception as exc:
        name = getattr(fn, "__name__", repr(fn))
        REPORT[0](f"pysse: stream_chat's {hook} callback {name} raised {exc!r}")


def body_json(body: object) -> str:
    """The request body as JSON text, or a ValueError naming what cannot be serialised."""
    if isinstance(body, str):
        json.loads(body)  # a JSON text already: it must parse
        return body
    return json.dumps(body, ensure_ascii=False, allow_nan=False)
