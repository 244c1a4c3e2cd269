"""The conversation on screen: the selected path of a ``Conversation`` as articles in the log,
live answers where they stream, restored answers (placeholders at once, rendered afterwards,
newest and visible first, by ``restore.Restorer``), each message's footer (versions ‹ n/m ›,
status, speed, actions) kept in step with the chat's state, and the welcome screen when there
is nothing yet.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..call.extras_view import attr
from ..call.speed import SpeedMeter, SpeedView
from ..chats.conversation import Conversation, Message
from .attach import file_chips
from .message_view import actions, render_kept, show_kept, state_label, versions_label
from .platform import run_sliced, spawn
from .settings import image_hosts

if TYPE_CHECKING:
    from .ports import LogViewHost
    from .turn import Turn

__all__ = ["LogView"]

ACTION_ROLES = {
    "copy": "copy-answer",
    "regenerate": "regenerate",
    "continue": "continue",
    "edit": "edit",
    "inspect": "inspect",
}


def usage_text(usage: tuple[int | None, int | None] | None) -> str:
    parts = []
    if usage and usage[0] is not None:
        parts.append(f"{usage[0]} in")
    if usage and usage[1] is not None:
        parts.append(f"{usage[1]} out")
    return " · ".join(parts) + " tokens" if parts else ""


ELSEWHERE = "Streaming in another tab of this page…"
FIRST_SHOWN = 6  # messages put on screen at once; the older ones follow in slices
BUILD_MS = 8.0  # work per slice while the older messages are put in


def q(sel: str, root: Any) -> Any:
    return root.querySelector(sel)


class LogView:
    def __init__(self, app: LogViewHost) -> None:
        self.app = app
        self.log = app.log
        self.chat_id = ""
        # id -> (state, text, detail, element)
        self._restored: dict[str, tuple[str, str, str, Any]] = {}
        # id -> (element, actions shown, version position, count): what its footer shows
        self._footers: dict[str, tuple[Any, frozenset[str], int, int]] = {}
        self._templates: dict[str, Any] = {}
        self._older: list[Message] = []  # not on screen yet: put in before self._anchor
        self._anchor: Any = None
        self._build_gen = 0

    def _clone(self, template: str) -> Any:
        if template not in self._templates:
            self._templates[template] = q(template, self.app.doc).content.firstElementChild
        return self._templates[template].cloneNode(True)

    # -- building ------------------------------------------------------------------------------

    def show(self, conv: Conversation) -> None:
        """Put the conversation's selected path on screen (a switch, a version, a reload).
        What is already on screen and stays (the path before a changed version) is left
        alone; of the rest, the newest ``FIRST_SHOWN`` messages go in now and the older ones
        in slices (a chat of 100 long answers never builds in one task)."""
        switched = conv.id != self.chat_id
        if switched:
            self.chat_id = conv.id
            self._restored.clear()
            self._footers.clear()
            self.app.restorer.reset(conv.id)
        if not switched:
            self.app.scroll.hold()
        path = conv.path()
        keep = 0 if switched else self._kept(path)
        rest = path[keep:]
        self._older, new = rest[:-FIRST_SHOWN], rest[-FIRST_SHOWN:]
        els = [self.element(m) for m in new]
        for child in self.log.children[keep:]:
            child.remove()
        self.log.append(*els)
        self._anchor = els[0] if els and self._older else None
        for msg, el in zip(new, els, strict=True):
            if attr(el, "data-pending"):  # kept from an earlier show, not rendered yet
                self.app.restorer.add(el, msg)
        self.refresh(conv)
        if switched:  # another chat: its end; another version: stay where the reader is
            self.app.scroll.reset()
            self.app.scroll.follow()
        else:
            self.app.scroll.unhold()
        self._build_gen += 1
        if self._older:
            self._schedule_build(conv, self._build_gen)

    def _kept(self, path: list[Message]) -> int:
        """How many elements at the start of the log already show ``path``'s messages."""
        children = self.log.children
        n = 0
        for msg in path:
            if n >= len(children):
                break
            el = children[n]
            if attr(el, "data-id") != msg.id:
                break
            if msg.role == "user":
                if q(".edit-box", el) is not None:
                    break
            elif el is not self.element(msg):
                break
            n += 1
        return n

    def _schedule_build(self, conv: Conversation, gen: int) -> None:
        asyncio.get_event_loop().call_soon(self._build_older, conv, gen)

    def _build_older(self, conv: Conversation, gen: int) -> None:
        """Put in the next older messages (newest of them first), above what is shown. The
        reader's view stays where it is: the engine's scroll anchoring, or the view's own
        hold where there is none (WebKit)."""
        if gen != self._build_gen or conv.id != self.chat_id or self._anchor is None:
            return
        clock = self.app.platform.clock
        start = clock()
        batch: list[tuple[Message, Any]] = []
        while self._older and clock() - start < BUILD_MS:
            msg = self._older.pop()
            batch.append((msg, self.element(msg)))
        for _, el in batch:
            self.log.insertBefore(el, self._anchor)
            self._anchor = el
        for msg, el in batch:
            self._refresh_one(conv, el, msg, self.app.busy(conv.id))
        if self._older:
            self._schedule_build(conv, gen)
        else:
            self._anchor = None

    def element(self, msg: Message) -> Any:
        if msg.role == "user":
            return self.user(msg)
        turn = self.app.answers.live.get((self.chat_id, msg.id))
        return turn.el if turn is not None else self.restored(msg)

    def user(self, msg: Message, queued: bool = False) -> Any:
        art = self._clone("#user-template")
        q(".content", art).textContent = msg.text  # never HTML
        if msg.attachments:  # thumbnails and file chips above the text
            art.insertBefore(file_chips(self.app.doc, msg.attachments), q(".content", art))
        art.setAttribute("data-id", msg.id)
        if queued:
            art.setAttribute("data-queued", "1")
        return art

    def new_assistant(self) -> Any:
        return self._clone("#assistant-template")

    def restored(self, msg: Message) -> Any:
        """A finished answer from storage, as its final state: a placeholder now, rendered
        soon (``restore.Restorer``), and kept, so switching versions does not render it
        again."""
        # (an answer streaming in another tab: shown as far as that tab saved it)
        state, detail = ("streaming", ELSEWHERE) if msg.elsewhere else (msg.state, msg.detail)
        cached = self._restored.get(msg.id)
        if cached is not None and cached[:3] == (state, msg.text, detail):
            return cached[3]
        art = self._clone("#assistant-template")
        art.setAttribute("data-id", msg.id)
        art.setAttribute("data-state", state)
        art.setAttribute("data-text", msg.text)
        art.removeAttribute("aria-busy")
        if msg.text:
            self.app.restorer.placeholder(art, msg)
        if msg.reasoning or msg.tool_calls or msg.citations:
            show_kept(art, msg)
        q(".status", art).textContent = detail or state_label(state)
        view = SpeedMeter.from_summary(msg.speed)
        if view is not None and view.text:  # (the template's speed line is empty)
            q("[data-role=speed]", art).textContent = view.text
        usage = usage_text(msg.usage)
        if usage:
            q(".usage", art).textContent = usage
        if msg.model:
            self.show_model(art, msg.model)
        self._restored[msg.id] = (state, msg.text, detail, art)
        return art

    def on_toggle(self, e: Any) -> None:
        """A restored answer's reasoning opened: render it now ("toggle" does not bubble:
        the log listens in the capture phase)."""
        el = e.target
        if el.open and attr(el, "data-role") == "reasoning":
            spawn(run_sliced(render_kept(el, self._markdown)))

    def _markdown(self) -> Any:
        return self.app.md_for(image_hosts(self.app.settings))

    # -- footers -------------------------------------------------------------------------------

    def refresh(self, conv: Conversation) -> None:
        """Every footer's actions and version control, for the chat's current state."""
        busy = self.app.busy(conv.id)
        for art in self.log.querySelectorAll("article[data-id]"):
            msg = conv.messages.get(attr(art, "data-id"))
            if msg is not None:
                self._refresh_one(conv, art, msg, busy)

    def _refresh_one(self, conv: Conversation, art: Any, msg: Message, busy: bool) -> None:
        pos, count = conv.versions(msg.id)
        state = (attr(art, "data-state") or msg.state) if msg.role == "assistant" else ""
        shown = frozenset(
            actions(
                msg.role,
                state,
                busy=busy,
                has_text=bool(msg.text or attr(art, "data-text")),
                versions=count,
            )
        )
        before = self._footers.get(msg.id)
        if before is not None and before[1:] == (shown, pos, count) and before[0] is art:
            return  # as it is on screen already
        self._footers[msg.id] = (art, shown, pos, count)
        for action, role in ACTION_ROLES.items():
            btn = q(f"[data-role={role}]", art)
            if btn is not None:
                btn.hidden = action not in shown
        versions = q("[data-role=versions]", art)
        versions.hidden = "versions" not in shown
        if count > 1:
            q(".count", versions).textContent = versions_label(pos, count)
            versions.setAttribute("aria-label", f"version {pos} of {count}")
            q("[data-role=version-prev]", versions).disabled = pos <= 1
            q("[data-role=version-next]", versions).disabled = pos >= count

    def show_model(self, art: Any, model: str) -> None:
        """Which model wrote the answer, as its stream said (text only: a provider's string)."""
        el = q("[data-role=model]", art)
        el.textContent = model
        el.hidden = not model

    def show_speed(self, art: Any, view: SpeedView | None) -> None:
        q("[data-role=speed]", art).textContent = view.text if view else ""
        stall = q("[data-role=stall]", art)
        notice = view.notice if view else ""
        stall.hidden = not notice
        stall.textContent = notice
        if view is not None:
            stall.dataset.kind = view.stall

    def tick(self, turn: Turn) -> None:
        """Repaint a streaming answer's speed line (a timer: stalls show without events)."""
        self.show_speed(turn.el, turn.speed.view(turn.now()))

    def set_empty(self, empty: bool) -> None:
        self.app.doc.body.dataset.empty = "1" if empty else ""
