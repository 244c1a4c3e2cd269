"""The conversation on screen: the selected path of a ``Conversation`` as articles in the log,
live answers where they stream, restored answers rendered once from their stored text, each
message's footer (versions ‹ n/m ›, status, speed, actions) kept in step with the chat's state,
and the welcome screen when there is nothing yet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import js

from ..page.conversation import Conversation, Message
from ..page.message_view import actions, state_label, versions_label
from ..page.settings import image_hosts
from ..page.speed import SpeedMeter, SpeedView
from .dom import attr, q

if TYPE_CHECKING:
    from .app import App
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


class LogView:
    def __init__(self, app: App) -> None:
        self.app = app
        self.log = app.log
        self.chat_id = ""
        # id -> (state, text, detail, element)
        self._restored: dict[str, tuple[str, str, str, Any]] = {}

    def _clone(self, template: str) -> Any:
        return q(template).content.firstElementChild.cloneNode(True)

    # -- building ------------------------------------------------------------------------------

    def show(self, conv: Conversation) -> None:
        """Put the conversation's selected path on screen (a switch, a version, a reload)."""
        switched = conv.id != self.chat_id
        if switched:
            self.chat_id = conv.id
            self._restored.clear()
        top = self.log.scrollTop
        els = [self.element(m) for m in conv.path()]
        self.log.replaceChildren(*els)
        self.refresh(conv)
        if switched:  # another chat: its end; another version: stay where the reader is
            self.app.scroll.reset()
            self.app.scroll.follow()
        else:
            self.log.scrollTop = top

    def element(self, msg: Message) -> Any:
        if msg.role == "user":
            return self.user(msg)
        turn = self.app.answers.live.get((self.chat_id, msg.id))
        return turn.el if turn is not None else self.restored(msg)

    def user(self, msg: Message, queued: bool = False) -> Any:
        art = self._clone("#user-template")
        q(".content", art).textContent = msg.text  # never HTML
        art.dataset.id = msg.id
        if queued:
            art.dataset.queued = "1"
        return art

    def new_assistant(self) -> Any:
        return self._clone("#assistant-template")

    def restored(self, msg: Message) -> Any:
        """A finished answer from storage: rendered once, as its final state (and kept, so
        switching versions does not render it again)."""
        cached = self._restored.get(msg.id)
        if cached is not None and cached[:3] == (msg.state, msg.text, msg.detail):
            return cached[3]
        from ..render.markdown import render  # see App.md_for

        art = self._clone("#assistant-template")
        art.dataset.id = msg.id
        art.dataset.state = msg.state
        art.dataset.text = msg.text
        art.removeAttribute("aria-busy")
        md = self.app.md_for(image_hosts(self.app.settings))
        q(".settled", art).innerHTML = render(msg.text, md)
        q(".status", art).textContent = msg.detail or state_label(msg.state)
        self.show_speed(art, SpeedMeter.from_summary(msg.speed))
        q(".usage", art).textContent = usage_text(msg.usage)
        self._restored[msg.id] = (msg.state, msg.text, msg.detail, art)
        return art

    # -- footers -------------------------------------------------------------------------------

    def refresh(self, conv: Conversation) -> None:
        """Every footer's actions and version control, for the chat's current state."""
        busy = self.app.busy(conv.id)
        for art in self.log.querySelectorAll("article[data-id]"):
            msg = conv.messages.get(attr(art, "data-id"))
            if msg is None:
                continue
            pos, count = conv.versions(msg.id)
            state = (attr(art, "data-state") or msg.state) if msg.role == "assistant" else ""
            shown = actions(
                msg.role,
                state,
                busy=busy,
                has_text=bool(msg.text or attr(art, "data-text")),
                versions=count,
            )
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
        js.document.body.dataset.empty = "1" if empty else ""
