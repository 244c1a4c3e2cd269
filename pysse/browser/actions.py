"""Message actions in the log: Copy (a code block, or an answer's Markdown source), Regenerate,
Continue, Edit and resend, the ‹ › version buttons, Inspect. Each changes the ``Conversation``
(``page.conversation``: versions, branches, continue) and asks the app to send; what is sent is
always the conversation up to that point."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import js
from pyodide.ffi import JsException

from .dom import attr, flash, q, spawn
from .follow import is_element

if TYPE_CHECKING:
    from .ports import ActionsHost

__all__ = ["Actions"]


class Actions:
    def __init__(self, app: ActionsHost) -> None:
        self.app = app
        self.editing: Any = None  # the user message being edited, if any

    def bind(self) -> None:
        on = self.app.listeners.on
        on(self.app.log, "click", self.on_click)
        on(self.app.log, "keydown", self.on_key)

    def on_click(self, e: Any) -> None:
        target = e.target
        btn: Any = target.closest("button") if hasattr(target, "closest") else None
        if not is_element(btn):  # (a click beside any button: a JS null is jsnull, not None)
            return
        if btn.classList.contains("copy"):  # a code block's Copy
            pre = btn.closest(".codeblock").querySelector("pre")
            if pre is not None:
                spawn(self.copy(btn, str(pre.textContent)))
            return
        art = btn.closest("article")
        role = str(btn.getAttribute("data-role") or "")
        if not is_element(art) or not role:
            return
        if role == "inspect":
            self.app.inspect(art, btn)
            return
        app, conv = self.app, self.app.conv
        mid = attr(art, "data-id")
        msg = conv.messages.get(mid)
        if msg is None:
            return
        if role == "copy-answer":
            spawn(self.copy(btn, attr(art, "data-text") or msg.text))
        elif role in ("version-prev", "version-next"):
            conv.step_version(mid, -1 if role == "version-prev" else 1)
            app.chats.save(conv)
            app.view.show(conv)
            self._refocus(conv, mid, role)
        elif role == "regenerate":
            app.answers.regenerate(mid)
        elif role == "continue":
            app.answers.continue_answer(mid)
        elif role == "edit":
            self.start_edit(art, msg.text)
        elif role == "edit-cancel":
            self.cancel_edit()
        elif role == "edit-send":
            self.finish_edit(art)

    def _refocus(self, conv: Any, mid: str, role: str) -> None:
        """Keep keyboard focus on the version control of the version now shown."""
        parent = conv.messages[mid].parent
        shown = conv.selected.get(parent)
        art = self.app.log.querySelector(f"[data-id='{shown}']")
        if art is None:
            return
        btn = q(f"[data-role={role}]", art)
        if btn is not None and btn.disabled:
            other = "version-next" if role == "version-prev" else "version-prev"
            btn = q(f"[data-role={other}]", art)
        if btn is not None:
            btn.focus()

    async def copy(self, btn: Any, text: str) -> None:
        try:
            await js.navigator.clipboard.writeText(text)
        except (JsException, AttributeError):
            flash(btn, "Copy failed")
            return
        flash(btn, "Copied")

    # -- edit and resend -----------------------------------------------------------------------

    def start_edit(self, art: Any, text: str) -> None:
        self.cancel_edit()
        box = js.document.createElement("div")
        box.className = "edit-box"
        box.innerHTML = (
            '<textarea data-role="edit-text" aria-label="Edit your message"></textarea><div>'
            '<button type="button" class="primary" data-role="edit-send">Send</button>'
            '<button type="button" data-role="edit-cancel">Cancel</button></div>'
        )
        area = q("[data-role=edit-text]", box)
        area.value = text
        content = q(".content", art)
        content.hidden = True
        art.insertBefore(box, content)
        self.editing = art
        area.focus()

    def cancel_edit(self) -> None:
        art, self.editing = self.editing, None
        if art is None:
            return
        box = q(".edit-box", art)
        if box is not None:
            box.remove()
        q(".content", art).hidden = False
        edit = q("[data-role=edit]", art)
        if edit is not None:
            edit.focus()

    def finish_edit(self, art: Any) -> None:
        text = str(q("[data-role=edit-text]", art).value).strip()
        mid = attr(art, "data-id")
        self.editing = None
        if not text or mid not in self.app.conv.messages:
            self.cancel_edit()
            return
        self.app.answers.edit_and_send(mid, text)

    def on_key(self, e: Any) -> None:
        if e.target.getAttribute("data-role") != "edit-text":
            return
        if e.key == "Escape":
            e.stopPropagation()
            self.cancel_edit()
        elif e.key == "Enter" and not e.shiftKey and not e.isComposing:
            e.preventDefault()
            self.finish_edit(e.target.closest("article"))
