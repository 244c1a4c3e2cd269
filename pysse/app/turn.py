"""One assistant answer in the chat page: a ``ChatCall`` (the same one ``stream_chat`` gives
embedders) plus what the page shows around it: the status line, live speed, token usage, the
article's ``data-*`` hooks, and what the chat store and the inspector need.

The answer's state is ``streaming`` and then one of the ``Outcome`` values (``completed``,
``truncated``, ``error``, ``aborted``), shown as the article's ``data-state``. Every decision
about the stream (resuming a drop, the sentence an error is shown with) is the session's
(``pysse.call.answer``); this class only shows it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..call.answer import STATE_TEXT, AnswerSession
from ..call.call import CallListener, ChatCall
from ..call.extras_view import SourcesView
from ..call.speed import SpeedMeter
from ..chats.conversation import Message
from ..chats.message_extras import join_tool_calls, reasoning_text
from ..chats.recording import Recording
from ..events import (
    ChatEvent,
    Citation,
    Finish,
    ReasoningBlock,
    ReasoningDelta,
    TextDelta,
    ToolCall,
    Usage,
)
from ..providers import Format
from .message_view import show_kept, show_marks, thinking_label, thought_label
from .settings import image_hosts

if TYPE_CHECKING:
    from .platform import Platform

__all__ = ["STATE_TEXT", "Turn", "TurnHost"]


class InFlightSaver(Protocol):
    def save_in_flight(self, turn: Turn) -> None: ...


class TurnHost(Protocol):
    """What an answer needs from the page (``App`` is one): its settings and renderer, where
    to save it while it streams, and whom to tell that it ended. Defined here, not in
    ``ports``, because ``ports`` names ``Turn``: no import circle either way."""

    @property
    def settings(self) -> dict[str, Any]: ...
    @property
    def platform(self) -> Platform: ...
    @property
    def answers(self) -> InFlightSaver: ...
    def after_render(self) -> None: ...
    def learn_format(self, url: str, fmt: str) -> bool: ...
    def md_for(self, hosts: frozenset[str]) -> Any: ...
    def turn_finished(self, turn: Turn) -> None: ...


class Turn(CallListener):
    """One assistant answer: its call, its DOM, its footer."""

    def __init__(
        self,
        app: TurnHost,
        history: list[tuple[str, str]],
        el: Any,
        replay: bool = False,
        continues: str | None = None,
        earlier: Message | None = None,
        format: Format | None = None,
    ) -> None:
        """``continues``: the partial text this answer continues; ``earlier``: that answer
        as it was kept, whose reasoning and tool calls are shown first and kept before the
        new piece's (one answer, however many pieces); ``format``: the chat's endpoint's
        (Settings' by default)."""
        self.app = app
        self.replay = replay
        self.release: Callable[[], object] | None = None  # its Web Lock (``answers``)
        self.history = history  # the conversation this answer replies to
        self.el = el
        self.status_el = el.querySelector(".status")
        self.usage_el = el.querySelector(".usage")
        s = app.settings
        self.format = format or s["format"]
        platform = app.platform
        self.session = AnswerSession(
            self.format,
            clock=platform.clock,
            origin=platform.location.origin,
            idle_s=float(s["idle_s"]),
            continues=continues,
            replay=replay,
        )
        self.speed = SpeedMeter()
        self.chat_id = ""  # the conversation and message this answer is (none for a replay)
        self.message_id = ""
        self.saved_text = ""  # reattached after a reload: the text saved before it
        # The answer's HTML grows inside .settled: settled nodes are appended, never replaced;
        # each open container's unsettled tail follows its settled children (render/dom.py).
        self.call = ChatCall(
            self.session,
            net=platform.net,
            loop=platform.loop,
            into=el.querySelector(".settled"),
            markdown=app.md_for(image_hosts(s)),
            after_render=app.after_render,
            reasoning_into=el.querySelector(".reasoning-text"),
            tools_into=el.querySelector("[data-role=tool-calls]"),
        )
        self.call.listeners.append(self)
        # The view keeps the answer's text as it grows (Copy; and what a dead worker leaves).
        el.ownerDocument.ops.add(["answer", el.handle, self.session.shown_start, True])
        self._unsent: list[str] = []
        # The reasoning's disclosure: open while only reasoning has arrived, one summary line
        # ("Thought for 12 s") once the answer's text starts or the answer ends.
        self.reasoning_el = el.querySelector("[data-role=reasoning]")
        self.reasoning_summary = el.querySelector("[data-role=reasoning-summary]")
        self.thinking = False  # the reasoning is shown and still open
        self.thought_ms: float | None = None  # this piece's
        self.earlier_reasoning: tuple[ReasoningBlock, ...] = earlier.reasoning if earlier else ()
        self.earlier_ms = earlier.thought_ms if earlier else None
        self.earlier_tools: tuple[ToolCall, ...] = earlier.tool_calls if earlier else ()
        self.earlier_citations: tuple[Citation, ...] = earlier.citations if earlier else ()
        if earlier is not None:
            self._show_earlier(earlier)
        # After the earlier piece's sources (``show_kept``): this piece's new ones follow them.
        self.sources = SourcesView(el.querySelector("[data-role=sources]"))

    # -- what the page and the inspector read --------------------------------------------------

    @property
    def state(self) -> str:
        return self.session.state

    @property
    def text(self) -> str:
        return self.session.text

    @property
    def reasoning_blocks(self) -> tuple[ReasoningBlock, ...]:
        """Every piece's reasoning: the continued answer's, then this piece's."""
        mine: tuple[ReasoningBlock, ...] = self.cs.reasoning_blocks
        return self.earlier_reasoning + mine

    @property
    def reasoning(self) -> str:
        mine: str = self.cs.reasoning
        return reasoning_text(self.earlier_reasoning) + mine

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """Every piece's tool calls, this piece's numbered after the earlier ones."""
        mine: tuple[ToolCall, ...] = self.cs.tool_calls
        return join_tool_calls(self.earlier_tools, mine)

    @property
    def citations(self) -> tuple[Citation, ...]:
        """Every piece's citations: the continued answer's, then this piece's."""
        mine: tuple[Citation, ...] = self.cs.citations
        return self.earlier_citations + mine

    @property
    def thought_total_ms(self) -> float | None:
        """How long the model thought over every piece (None: it did not say it thought)."""
        if self.thought_ms is None and self.earlier_ms is None:
            return None
        return (self.earlier_ms or 0.0) + (self.thought_ms or 0.0)

    @property
    def cs(self) -> Any:
        return self.session.cs

    @property
    def chunks(self) -> list[tuple[float, bytes]]:
        return self.session.chunks

    @property
    def resumes(self) -> list[tuple[int, int, float, int]]:
        return self.session.resumes

    @property
    def url(self) -> str:
        return self.session.url

    @property
    def answer_id(self) -> str:
        return self.session.answer_id

    @property
    def last_note(self) -> str:
        return self.session.note

    def now(self) -> float:
        return self.session.now()

    def raw(self) -> bytes:
        return self.session.raw()

    def resume_marks(self) -> dict[int, str]:
        return self.session.resume_marks()

    def timing(self) -> dict[str, Any]:
        return self.call.timing()

    def recording(self) -> Recording:
        return Recording(
            list(self.chunks),
            format=self.format,
            state=self.state,
            timing=self.timing(),
            answer_id=self.answer_id,
        )

    def feed_bytes(self, data: bytes) -> bool:
        return self.call.feed_bytes(data)

    def on_end(self) -> None:
        self.call.on_end()

    def stop(self) -> None:
        self.call.stop()

    # -- from the call -------------------------------------------------------------------------

    def on_opened(self, session: AnswerSession) -> None:
        if session.answer_id:
            self.el.dataset.answerId = session.answer_id
            if not self.replay:  # saved at once: a reload from now on can reattach
                self.app.answers.save_in_flight(self)
        if session.advertised:
            self.app.learn_format(session.url, session.advertised)

    def on_bytes(self, t_ms: float, data: bytes, content: bool) -> None:
        self.speed.on_bytes(t_ms, content=content)

    def on_text(self, text: str) -> None:
        self._unsent.append(text)

    def _send_text(self) -> None:
        """The text that arrived since the last render, in one op (not one per delta)."""
        if self._unsent:
            self.el.ownerDocument.ops.add(["answer", self.el.handle, "".join(self._unsent), False])
            self._unsent.clear()

    def on_event(self, event: ChatEvent) -> None:
        if isinstance(event, ReasoningDelta) and self.thought_ms is None and not self.thinking:
            self._start_thinking()
        elif isinstance(event, TextDelta) and self.thinking:
            self._end_thinking()
        if isinstance(event, TextDelta | ReasoningDelta):
            self.speed.on_text(self.now(), len(event.text))
        elif isinstance(event, Usage):
            self.speed.on_usage((self.cs.usage or event).output_tokens)
            self._show_usage(event)

    def on_reconnecting(self, on: bool, attempt: int) -> None:
        if on:
            self.el.setAttribute("data-reconnecting", "1")
            self.status_el.textContent = f"Reconnecting… (try {attempt})"
        elif self.el.hasAttribute("data-reconnecting"):
            self.el.removeAttribute("data-reconnecting")
            self.status_el.textContent = "Streaming…"

    def on_resume(self, offset: int) -> None:
        self.el.dataset.resumes = str(len(self.resumes))

    def on_render(self, ms: float) -> None:
        self._send_text()
        self.sources.render(self.citations)  # (only new ones: nothing most frames)
        self.el.dataset.renders = str(self.call.sched.renders)
        if self.thinking:
            label = thinking_label(self.now())
            if self.reasoning_summary.textContent != label:
                self.reasoning_summary.textContent = label

    def _start_thinking(self) -> None:
        self.thinking = True
        self.reasoning_el.hidden = False
        self.reasoning_el.open = True
        self.reasoning_el.dataset.state = "thinking"

    def _end_thinking(self) -> None:
        """The answer's text started (or the answer ended): one summary line, closed."""
        self.thinking = False
        self.thought_ms = self.now()
        total = self.thought_total_ms or 0.0
        view = self.call.reasoning
        hidden, chars = (view.hidden, view.chars) if view is not None else (False, 0)
        self.reasoning_summary.textContent = thought_label(total, hidden, chars)
        self.reasoning_el.open = False
        self.reasoning_el.dataset.state = "done"
        self.reasoning_el.dataset.ms = str(round(total))

    def _show_earlier(self, earlier: Message) -> None:
        """A continued answer's kept reasoning and tool calls, folded as a restored answer
        shows them (``show_kept``), before anything new arrives. The reasoning is rendered by
        the call, not on opening: the new piece's reasoning streams on after it."""
        show_kept(self.el, earlier)
        if earlier.reasoning:
            self.reasoning_el.removeAttribute("data-unrendered")
            hidden = any(b.redacted for b in earlier.reasoning)
            self.call.show_reasoning(earlier.reasoning_text, hidden)

    def on_finish(self, finish: Finish) -> None:
        self._send_text()
        self.sources.render(self.citations)
        show_marks(self.el, self.text, self.citations)
        self.el.ownerDocument.ops.urgent = True  # (the final state waits for no cadence)
        if self.thinking:
            self._end_thinking()
        if self.thought_total_ms is not None or self.earlier_reasoning:
            self.reasoning_el.dataset.text = self.reasoning  # exact, apart from the answer
        self.el.removeAttribute("data-reconnecting")
        self.speed.on_end(self.session.t_end or self.now())
        self.el.dataset.state = self.state
        self.el.removeAttribute("aria-busy")
        self.status_el.textContent = self.last_note
        # The exact concatenated deltas (for tests and tools); a continued answer: all of it.
        self.el.dataset.text = self.text
        self.app.turn_finished(self)

    def _show_usage(self, usage: Usage) -> None:
        u = self.cs.usage or usage
        parts = []
        if u.input_tokens is not None:
            parts.append(f"{u.input_tokens} in")
        if u.output_tokens is not None:
            parts.append(f"{u.output_tokens} out")
        self.usage_el.textContent = " · ".join(parts) + " tokens" if parts else ""
