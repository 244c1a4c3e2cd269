"""What the browser's own work costs per frame while an answer streams (issue #36), from a
Chromium ``devtools.timeline`` trace: the renderer main thread's CPU time by kind, per frame.

Why a trace: the page's own counters cannot see style, layout and paint, and the Long Tasks
API misses frames whose only work is rendering (RESEARCH-2026-12-02). The trace is read by
``trace_reader`` (the page's main thread, its workers, tasks, thread CPU, self time by kind:
its docstring says how, and why each event is the kind it is); this module adds the window
and the frames.

What is counted, exactly (``analyze``):

* **The thread**: ``trace_reader``'s main thread for the send mark; its dedicated workers'
  CPU is summed apart (``worker_cpu_ms``): Python may run there, and that is not main-thread
  time.
* **The window**: the main thread's tasks that start from the send mark to the end mark,
  extended to the end of the first frame that starts within ``FINAL_FRAME_US`` after the end
  mark (the frame that paints the final state: a page that sets ``data-state`` in a frame
  callback gets its style, layout and paint after the mark, in the same frame).
* **Tasks**: the main thread's outermost ``RunTask`` events; main-thread CPU is their sum.
* **Self time by kind**: ``trace_reader.spans`` over the window's tasks, so the kinds add up
  to the main-thread CPU. ``ParseHTML``'s own self time is also reported
  (``self_by_name["ParseHTML"]``), and IntersectionObserver's computations ("other") with
  their count and self time.
* **Rendering CPU** = style + layout + the paint chain (``trace_reader``'s kinds), self
  times, wherever they run (in the frame's update or forced by script);
  ``render_unforced_ms`` is the part not inside script (the frames' own updates).
* **Frames**: one per ``BeginMainThreadFrame`` (category
  ``disabled-by-default-devtools.timeline.frame``), the main thread's start of a frame
  update (frame callbacks, style, layout, paint, commit): exactly the frames the page
  produced, where the compositor's ``BeginFrame`` counts every vsync, idle ones included.
  It matches the ``AnimationFrame`` events (Long Animation Frames) one for one. A frame is
  its update task plus every task since the previous frame's update task (the work that
  led up to it, as Long Animation Frames count it), so a layout forced by a network task
  counts in the frame it precedes. Tasks after the last frame are in the totals only.
* **Layouts**: ``Layout`` events not inside another; **forced** when an ancestor is script
  (a geometry read after a DOM write, in the same script); a frame with two or more is
  thrashing. Style recalcs likewise (``UpdateLayoutTree``). **Paints**: paint passes
  (outermost ``Paint`` events, one per frame painted) and all ``Paint`` events (nested ones
  are the parts repainted: the count issue #36 quotes).
"""

from __future__ import annotations

import bisect
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from .trace_reader import (
    INTERSECTIONS,
    KINDS,
    RENDER_KINDS,
    Reader,
    cpu_us,
    find_mark,
    spans,
    within,
)

__all__ = ["FINAL_FRAME_US", "LONG_TASK_MS", "FrameStats", "analyze", "walk"]

Event = dict[str, Any]

LONG_TASK_MS = 12.5  # thread CPU: 50 ms on a phone 4x slower (NOTES.md, 2026-12-02)
FINAL_FRAME_US = 100_000
FRAME = "BeginMainThreadFrame"


@dataclass
class FrameStats:
    """The figures of one window of one trace (milliseconds of thread CPU time)."""

    window_ms: float = 0.0  # wall time of the window (trace clock)
    cpu_ms: float = 0.0  # main thread: sum of the outermost RunTasks' tdur
    tasks: int = 0
    task_ms: list[float] = field(default_factory=list)
    frames: int = 0
    by_kind: dict[str, float] = field(default_factory=lambda: dict.fromkeys(KINDS, 0.0))
    self_by_name: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    frame_render_ms: list[float] = field(default_factory=list)  # rendering CPU of each frame
    frame_layouts: list[int] = field(default_factory=list)
    frame_paints: list[int] = field(default_factory=list)  # paint passes of each frame
    layouts: int = 0
    forced_layouts: int = 0
    style_recalcs: int = 0
    forced_styles: int = 0
    paints: int = 0  # paint passes (outermost Paint events)
    paint_events: int = 0  # every Paint event, nested ones too
    parse_html: int = 0
    intersections: int = 0
    worker_cpu_ms: float = 0.0
    render_unforced_ms: float = 0.0  # rendering CPU not inside script: the frames' own updates
    forced_stacks: Counter[str] = field(default_factory=Counter)

    @property
    def render_ms(self) -> float:
        """Rendering CPU: style + layout + paint chain."""
        return sum(self.by_kind[k] for k in RENDER_KINDS)

    @property
    def longest_task_ms(self) -> float:
        return max(self.task_ms, default=0.0)

    def long_tasks(self, ms: float = LONG_TASK_MS) -> int:
        return sum(1 for t in self.task_ms if t >= ms)

    def per_frame(self, count: float) -> float:
        return count / self.frames if self.frames else float("nan")

    @property
    def frame_median_ms(self) -> float:
        return statistics.median(self.frame_render_ms) if self.frame_render_ms else float("nan")

    @property
    def frame_worst_ms(self) -> float:
        return max(self.frame_render_ms, default=float("nan"))

    @property
    def thrashing_frames(self) -> int:
        """Frames with two or more layouts."""
        return sum(1 for n in self.frame_layouts if n >= 2)


