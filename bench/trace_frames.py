"""What the browser's own work costs per frame while an answer streams (issue #36), from a
Chromium ``devtools.timeline`` trace: the renderer main thread's CPU time by kind, per frame.

Why a trace and thread CPU time: the page's own counters cannot see style, layout and paint,
and the Long Tasks API misses frames whose only work is rendering (RESEARCH-2026-12-02). Every
figure here is thread CPU time (``tdur``), not wall time: on a machine shared with other work
a task's wall time is often several times its CPU time, so CPU time is what an idle machine
would spend. Events without ``tdur`` count their ``dur``.

What is counted, exactly (``analyze``):

* **The thread**: the renderer main thread (thread name ``CrRendererMain``) of the process
  the window's marks were recorded in (``performance.mark`` runs on the page's main thread);
  without marks, the process ``TracingStartedInBrowser`` names for the outermost main frame;
  else the busiest ``CrRendererMain``. Dedicated workers of that process are summed apart
  (``worker_cpu_ms``): Python may run there, and that is not main-thread time.
* **The window**: the main thread's tasks that start from the send mark to the end mark,
  extended to the end of the first frame that starts within ``FINAL_FRAME_US`` after the end
  mark (the frame that paints the final state: a page that sets ``data-state`` in a frame
  callback gets its style, layout and paint after the mark, in the same frame).
* **Tasks**: outermost ``RunTask`` events (a task can run nested inside another: it is part
  of its outer task); main-thread CPU is the sum of their ``tdur``.
* **Self time by kind**: the thread's complete events are walked as a stack; each event's
  self time is its ``tdur`` minus its children's, given to its kind (``KIND_OF``); an event
  of no known kind takes its parent's kind, and a task's own self time (and a top-level
  unknown event's) is "other". So the kinds add up to the main-thread CPU. ``ParseHTML``
  counts as **script**: it is the HTML parser run synchronously by a script call
  (``innerHTML``, ``insertAdjacentHTML``, ``createContextualFragment``) while the same
  DOM built with ``createElement``/``append`` is plain ``FunctionCall`` self time; counting
  it as script keeps both ways of building the DOM comparable. Its own self time is also
  reported (``self_by_name["ParseHTML"]``). IntersectionObserver's computations
  (``IntersectionObserverController::computeIntersections``) are neither script nor
  rendering: "other", with their count and self time reported.
* **Rendering CPU** = style (``UpdateLayoutTree``) + layout (``Layout``) + the paint chain
  (``PrePaint``, ``Paint``, ``Layerize``, ``Commit``, ``UpdateLayer``, ``UpdateLayerTree``),
  self times, wherever they run (in the frame's update or forced by script);
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
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "FINAL_FRAME_US",
    "KINDS",
    "LONG_TASK_MS",
    "FrameStats",
    "analyze",
    "complete_events",
    "find_mark",
    "keep_event",
    "kind_of",
    "walk",
]

Event = dict[str, Any]
Thread = tuple[int, int]

KINDS = ("script", "style", "layout", "paint", "gc", "other")
RENDER_KINDS = ("style", "layout", "paint")
LONG_TASK_MS = 12.5  # thread CPU: 50 ms on a phone 4x slower (NOTES.md, 2026-12-02)
FINAL_FRAME_US = 100_000
MAIN_THREAD = "CrRendererMain"
WORKER_THREAD = "DedicatedWorker thread"
FRAME = "BeginMainThreadFrame"
TASK = "RunTask"
INTERSECTIONS = "IntersectionObserverController::computeIntersections"

KIND_OF = {
    "FunctionCall": "script",
    "FireAnimationFrame": "script",
    "TimerFire": "script",
    "EventDispatch": "script",
    "EvaluateScript": "script",
    "RunMicrotasks": "script",
    "HandlePostMessage": "script",
    "FireIdleCallback": "script",
    "ParseHTML": "script",
    "v8.run": "script",
    "v8.callFunction": "script",
    "v8.evaluateModule": "script",
    "v8.compile": "script",
    "v8.compileModule": "script",
    "V8.CompileCode": "script",
    "UpdateLayoutTree": "style",
    "RecalculateStyles": "style",  # the older name of UpdateLayoutTree
    "Layout": "layout",
    "PrePaint": "paint",
    "Paint": "paint",
    "PaintImage": "paint",
    "Layerize": "paint",
    "Commit": "paint",
    "UpdateLayer": "paint",
    "UpdateLayerTree": "paint",
    "CompositeLayers": "paint",
    "MinorGC": "gc",
    "MajorGC": "gc",
    INTERSECTIONS: "other",
}
GC_PREFIXES = ("V8.GC", "BlinkGC.", "CppGC.", "ThreadState::")


def kind_of(name: str) -> str | None:
    """The kind an event of this name is (None: it takes its parent's)."""
    kind = KIND_OF.get(name)
    if kind is None and name.startswith(GC_PREFIXES):
        return "gc"
    return kind


def keep_event(e: Event) -> bool:
    """Whether ``analyze`` needs this event: a collector may drop the rest as they arrive (a
    38 s stream is hundreds of thousands of events). Dropping an event of no known kind
    changes nothing: its self time goes to its parent, which is the kind it would take."""
    name = str(e.get("name", ""))
    return (
        e.get("ph") == "M"
        or name in (TASK, FRAME, "TracingStartedInBrowser")
        or kind_of(name) is not None
        or "user_timing" in str(e.get("cat", ""))
    )


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


def complete_events(events: Iterable[Event]) -> list[Event]:
    """The trace's duration events as complete (``X``) events: ``X`` as they are, and each
    ``B``/``E`` pair of a thread joined into one (``tdur`` from their ``tts``, both pairs of
    args kept). Chromium 156 writes the devtools events as ``X``; older versions wrote
    ``Layout`` and ``ParseHTML`` as pairs."""
    out: list[Event] = []
    open_: dict[Thread, list[Event]] = defaultdict(list)
    for e in sorted(
        (e for e in events if e.get("ph") in ("X", "B", "E")), key=lambda e: e.get("ts", 0)
    ):
        ph = e["ph"]
        if ph == "X":
            out.append(e)
        elif ph == "B":
            open_[e["pid"], e["tid"]].append(e)
        else:
            stack = open_[e["pid"], e["tid"]]
            if not stack:
                continue  # its begin was before the trace started
            b = stack.pop()
            x = {**b, "ph": "X", "dur": e["ts"] - b["ts"]}
            if "tts" in b and "tts" in e:
                x["tdur"] = e["tts"] - b["tts"]
            x["args"] = {**b.get("args", {}), **e.get("args", {})}
            out.append(x)
    return out


def find_mark(events: Iterable[Event], name: str) -> Event | None:
    """The first ``performance.mark(name)`` of the trace (category ``blink.user_timing``)."""
    for e in events:
        if e.get("name") == name and "user_timing" in str(e.get("cat", "")):
            return e
    return None


def _threads(events: list[Event]) -> dict[Thread, str]:
    return {
        (e["pid"], e["tid"]): str(e.get("args", {}).get("name", ""))
        for e in events
        if e.get("ph") == "M" and e.get("name") == "thread_name"
    }


def _main_thread(events: list[Event], names: dict[Thread, str], mark: Event | None) -> Thread:
    mains = [t for t, n in names.items() if n == MAIN_THREAD]
    if mark is not None and (mark["pid"], mark["tid"]) in mains:
        return int(mark["pid"]), int(mark["tid"])
    for e in events:
        if e.get("name") == "TracingStartedInBrowser":
            for f in e.get("args", {}).get("data", {}).get("frames", []):
                if f.get("isOutermostMainFrame") or f.get("isInPrimaryMainFrame"):
                    hits = [t for t in mains if t[0] == f.get("processId")]
                    if hits:
                        return hits[0]
    busy: dict[Thread, float] = defaultdict(float)
    for e in events:
        key = (e.get("pid"), e.get("tid"))
        if key in mains and e.get("name") == TASK and e.get("ph") == "X":
            busy[key] += e.get("dur", 0)  # type: ignore[index]
    if not busy:
        raise ValueError("no renderer main thread (CrRendererMain) with tasks in the trace")
    return max(busy, key=busy.__getitem__)


def _cpu(e: Event) -> float:
    return float(e.get("tdur", e.get("dur", 0)))


def _outermost_tasks(events: list[Event]) -> list[Event]:
    out: list[Event] = []
    end = -1.0
    for e in events:
        if e["name"] == TASK and e["ts"] >= end:
            out.append(e)
            end = e["ts"] + e["dur"]
    return out


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
    names = _threads(events)
    main = _main_thread(events, names, start)
    t0, t1 = float(start["ts"]), float(end["ts"])
    mine = sorted(
        (e for e in complete_events(events) if (e["pid"], e["tid"]) == main),
        key=lambda e: (e["ts"], -e["dur"]),
    )
    tasks = _outermost_tasks(mine)
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
    out.task_ms = [_cpu(t) / 1000 for t in window]
    out.cpu_ms = sum(out.task_ms)
    walk(_inside(mine, window), frame_ends, out)
    for thread, name in names.items():
        if thread[0] == main[0] and name.startswith(WORKER_THREAD):
            work = sorted(
                (e for e in events if (e.get("pid"), e.get("tid")) == thread),
                key=lambda e: e.get("ts", 0),
            )
            out.worker_cpu_ms += sum(
                _cpu(t) / 1000
                for t in _outermost_tasks([e for e in work if e.get("ph") == "X"])
                if t0 <= t["ts"] <= t1
            )
    return out


def _inside(mine: list[Event], window: list[Event]) -> list[Event]:
    """The events of ``mine`` (sorted by start) that run inside one of the ``window`` tasks
    (themselves included)."""
    out: list[Event] = []
    i = 0
    for task in window:
        end = task["ts"] + task["dur"]
        while i < len(mine) and mine[i]["ts"] < task["ts"]:
            i += 1
        while i < len(mine) and mine[i]["ts"] <= end:
            out.append(mine[i])
            i += 1
    return out


def walk(inside: list[Event], frame_ends: list[float], out: FrameStats) -> None:
    """Self time by kind and the per-frame counts into ``out``, from the window's events
    walked as a stack (ordered by start, the longer first); ``frame_ends`` are the frames'
    ends (sorted), and ``out``'s per-frame lists must have one entry per frame. Used for
    Firefox's profiles too (``gecko_frames``)."""
    # each open event: [end, kind, in script (itself or an ancestor), name, children's CPU,
    # its frame, its CPU]
    stack: list[list[Any]] = []

    def close(entry: list[Any]) -> None:
        _, kind, in_script, name, children, frame, cpu = entry
        self_us = max(0.0, cpu - children)
        out.by_kind[kind] += self_us / 1000
        out.self_by_name[name] += self_us / 1000
        if kind in RENDER_KINDS:
            if not in_script:
                out.render_unforced_ms += self_us / 1000
            if frame < len(frame_ends):
                out.frame_render_ms[frame] += self_us / 1000

    for e in inside:
        while stack and stack[-1][0] <= e["ts"]:
            close(stack.pop())
        name = e["name"]
        parent = stack[-1] if stack else None
        own = kind_of(name)
        kind = own or (parent[1] if parent else "other")
        in_script = bool(parent and parent[2])
        frame = bisect.bisect_right(frame_ends, e["ts"])
        nested_same = any(s[3] == name for s in stack)
        if name == "Layout" and not nested_same:
            out.layouts += 1
            if frame < len(frame_ends):
                out.frame_layouts[frame] += 1
            if in_script:
                out.forced_layouts += 1
                out.forced_stacks[_stack_signature(e.get("args", {}).get("beginData", {}))] += 1
        elif name == "UpdateLayoutTree" and not nested_same:
            out.style_recalcs += 1
            out.forced_styles += int(in_script)
        elif name == "Paint":
            out.paint_events += 1
            if not nested_same:
                out.paints += 1
                if frame < len(frame_ends):
                    out.frame_paints[frame] += 1
        elif name == "ParseHTML":
            out.parse_html += 1
        elif name == INTERSECTIONS:
            out.intersections += 1
        cpu = _cpu(e)
        if parent is not None:
            parent[4] += cpu
        stack.append(
            [e["ts"] + e["dur"], kind, in_script or own == "script", name, 0.0, frame, cpu]
        )
    while stack:
        close(stack.pop())
