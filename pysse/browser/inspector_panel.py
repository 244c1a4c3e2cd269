"""The stream inspector panel: binds ``page.inspector_view``'s HTML to the page, and Save and
Replay to the browser (a download, a dropped file).

Built from the answer's recording when opened (``pysse.inspector.analyze``); while the panel
is closed nothing is computed, so it costs nothing during streaming.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import js
from pyodide.ffi import create_once_callable, to_js

from ..inspector import Report, analyze, check_sizes, compare_steps, replay_refusal
from ..page.inspector_view import (
    PAGE,
    render_compare,
    render_events,
    render_raw,
    render_timing,
)
from .dom import js_obj, q, run_sliced, spawn

WHOLE_MAX = 1 << 20  # a "whole" replay bigger than this is fed in pieces of this size

if TYPE_CHECKING:
    from .app import App
    from .turn import Turn

__all__ = ["InspectorPanel"]


class InspectorPanel:
    """Raw / Events / Timing / Replay for one answer."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.panel = q("[data-role=inspector]")
        self.body = q("[data-role=insp-body]")
        self.turn: Turn | None = None
        self.tab = "raw"
        self.shown = PAGE
        self.renders = 0
        self.compare: list[dict[str, Any]] | None = None
        self._report: Report | None = None
        self._report_key: tuple[int, int, int] | None = None

    def bind(self) -> None:
        on = self.app.listeners.on
        on(self.panel, "click", self._on_click)
        on(q("[data-role=replay-file]"), "change", self._on_file)
        drop = q("[data-role=replay-drop]")
        on(drop, "dragover", lambda e: e.preventDefault())
        on(drop, "drop", self._on_drop)

    @property
    def is_open(self) -> bool:
        return not self.panel.hidden

    def open(self, turn: Turn | None = None) -> None:
        self.turn = turn
        self.shown = PAGE
        self.panel.hidden = False
        js.document.body.dataset.inspecting = "1"
        self.render()

    def close(self) -> None:
        self.panel.hidden = True
        js.document.body.dataset.inspecting = ""
        self.turn = None

    def turn_finished(self, turn: Turn) -> None:
        if self.is_open and turn is self.turn:
            self.render()

    def report(self, turn: Turn) -> Report:
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
            b.setAttribute(
                "aria-selected", "true" if b.getAttribute("data-tab") == self.tab else "false"
            )
        q("[data-role=insp-replay]").hidden = self.tab != "replay"
        turn = self.turn
        if turn is None:  # opened with ?inspect=1: a saved file can still be replayed
            q("[data-role=insp-title]").textContent = ""
            self.body.innerHTML = (
                render_compare(None)
                if self.tab == "replay"
                else '<p class="insp-note">Press <b>Inspect</b> under an answer to see its raw '
                "chunks, events and timing, or replay a saved .sse file (Replay).</p>"
            )
            return
        idx = self.app.turns.index(turn) + 1 if turn in self.app.turns else 0
        q("[data-role=insp-title]").textContent = f"answer {idx} · {turn.state}"
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

    def _on_click(self, e: Any) -> None:
        btn = e.target.closest("button")
        if btn is None:
            return
        role = btn.getAttribute("data-role")
        if btn.getAttribute("data-tab"):
            self.tab = str(btn.getAttribute("data-tab"))
            self.shown = PAGE
            self.render()
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
        blob = js.Blob.new([to_js(turn.raw())], js_obj({"type": "text/event-stream"}))
        url = js.URL.createObjectURL(blob)
        a = js.document.createElement("a")
        a.href = url
        idx = self.app.turns.index(turn) + 1
        a.download = f"pysse-answer-{idx}-{turn.cs.detected_format or 'stream'}.sse"
        js.document.body.appendChild(a)
        a.click()
        a.remove()
        js.setTimeout(create_once_callable(lambda: js.URL.revokeObjectURL(url)), 1000)

    def start_replay(self, data: bytes, label: str) -> None:
        chunk = int(q("[data-role=replay-chunk]").value or 0)
        delay = int(q("[data-role=replay-delay]").value or 0)
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
        turn = self.app.replay(data, chunk, delay, f"{label} in {size}")
        self.tab = "replay"
        self.turn = turn
        self.render()
        spawn(self._compare(data, turn))

    async def _compare(self, data: bytes, turn: Turn) -> None:
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
        note = js.document.createElement("p")
        note.className = "insp-note bad"
        note.dataset.role = "insp-refused"
        note.textContent = f"Not replayed: {message}."
        self.body.prepend(note)

    def _on_file(self, e: Any) -> None:
        files = e.target.files
        if files.length:
            self._take_file(files.item(0))

    def _on_drop(self, e: Any) -> None:
        e.preventDefault()
        files = e.dataTransfer.files
        if files.length:
            self._take_file(files.item(0))

    def _take_file(self, file: Any) -> None:
        # Refuse by the file's size before reading it: reading 200 MB is the freeze itself.
        chunk = int(q("[data-role=replay-chunk]").value or 0)
        refusal = replay_refusal(int(file.size), chunk)
        if refusal is not None:
            self.refuse(refusal)
            return
        spawn(self._read_file(file))

    async def _read_file(self, file: Any) -> None:
        buf = await file.arrayBuffer()
        self.start_replay(buf.to_bytes(), str(file.name))
