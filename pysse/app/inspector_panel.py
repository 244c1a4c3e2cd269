"""The stream inspector panel: binds ``app.inspector_view``'s HTML to the page, and Save and
Replay to the browser (a download, a dropped file).

Built from the answer's recording when opened (``pysse.inspector.analyze``): a live answer's,
or one restored from storage (``Restored``); while the panel is closed nothing is computed,
so it costs nothing during streaming. A non-modal dialog: opening moves focus into it (its
selected tab), Escape or ✕ closes it and gives focus back to what opened it; the tabs follow
the ARIA tabs pattern (arrow keys, Home, End).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from ..chats.recording import Recording
from ..inspector import Report, analyze, check_sizes, compare_steps, replay_refusal
from ..providers import FORMATS, Format
from ..view import Event
from .inspector_view import (
    PAGE,
    render_compare,
    render_events,
    render_raw,
    render_timing,
)
from .platform import run_sliced, spawn

WHOLE_MAX = 1 << 20  # a "whole" replay bigger than this is fed in pieces of this size

if TYPE_CHECKING:
    from .ports import InspectorHost
    from .turn import Turn

__all__ = ["InspectorPanel", "Restored"]

TABS = ("raw", "events", "timing", "replay")


class Restored:
    """An answer restored from storage, read by the inspector as it reads a live ``Turn``."""

    replay = False
    resumes: tuple[Any, ...] = ()  # a stored recording keeps the bytes, not where they resumed

    def __init__(self, rec: Recording) -> None:
        self.rec = rec
        self.chunks = rec.chunks
        self.format = cast(Format, rec.format if rec.format in FORMATS else "auto")
        self.state = rec.state

    def raw(self) -> bytes:
        return self.rec.raw()

    def timing(self) -> dict[str, Any]:
        return dict(self.rec.timing)

    def resume_marks(self) -> dict[int, str]:
        return {}


class InspectorPanel:
    """Raw / Events / Timing / Replay for one answer."""

    def __init__(self, app: InspectorHost) -> None:
        self.app = app
        self.panel = self.q("[data-role=inspector]")
        self.body = self.q("[data-role=insp-body]")
        self.turn: Turn | Restored | None = None
        self.missing = False  # opened for an answer whose recording was not kept
        self.opener: Any = None  # focus goes back here on close
        self.tab = "raw"
        self.shown = PAGE
        self.renders = 0
        self.compare: list[dict[str, Any]] | None = None
        self._report: Report | None = None
        self._report_key: tuple[int, int, int] | None = None

    def q(self, selector: str) -> Any:
        return self.app.doc.querySelector(selector)

    def bind(self) -> None:
        """Clicks, a chosen or dropped file. The tabs' arrow keys are the view's: they move
        focus and press the tab (a click)."""
        self.panel.addEventListener("click", self._on_click)
        self.q("[data-role=replay-file]").addEventListener("change", self._on_file)
        self.q("[data-role=replay-drop]").addEventListener("drop", self._on_drop)
        for sel in ("[data-role=replay-chunk]", "[data-role=replay-delay]"):
            self.q(sel).addEventListener("input", lambda e: None)  # their values, mirrored

    @property
    def is_open(self) -> bool:
        return not self.panel.hidden

    def open(
        self, turn: Turn | Restored | None = None, opener: Any = None, missing: bool = False
    ) -> None:
        self.turn = turn
        self.missing = missing
        self.opener = opener  # focus goes back there on close (else to the composer)
        self.shown = PAGE
        self.panel.hidden = False
        self.app.doc.body.dataset.inspecting = "1"
        self.render()
        self.panel.querySelector(f"[data-tab={self.tab}]").focus()

    def close(self) -> None:
        if self.panel.hidden:
            return
        self.panel.hidden = True
        self.app.doc.body.dataset.inspecting = ""
        self.turn = None
        back = self.opener
        self.opener = None
        if back is not None and back.isConnected:
            back.focus()
        else:
            self.q("[data-role=prompt]").focus()

    def select_tab(self, tab: str) -> None:
        self.tab = tab
        self.shown = PAGE
        self.render()

    def turn_finished(self, turn: Turn | Restored) -> None:
        if self.is_open and turn is self.turn:
            self.render()

    def report(self, turn: Turn | Restored) -> Report:
        key = (id(turn), len(turn.chunks), len(turn.resumes))
        if self._report is None or key != self._report_key:
            self._report = analyze(turn.chunks, turn.format, turn.resume_marks())
            self._report_key = key
        return self._report

    def render(self) -> None:
        if not self.is_open:
            return
        self.renders += 1
        for b in self.panel.querySelectorAll("[data-tab]"):
            selected = b.getAttribute("data-tab") == self.tab
            b.setAttribute("aria-selected", "true" if selected else "false")
            b.tabIndex = 0 if selected else -1
        self.panel.querySelector("[role=tabpanel]").setAttribute(
            "aria-labelledby", f"insp-tab-{self.tab}"
        )
        self.q("[data-role=insp-replay]").hidden = self.tab != "replay"
        turn = self.turn
        if turn is None:  # opened with ?inspect=1: a saved file can still be replayed
            self.q("[data-role=insp-title]").textContent = ""
            note = (
                "This answer's stream was not kept (Settings → Keep stream recordings, or "
                "it was larger than 4 MiB), "
                if self.missing
                else "Press <b>Inspect</b> under an answer to see its raw chunks, events and "
                "timing, "
            )
            self.body.innerHTML = (
                render_compare(None)
                if self.tab == "replay"
                else f'<p class="insp-note">{note}or replay a saved .sse file (Replay).</p>'
            )
            return
        idx = self.app.answer_number(turn)
        self.q("[data-role=insp-title]").textContent = f"answer {idx} · {turn.state}"
        if self.tab == "replay":
            html = render_compare(self.compare)
        elif self.tab == "timing":
            html = render_timing(self.report(turn), turn.timing(), turn.state, turn.replay)
        elif self.tab == "events":
            html = render_events(self.report(turn), self.shown)
        else:
            html = render_raw(self.report(turn), self.shown)
        self.body.innerHTML = html

    # -- actions -------------------------------------------------------------------------------

    def _on_click(self, e: Event) -> None:
        btn = e.target.closest("button") if e.target is not None else None
        if btn is None:
            return
        role = btn.getAttribute("data-role")
        if btn.getAttribute("data-tab"):
            self.select_tab(str(btn.getAttribute("data-tab")))
        elif role == "insp-close":
            self.close()
        elif role == "insp-more":
            self.shown += PAGE
            self.render()
        elif role == "insp-save":
            self.save()
        elif role == "replay-this" and self.turn is not None:
            self.start_replay(self.turn.raw(), "this answer")

    def save(self) -> None:
        turn = self.turn
        if turn is None:
            return
        idx = self.app.answer_number(turn)
        fmt = turn.timing().get("format") or "stream"
        name = f"pysse-answer-{idx}-{fmt}.sse"
        self.app.doc.ops.add(["download", name, turn.raw(), "text/event-stream"])

    def start_replay(self, data: bytes, label: str) -> None:
        chunk = int(self.q("[data-role=replay-chunk]").value or 0)
        delay = int(self.q("[data-role=replay-delay]").value or 0)
        refusal = replay_refusal(len(data), chunk)
        if refusal is not None:
            self.refuse(refusal)
            return
        self.compare = None
        size = (
            f"{chunk}-byte chunks"
            if chunk
            else "one chunk"
            if len(data) <= WHOLE_MAX
            else f"{WHOLE_MAX >> 10} KiB chunks"
        )
        turn = self.app.answers.replay(data, chunk, delay, f"{label} in {size}")
        self.tab = "replay"
        self.turn = turn
        self.render()
        spawn(self._compare(data, turn))

    async def _compare(self, data: bytes, turn: Turn | Restored) -> None:
        """The same-text check at several chunk sizes, in slices that keep the page alive."""
        rows = await run_sliced(
            compare_steps(data, check_sizes(len(data)), self.app.settings["format"])
        )
        if self.turn is turn:
            self.compare = rows
            self.render()

    def refuse(self, message: str) -> None:
        """Say why a replay is not started (too big for a page) and what to do instead."""
        self.tab = "replay"
        self.compare = None
        self.render()
        note = self.app.doc.createElement("p")
        note.className = "insp-note bad"
        note.dataset.role = "insp-refused"
        note.textContent = f"Not replayed: {message}."
        self.body.prepend(note)

    def _on_file(self, e: Event) -> None:
        if e.files:
            self._take_file(e.files[0])

    def _on_drop(self, e: Event) -> None:
        if e.files:  # (the view kept the browser from opening the file)
            self._take_file(e.files[0])

    def _take_file(self, file: Any) -> None:
        # Refuse by the file's size before reading it: reading 200 MB is the freeze itself.
        chunk = int(self.q("[data-role=replay-chunk]").value or 0)
        refusal = replay_refusal(int(file.size), chunk)
        if refusal is not None:
            self.refuse(refusal)
            return
        spawn(self._read_file(file))

    async def _read_file(self, file: Any) -> None:
        buf = await file.arrayBuffer()
        data = buf.to_bytes() if hasattr(buf, "to_bytes") else bytes(buf)
        self.start_replay(data, str(file.name))
