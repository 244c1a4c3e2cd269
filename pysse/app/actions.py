"""Message actions in the log: Regenerate, Continue, Edit and resend, the ‹ › version buttons,
Inspect; a Python block's run kept (``on_ran``). Each changes the ``Conversation``
(``chats.conversation``: versions, branches, continue) and asks the app to send; what is sent
is always the conversation up to that point.

A table's Copy, Copy TSV and Download CSV: ``takeout.py``. Copy and Download of a code
block, and Copy of an answer's Markdown source, are the view's (``web/view.js``): the
clipboard needs the click's user activation, which a round trip to a worker would lose
(Safari is strictest), so the view keeps each answer's text itself. Enter and Escape in the
edit box press its Send and Cancel buttons (the view's keys).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..call.extras_view import attr
from ..chats.runs import kept_run
from ..view import Event
from .takeout import table_out, tool_of

if TYPE_CHECKING:
    from .ports import ActionsHost

__all__ = ["Actions"]


class Actions:
    def __init__(self, app: ActionsHost) -> None:
        self.app = app
        self.editing: Any = None  # the user message being edited, if any

    def bind(self) -> None:
        self.app.log.addEventListener("click", self.on_click)
        self.app.log.addEventListener("ran", self.on_ran)

    def on_ran(self, e: Event) -> None:
        """A Python block's run ended (the view's ``ran``): its output is kept with the
        answer (``chats.runs``), checked and bounded here, where it enters."""
        detail = e.detail
        art = e.target
        if art is None or not isinstance(detail, list) or len(detail) != 3:
            return
        run = kept_run(*detail)
        conv = self.app.conv
        mid = attr(art, "data-id")
        if run is None or mid not in conv.messages:
            return
        conv.set_run(mid, run)
        self.app.chats.save(conv)

    def on_click(self, e: Event) -> None:
        target = e.target
        tool = tool_of(e.detail)
        if tool is not None and target is not None:  # a table's tool (takeout.py)
            art = target.closest("article")
            problem = table_out(self.app.doc, *tool, self._text(art))
            if problem:
                self.app.show_notice(problem)
            return
        btn = target.closest("button") if target is not None else None
        if btn is None:  # a click beside any button (or inside an answer's content)
            return
        art = btn.closest("article")
        role = attr(btn, "data-role")
        if art is None or not role or role == "copy-answer":  # (Copy: the view's)
            return
        if role == "inspect":
            self.app.inspect(art, btn)
            return
        app, conv = self.app, self.app.conv
        mid = attr(art, "data-id")
        msg = conv.messages.get(mid)
        if msg is None:
            return
        if role in ("version-prev", "version-next"):
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

    def _text(self, art: Any) -> str | None:
        """The text of answer ``art``: as streamed so far, or as saved."""
        conv, mid = self.app.conv, attr(art, "data-id") if art is not None else ""
        turn = self.app.answers.live.get((conv.id, mid))
        msg = conv.messages.get(mid)
        return turn.text if turn is not None else msg.text if msg is not None else None

    def _refocus(self, conv: Any, mid: str, role: str) -> None:
        """Keep keyboard focus on the version control of the version now shown."""
        parent = conv.messages[mid].parent
        shown = conv.selected.get(parent)
        art = self.app.log.querySelector(f"[data-id='{shown}']")
        if art is None:
            return
        btn = art.querySelector(f"[data-role={role}]")
        if btn is not None and btn.disabled:
            other = "version-next" if role == "version-prev" else "version-prev"
            btn = art.querySelector(f"[data-role={other}]")
        if btn is not None:
            btn.focus()

    # -- edit and resend -----------------------------------------------------------------------

    def start_edit(self, art: Any, text: str) -> None:
        self.cancel_edit()
        box = self.app.doc.createElement("div")
        box.className = "edit-box"
        box.innerHTML = (
            '<textarea data-role="edit-text" dir="auto" aria-label="Edit your message">'
            "</textarea><div>"
            '<button type="button" class="primary" data-role="edit-send">Send</button>'
            '<button type="button" data-role="edit-cancel">Cancel</button></div>'
        )
        area = box.querySelector("[data-role=edit-text]")
        assert area is not None  # (just written above)
        area.value = text
        area.addEventListener("input", _mirror)  # its value, as the reader edits it
        content = art.querySelector(".content")
        content.hidden = True
        art.insertBefore(box, content)
        self.editing = art
        area.focus()

    def cancel_edit(self) -> None:
        art, self.editing = self.editing, None
        if art is None:
            return
        box = art.querySelector(".edit-box")
        if box is not None:
            box.remove()
        art.querySelector(".content").hidden = False
        edit = art.querySelector("[data-role=edit]")
        if edit is not None:
            edit.focus()

    def finish_edit(self, art: Any) -> None:
        text = str(art.querySelector("[data-role=edit-text]").value).strip()
        mid = attr(art, "data-id")
        self.editing = None
        if not text or mid not in self.app.conv.messages:
            self.cancel_edit()
            return
        self.app.answers.edit_and_send(mid, text)


def _mirror(e: Event) -> None:
    """A listener whose only job is that the view forwards the element's value as it changes
    (the model mirrors it: ``pysse.view.dom.Document.dispatch``)."""
