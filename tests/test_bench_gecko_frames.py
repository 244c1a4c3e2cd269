"""bench/gecko_frames.py on a small hand-made Gecko profile: the page's process found by its
marks, start/end markers joined, markers mapped to style / layout / paint / script, frames
from refresh driver ticks, forced flushes, CPU from Awake markers. The figures are worked
out by hand from the markers below."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench.gecko_frames import analyze_gecko, page_markers

SCHEMA = {"name": 0, "startTime": 1, "endTime": 2, "phase": 3, "category": 4, "data": 5}
INSTANT, INTERVAL, START, END = 0, 1, 2, 3


def thread(markers: list[tuple[str, float, float, int, dict[str, Any] | None]]) -> Any:
    strings: list[str] = []
    rows = []
    for name, start, end, phase, data in markers:
        if name not in strings:
            strings.append(name)
        row: list[Any] = [strings.index(name), start, end, phase, 0]
        if data is not None:
            row.append(data)
        rows.append(row)
    return {
        "name": "GeckoMain",
        "stringTable": strings,
        "markers": {"schema": SCHEMA, "data": rows},
    }


def mark(name: str, at: float) -> Any:
    return ("UserTiming", at, 0, INSTANT, {"type": "UserTiming", "name": name})


def page() -> Any:
    """Times in ms. The window is [10, 50].

    - 12-14: a setTimeout callback forces a style flush (0.5) and a sync reflow (1.0)
    - 15: a sync reflow of 0.4 outside any tick and outside script (forced all the same)
    - tick 1, 20-26: rAF callbacks 20-22 (a sync reflow 21-21.5 inside), Styles 22-22.3,
      Reflow (interruptible) 22.3-23, ViewManagerFlush 23-25.5 (DisplayList 23.1-24 inside)
    - tick 2, 36-37: ViewManagerFlush 36-36.6; a GCMinor 36.7-36.9
    - awake 11-14 (1.5 ms CPU), 20-26 (4.0), 36-37 (0.5); one before the window (9.0)
    - a LongTask marker at 40; a tick at 400, too late for the final frame
    """
    return thread(
        [
            ("Awake", 1, 0, START, {"type": "Awake"}),
            ("Awake", 0, 5, END, {"type": "Awake", "CPU Time": 9.0}),
            mark("send", 10),
            ("Awake", 11, 0, START, {"type": "Awake"}),
            ("setTimeout callback", 12, 14, INTERVAL, {}),
            ("Styles", 12.1, 12.6, INTERVAL, {"type": "Styles"}),
            ("Reflow (sync)", 12.6, 0, START, None),
            ("Reflow (sync)", 0, 13.6, END, None),
            ("Awake", 0, 14, END, {"type": "Awake", "CPU Time": 1.5}),
            ("Reflow (sync)", 15, 0, START, None),
            ("Reflow (sync)", 0, 15.4, END, None),
            ("Awake", 20, 0, START, {"type": "Awake"}),
            ("RefreshDriverTick", 20, 26, INTERVAL, {}),
            ("requestAnimationFrame callbacks", 20, 0, START, None),
            ("Reflow (sync)", 21, 0, START, None),
            ("Reflow (sync)", 0, 21.5, END, None),
            ("requestAnimationFrame callbacks", 0, 22, END, None),
            ("Styles", 22, 22.3, INTERVAL, {"type": "Styles"}),
            ("Reflow (interruptible)", 22.3, 0, START, None),
            ("Reflow (interruptible)", 0, 23, END, None),
            ("ViewManagerFlush", 23, 25.5, INTERVAL, {}),
            ("DisplayList", 23.1, 0, START, None),
            ("DisplayList", 0, 24, END, None),
            ("Awake", 0, 26, END, {"type": "Awake", "CPU Time": 4.0}),
            ("Awake", 36, 0, START, {"type": "Awake"}),
            ("RefreshDriverTick", 36, 37, INTERVAL, {}),
            ("ViewManagerFlush", 36, 36.6, INTERVAL, {}),
            ("GCMinor", 36.7, 36.9, INTERVAL, {"type": "GCMinor"}),
            ("Awake", 0, 37, END, {"type": "Awake", "CPU Time": 0.5}),
            ("LongTask", 40, 41, INTERVAL, {"type": "MainThreadLongTask"}),
            mark("done", 50),
            ("RefreshDriverTick", 400, 401, INTERVAL, {}),
        ]
    )


def profile() -> dict[str, Any]:
    """The parent process, another content process (no marks), the page's (as JSON text,
    as older profiles store a child's)."""
    other = {"threads": [thread([("Styles", 12, 30, INTERVAL, {"type": "Styles"})])]}
    return {
        "threads": [thread([])],
        "processes": [other, json.dumps({"threads": [page()]})],
    }


def test_the_page_process_and_joined_markers() -> None:
    markers = page_markers(profile(), "send")
    reflows = [(m.start, m.end) for m in markers if m.name == "Reflow (sync)"]
    assert reflows == [(12.6, 13.6), (15, 15.4), (21, 21.5)]
    with pytest.raises(ValueError, match="nowhere"):
        page_markers(profile(), "nowhere")


def test_figures_by_kind_and_cpu() -> None:
    g = analyze_gecko(profile(), "send", "done")
    s = g.stats
    assert s.window_ms == pytest.approx(40)
    assert s.cpu_ms == pytest.approx(1.5 + 4.0 + 0.5)  # the Awake before the window is not
    assert s.by_kind["style"] == pytest.approx(0.5 + 0.3)
    assert s.by_kind["layout"] == pytest.approx(1.0 + 0.4 + 0.5 + 0.7)
    assert s.by_kind["paint"] == pytest.approx(2.5 + 0.6)  # DisplayList stays in its flush
    assert s.by_kind["gc"] == pytest.approx(0.2)
    # setTimeout 2.0 - 1.5 of flushes; rAF callbacks 2.0 - 0.5 of reflow
    assert s.by_kind["script"] == pytest.approx(0.5 + 1.5)
    assert g.long_tasks == 1


def test_frames_and_forced_flushes() -> None:
    s = analyze_gecko(profile(), "send", "done").stats
    assert s.frames == 2  # the tick at 400 is too late to be the final frame
    # frame 1: everything from the window's start to the end of tick 1
    assert s.frame_render_ms == pytest.approx([0.8 + 2.6 + 2.5, 0.6])
    assert s.frame_layouts == [4, 0]
    assert s.thrashing_frames == 1
    assert (s.layouts, s.forced_layouts) == (4, 3)  # in script (2), outside a tick (1)
    assert (s.style_recalcs, s.forced_styles) == (2, 1)
    assert (s.paints, s.frame_paints) == (2, [1, 1])
