"""The same figures as ``trace_frames`` for Firefox, from a Gecko profile (issue #36's
Firefox row).

Firefox offers no devtools.timeline over WebDriver BiDi, and neither Long Tasks nor Long
Animation Frames to a page; a rAF-driven probe in the page was tried and rejected: the task
it times after a frame waits behind the page's other tasks (in Chromium it read 1.4 s
where the trace measured 0.3 s of rendering). Firefox's own profiler, started with the
browser (``MOZ_PROFILER_STARTUP``, markers only: ``render_firefox.cjs``), records what its
main thread does as **markers**, and those are read here, for the page's content process
(the one whose ``GeckoMain`` thread holds the window's ``performance.mark`` markers).

What the figures are (they differ from Chromium's in one way that matters):

* Marker durations are **wall time**; only the main thread's total is CPU time (the sum of
  its ``Awake`` markers' ``CPU Time``). On a loaded machine wall time can exceed CPU time.
* Markers are converted to the trace's vocabulary and walked by ``trace_frames.walk``:
  ``Styles`` is style (``UpdateLayoutTree``), every ``Reflow ...`` is layout (``Layout``),
  ``ViewManagerFlush`` (display list building and the WebRender transaction: the main
  thread's share of painting; rasterization runs elsewhere) is a paint pass (``Paint``);
  ``requestAnimationFrame callbacks``, ``Perform microtasks``, ``setTimeout callback`` and
  ``DOMEvent`` are script; GC and CC slices are GC. The markers inside these (the display
  list's parts, ``DoFlushPendingNotifications``) are left out: their time stays with their
  parent.
* **Frames** are ``RefreshDriverTick`` markers (Firefox's frame update: frame callbacks,
  style, layout, paint), split as in Chromium: a tick and everything since the previous one.
* A layout or style flush is **forced** when it runs inside script, or outside any tick
  (nothing but script asks for one there).
* ``LongTask`` markers (tasks of 50 ms or more, wall time) are counted.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from .trace_frames import FINAL_FRAME_US, FrameStats, walk

__all__ = ["GeckoStats", "analyze_gecko", "page_markers"]

AS_TRACE = {
    "Styles": "UpdateLayoutTree",
    "ViewManagerFlush": "Paint",
    "requestAnimationFrame callbacks": "FireAnimationFrame",
    "Perform microtasks": "RunMicrotasks",
    "setTimeout callback": "TimerFire",
    "DOMEvent": "EventDispatch",
}
GC_TYPES = ("GCMinor", "GCSlice", "CCSlice")
TICK = "RefreshDriverTick"


@dataclass
class Marker:
    name: str
    start: float  # ms, the thread's clock
    end: float
    data: dict[str, Any]


@dataclass
class GeckoStats:
    stats: FrameStats
    long_tasks: int  # LongTask markers (50 ms or more of wall time)


def _processes(profile: dict[str, Any]) -> list[dict[str, Any]]:
    out = [profile]
    for p in profile.get("processes", []):
        out += _processes(json.loads(p) if isinstance(p, str) else p)
    return out


def page_markers(profile: dict[str, Any], mark: str) -> list[Marker]:
    """The markers of the ``GeckoMain`` thread that recorded ``performance.mark(mark)``,
    start/end pairs joined into one (by name, innermost first)."""
    for proc in _processes(profile):
        for thread in proc.get("threads", []):
            if thread.get("name") != "GeckoMain":
                continue
            strings = thread["stringTable"]
            schema = thread["markers"]["schema"]
            rows = thread["markers"]["data"]
            data_at = schema["data"]
            if not any(
                len(r) > data_at
                and isinstance(r[data_at], dict)
                and r[data_at].get("type") == "UserTiming"
                and r[data_at].get("name") == mark
                for r in rows
            ):
                continue
            return _joined(rows, schema, strings)
    raise ValueError(f"no GeckoMain thread recorded performance.mark({mark!r})")


def _joined(rows: list[list[Any]], schema: dict[str, int], strings: list[str]) -> list[Marker]:
    """Instant (phase 0) and interval (1) markers as they are; each start (2) joined to the
    next end (3) of the same name."""
    out: list[Marker] = []
    open_: dict[str, list[Marker]] = defaultdict(list)
    name_at, start_at, end_at, phase_at, data_at = (
        schema["name"],
        schema["startTime"],
        schema["endTime"],
        schema["phase"],
        schema["data"],
    )

    def when(r: list[Any]) -> float:
        return float(r[end_at] if r[phase_at] == 3 else r[start_at])

    for r in sorted(rows, key=when):
        name = strings[r[name_at]]
        data = r[data_at] if len(r) > data_at and isinstance(r[data_at], dict) else {}
        phase = r[phase_at]
        if phase == 0:
            out.append(Marker(name, r[start_at], r[start_at], data))
        elif phase == 1:
            out.append(Marker(name, r[start_at], r[end_at], data))
        elif phase == 2:
            m = Marker(name, r[start_at], r[start_at], data)
            open_[name].append(m)
        elif open_[name]:
            m = open_[name].pop()
            m.end = r[end_at]
            m.data = {**m.data, **data}
            out.append(m)
    return sorted(out, key=lambda m: (m.start, -(m.end - m.start)))


def _trace_name(m: Marker) -> str | None:
    if m.name in AS_TRACE:
        return AS_TRACE[m.name]
    if m.name.startswith("Reflow"):
        return "Layout"
    if m.data.get("type") in GC_TYPES:
        return "MinorGC"
    return None


def _event(name: str, m: Marker) -> dict[str, Any]:
    ts, dur = m.start * 1000, (m.end - m.start) * 1000
    return {"ph": "X", "name": name, "ts": ts, "dur": dur, "tdur": dur}


def analyze_gecko(
    profile: dict[str, Any],
    start_mark: str,
    end_mark: str,
    *,
    final_frame_ms: float = FINAL_FRAME_US / 1000,
) -> GeckoStats:
    """The window from ``start_mark`` to ``end_mark`` (plus the tick that paints the final
    state, as in Chromium), for the page's content process (see the module docstring)."""
    markers = page_markers(profile, start_mark)

    def mark_at(name: str) -> float:
        for m in markers:
            if m.data.get("type") == "UserTiming" and m.data.get("name") == name:
                return m.start
        raise ValueError(f"no performance.mark({name!r}) in the profile")

    t0, t1 = mark_at(start_mark), mark_at(end_mark)
    ticks = [m for m in markers if m.name == TICK]
    after = [m for m in ticks if t1 < m.start <= t1 + final_frame_ms]
    if after:
        t1 = after[0].end
    frame_ends = [m.end * 1000 for m in ticks if t0 <= m.start <= t1]
    out = FrameStats(window_ms=t1 - t0, frames=len(frame_ends))
    out.frame_render_ms = [0.0] * len(frame_ends)
    out.frame_layouts = [0] * len(frame_ends)
    out.frame_paints = [0] * len(frame_ends)
    in_window = [m for m in markers if t0 <= m.start <= t1]
    events = []
    for m in in_window:
        name = _trace_name(m)
        if name is None:
            continue
        if name in ("Layout", "UpdateLayoutTree") and not any(
            t.start <= m.start and m.end <= t.end for t in ticks
        ):
            events.append(_event("FunctionCall", m))  # outside a tick: script asked for it
        events.append(_event(name, m))
    walk(sorted(events, key=lambda e: (e["ts"], -e["dur"])), frame_ends, out)
    awake = [m for m in in_window if m.name == "Awake"]
    out.cpu_ms = sum(float(m.data.get("CPU Time", 0.0)) for m in awake)
    long_tasks = sum(1 for m in in_window if m.name == "LongTask")
    return GeckoStats(out, long_tasks)