def _stack_signature(data: dict[str, Any], depth: int = 3) -> str:
    frames = data.get("stackTrace") or []
    parts = [
        f"{f.get('functionName') or '(anonymous)'}"
        f" ({str(f.get('url', '')).rsplit('/', 1)[-1]}:{f.get('lineNumber', 0)})"
        for f in frames[:depth]
    ]
    return " < ".join(parts) if parts else "(no stack: record with the .stack category)"


def analyze(
    events: list[Event],
    start_mark: str,
    end_mark: str,
    *,
    final_frame_us: float = FINAL_FRAME_US,
) -> FrameStats:
    """The figures of the window from ``start_mark`` to ``end_mark`` (see the module
    docstring). Raises ValueError when a mark is missing."""
    start = find_mark(events, start_mark)
    end = find_mark(events, end_mark)
    if start is None or end is None:
        missing = start_mark if start is None else end_mark
        raise ValueError(f"no performance.mark({missing!r}) in the trace")
    trace = Reader(events)
    main = trace.main_thread(start)
    t0, t1 = float(start["ts"]), float(end["ts"])
    mine = trace.threads[main]
    tasks = trace.tasks(main)
    task_starts = [t["ts"] for t in tasks]

    def task_end_at(ts: float) -> float:
        """The end of the task running at ``ts`` (``ts`` itself outside any task)."""
        i = bisect.bisect_right(task_starts, ts) - 1
        if i >= 0 and tasks[i]["ts"] + tasks[i]["dur"] >= ts:
            return float(tasks[i]["ts"] + tasks[i]["dur"])
        return ts

    frame_ts = sorted(
        float(e["ts"])
        for e in events
        if e.get("name") == FRAME and (e.get("pid"), e.get("tid")) == main
    )
    after = [ts for ts in frame_ts if t1 < ts <= t1 + final_frame_us]
    if after:
        t1 = task_end_at(after[0])
    frame_ends = [task_end_at(ts) for ts in frame_ts if t0 <= ts <= t1]
    out = FrameStats(window_ms=(t1 - t0) / 1000, frames=len(frame_ends))
    out.frame_render_ms = [0.0] * len(frame_ends)
    out.frame_layouts = [0] * len(frame_ends)
    out.frame_paints = [0] * len(frame_ends)

    window = [t for t in tasks if t0 <= t["ts"] <= t1]
    out.tasks = len(window)
    out.task_ms = [cpu_us(t) / 1000 for t in window]
    out.cpu_ms = sum(out.task_ms)
    walk(within(mine, window), frame_ends, out)
    out.worker_cpu_ms = trace.thread_cpu(t0, t1, start)[2]
    return out


def walk(inside: list[Event], frame_ends: list[float], out: FrameStats) -> None:
    """Self time by kind and the per-frame counts into ``out``, from the window's events
    (``trace_reader.spans``' order); ``frame_ends`` are the frames' ends (sorted), and
    ``out``'s per-frame lists must have one entry per frame. Used for Firefox's profiles too
    (``gecko_frames``)."""
    for span in spans(inside):
        e, kind, ms = span.event, span.kind, span.self_us / 1000
        name = e["name"]
        out.by_kind[kind] += ms
        out.self_by_name[name] += ms
        frame = bisect.bisect_right(frame_ends, e["ts"])
        framed = frame < len(frame_ends)
        if kind in RENDER_KINDS:
            if not span.in_script:
                out.render_unforced_ms += ms
            if framed:
                out.frame_render_ms[frame] += ms
        if name == "Layout" and not span.nested_same:
            out.layouts += 1
            if framed:
                out.frame_layouts[frame] += 1
            if span.in_script:
                out.forced_layouts += 1
                out.forced_stacks[_stack_signature(e.get("args", {}).get("beginData", {}))] += 1
        elif name == "UpdateLayoutTree" and not span.nested_same:
            out.style_recalcs += 1
            out.forced_styles += int(span.in_script)
        elif name == "Paint":
            out.paint_events += 1
            if not span.nested_same:
                out.paints += 1
                if framed:
                    out.frame_paints[frame] += 1
        elif name == "ParseHTML":
            out.parse_html += 1
        elif name == INTERSECTIONS:
            out.intersections += 1
