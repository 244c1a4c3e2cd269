"""What a message on screen offers and says: its action buttons, its version control, the
one announcement a screen reader hears when an answer ends, and a restored answer's reasoning,
tool calls and sources as a finished answer shows them (``show_kept``, ``render_kept``: the views of
``call.extras_view``). ``log_view.py`` and ``turn.py`` apply it to the page's model DOM.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, Literal

from ..call.extras_view import ReasoningView, SourcesView, ToolCallsView, attr
from ..events import Citation, ReasoningDelta
from .cite_marks import marks

if TYPE_CHECKING:
    from ..chats.conversation import Message
    from ..chats.runs import RunOutput

__all__ = [
    "Action",
    "actions",
    "announcement",
    "kept_thought_label",
    "render_kept",
    "show_kept",
    "state_label",
    "thinking_label",
    "thought_label",
    "versions_label",
]

Action = Literal["copy", "regenerate", "continue", "edit", "inspect", "versions"]

STATE_LABEL = {
    "streaming": "Streaming…",
    "completed": "Done",
    "truncated": "Truncated",
    "error": "Error",
    "aborted": "Stopped",
}


def state_label(state: str) -> str:
    return STATE_LABEL.get(state, state)


def thinking_label(ms: float) -> str:
    """The reasoning's summary while the model thinks: "Thinking… 4 s"."""
    seconds = int(ms // 1000)
    return f"Thinking… {seconds} s" if seconds else "Thinking…"


def thought_label(ms: float, hidden: bool, chars: int) -> str:
    """The reasoning's one-line summary once it is over: how long the model thought, and
    whether the provider hid its reasoning ("Reasoning hidden by the provider")."""
    if hidden and not chars:
        return "Reasoning hidden by the provider"
    took = "less than a second" if ms < 1000 else f"{round(ms / 1000)} s"
    return f"Thought for {took}" + (" (partly hidden by the provider)" if hidden else "")


def kept_thought_label(ms: float | None, hidden: bool, chars: int) -> str:
    """``thought_label`` for a restored answer: an imported one may not say how long the
    model thought (``ms`` None), and then the line says only that there is reasoning."""
    if ms is not None or (hidden and not chars):
        return thought_label(ms or 0.0, hidden, chars)
    return "Reasoning" + (" (partly hidden by the provider)" if hidden else "")


def actions(
    role: str, state: str, *, busy: bool, has_text: bool, versions: int, replay: bool = False
) -> set[Action]:
    """The actions a message shows. ``busy``: an answer is streaming in this chat (nothing
    that sends may start, and the streaming answer itself offers only Inspect)."""
    out: set[Action] = set()
    if versions > 1:
        out.add("versions")
    if replay:
        return {"inspect"}
    if role == "user":
        if not busy:
            out.add("edit")
        return out
    out.add("inspect")
    if state == "streaming":
        return out - {"versions"}
    if has_text:
        out.add("copy")
    if not busy:
        out.add("regenerate")
        if state in ("truncated", "aborted", "error") and has_text:
            out.add("continue")
    return out


def versions_label(position: int, count: int) -> str:
    """The ‹ 2/3 › control's text and its accessible name."""
    return f"{position}/{count}"


def announcement(state: str, note: str) -> str:
    """The polite status message for an answer that ended (``note`` is its status line)."""
    if state == "completed":
        return "Answer complete."
    if state == "aborted":
        return "Answer stopped."
    return note if note.endswith(".") else note + "."


def show_kept(art: Any, msg: Message) -> None:
    """A restored answer's reasoning, tool calls and sources, as a finished answer shows them: the
    disclosure folded on its summary line ("Thought for 12 s") with the exact text in its
    ``data-text``, each tool call folded. The reasoning is rendered when it is first opened
    (``render_kept``): a restored chat of long answers renders none of it otherwise."""
    if msg.reasoning:
        el = art.querySelector("[data-role=reasoning]")
        text = msg.reasoning_text
        hidden = any(b.redacted for b in msg.reasoning)
        el.hidden = False
        el.open = False
        el.dataset.state = "done"
        el.dataset.text = text
        if msg.thought_ms is not None:
            el.dataset.ms = str(round(msg.thought_ms))
        if text:
            el.dataset.unrendered = "1"
        el.querySelector("[data-role=reasoning-summary]").textContent = kept_thought_label(
            msg.thought_ms, hidden, len(text)
        )
    if msg.tool_calls:
        ToolCallsView(art.querySelector("[data-role=tool-calls]")).render(
            msg.tool_calls, final=True
        )
    if msg.citations:
        SourcesView(art.querySelector("[data-role=sources]")).render(msg.citations)


def show_marks(art: Any, text: str, citations: tuple[Citation, ...]) -> None:
    """The numbered marks of the sources ``citations`` in answer ``art``'s rendered text
    (``cite_marks``), once its HTML is final: the view places them (the ``cite`` op)."""
    found = marks(text, citations) if citations else []
    if found:
        settled = art.querySelector(".settled")
        settled.ownerDocument.ops.add(["cite", settled.handle, found])


def show_runs(art: Any, runs: tuple[RunOutput, ...]) -> None:
    """A restored answer's kept runs under their Python blocks (the ``runs`` op), once its
    HTML is in: what each block printed when it was last run (``chats.runs``)."""
    if runs:
        settled = art.querySelector(".settled")
        items = [[r.block, r.status, r.text] for r in runs]
        settled.ownerDocument.ops.add(["runs", settled.handle, items])


def render_kept(el: Any, markdown: Callable[[], Any]) -> Generator[None, None, None]:
    """A restored reasoning disclosure ``el``, opened: its text (``data-text``) rendered once
    as safe markdown, like an answer, in steps of a frame's budget (``dom.run_sliced``)."""
    if not attr(el, "data-unrendered"):
        return
    el.removeAttribute("data-unrendered")
    view = ReasoningView(el.querySelector(".reasoning-text"), markdown())
    view.add(ReasoningDelta(attr(el, "data-text")))
    while not view.render(streaming=False):
        yield
    el.dataset.rendered = "1"  # (a hook for tests: the whole text is on screen)
