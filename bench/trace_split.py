"""Where a page's long tasks spend their time, from a Chromium ``devtools.timeline`` trace.

On the renderer's main thread, each ``RunTask`` of 50 ms or more is split by what ran inside
it (by its wall time, ``dur``, as the Long Tasks API sees it, or by its thread CPU time,
``tdur``: on a machine shared with other work the wall time of a task is often many times its
CPU time, while CPU throttling's spin is counted in both, so ``tdur`` is what an idle machine
at that throttling rate would take): every traced event's *self* time (its duration minus its children's) goes to its kind
(script, style, layout, paint, GC), an event of no known kind counts for its nearest known
ancestor, and what no event covers is "other". So a layout forced by script counts as layout,
a GC inside a frame callback as GC, and the parts add up to the long tasks' total.

Also kept, for finding what makes paints expensive: each ``Paint`` event inside a long task
(duration, layer, clip rectangle's area).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

__all__ = ["KINDS", "Split", "mark_ts", "split_long_tasks"]

LONG_US = 50_000
KINDS = ("script", "style", "layout", "paint", "gc", "other")
KIND_OF = {
    "FunctionCall": "script",
    "FireAnimationFrame": "script",
    "TimerFire": "script",
    "EventDispatch": "script",
    "EvaluateScript": "script",
    "v8.evaluateModule": "script",
    "v8.compile": "script",
    "v8.compileModule": "script",
    "V8.CompileCode": "script",
    "RunMicrotasks": "script",
    "FireIdleCallback": "script",
    "HandlePostMessage": "script",
    "ParseHTML": "script",
    "v8.run": "script",
    "v8.callFunction": "script",
    "UpdateLayoutTree": "style",
    "RecalculateStyles": "style",
    "ParseAuthorStyleSheet": "style",
    "Layout": "layout",
    "UpdateLayer": "paint",
    "UpdateLayerTree": "paint",
    "PrePaint": "paint",
    "Paint": "paint",
    "PaintImage": "paint",
    "Layerize": "paint",
    "CompositeLayers": "paint",
    "Commit": "paint",
    "MinorGC": "gc",
    "MajorGC": "gc",
    "BlinkGC.AtomicPhase": "gc",
    "ThreadState::performIdleLazySweep": "gc",
    "V8.GCScavenger": "gc",
    "V8.GCFinalizeMC": "gc",
    "V8.GCIncrementalMarking": "gc",
    "V8.GC_MC_BACKGROUND_MARKING": "gc",
    "CppGC.IncrementalSweep": "gc",
}


@dataclass
class Split:
    """The long tasks of one trace and their time by kind (milliseconds)."""

    tasks: list[float] = field(default_factory=list)
    by_kind: dict[str, float] = field(default_factory=lambda: dict.fromkeys(KINDS, 0.0))
    paints: list[tuple[float, int, float]] = field(default_factory=list)  # ms, layer, clip px
    top_names: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    @property
    def total(self) -> float:
        return sum(self.tasks)

    def share(self, kind: str) -> float:
        return self.by_kind[kind] / self.total if self.total else 0.0


def _main_thread(events: list[dict[str, Any]]) -> tuple[int, int] | None:
    """The (pid, tid) of the busiest ``CrRendererMain`` thread (the page's, not about:blank's)."""
    mains = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("ph") == "M"
        and e.get("name") == "thread_name"
        and e.get("args", {}).get("name") == "CrRendererMain"
    }
    busy: dict[tuple[int, int], float] = defaultdict(float)
    for e in events:
        key = (e.get("pid"), e.get("tid"))
        if key in mains and e.get("name") == "RunTask" and e.get("ph") == "X":
            busy[key] += e.get("dur", 0)  # type: ignore[index]
    return max(busy, key=busy.__getitem__) if busy else None


def _clip_area(data: dict[str, Any]) -> float:
    clip = data.get("clip") or []
    if len(clip) < 8:
        return 0.0
    xs, ys = clip[0::2], clip[1::2]
    return float((max(xs) - min(xs)) * (max(ys) - min(ys)))


def split_long_tasks(
    events: list[dict[str, Any]],
    since_us: float = 0.0,
    clock: str = "dur",
    long_us: float = LONG_US,
) -> Split:
    """The long tasks on the page's main thread that start at or after ``since_us`` (trace
    clock), each split by kind (see the module docstring); ``clock`` is ``dur`` (wall time)
    or ``tdur`` (thread CPU time); a task is long from ``long_us`` (12,500 at 1x: 50 ms on a
    phone four times slower)."""
    out = Split()
    main = _main_thread(events)
    if main is None:
        return out
    mine = sorted(
        (
            e
            for e in events
            if (e.get("pid"), e.get("tid")) == main and e.get("ph") == "X" and "dur" in e
        ),
        key=lambda e: (e["ts"], -e["dur"]),
    )
    long_tasks = [
        e
        for e in mine
        if e["name"] == "RunTask" and e.get(clock, 0) >= long_us and e["ts"] >= since_us
    ]
    j = 0
    for task in long_tasks:
        start, end = task["ts"], task["ts"] + task["dur"]
        out.tasks.append(task[clock] / 1000)
        while j < len(mine) and mine[j]["ts"] < start:
            j += 1
        inside = []
        k = j
        while k < len(mine) and mine[k]["ts"] < end:
            e = mine[k]
            if e is not task and e["ts"] + e["dur"] <= end + 1:
                inside.append(e)
            k += 1
        _attribute(task, inside, out, clock)
    return out


def _attribute(task: dict[str, Any], inside: list[dict[str, Any]], out: Split, clock: str) -> None:
    """Self time of each event by kind; the nesting comes from the timestamps (a stack of
    the events still open), an unknown event takes its parent's kind."""
    kinds: list[str] = []
    child_us: list[float] = []
    stack: list[tuple[float, int]] = []  # (end, index into inside)
    top_us = 0.0
    for i, e in enumerate(inside):
        while stack and stack[-1][0] <= e["ts"]:
            stack.pop()
        parent = stack[-1][1] if stack else -1
        kinds.append(KIND_OF.get(e["name"], kinds[parent] if parent >= 0 else "other"))
        child_us.append(0.0)
        took = e.get(clock, 0)
        if parent >= 0:
            child_us[parent] += took
        else:
            top_us += took
            out.top_names[e["name"]] += took / 1000
        stack.append((e["ts"] + e["dur"], i))
        if e["name"] == "Paint":
            data = e.get("args", {}).get("data", {})
            out.paints.append((took / 1000, int(data.get("layerId", -1)), _clip_area(data)))
    for i, e in enumerate(inside):
        out.by_kind[kinds[i]] += max(0.0, e.get(clock, 0) - child_us[i]) / 1000
    out.by_kind["other"] += max(0.0, task[clock] - top_us) / 1000


def thread_cpu(events: list[dict[str, Any]], since_us: float = 0.0) -> tuple[float, float, float]:
    """Milliseconds of CPU since ``since_us`` on the page's main thread (its outermost tasks'
    ``tdur``), the longest of those tasks, and on its renderer's dedicated workers (where the
    page's Python runs in worker mode)."""
    main = _main_thread(events)
    if main is None:
        return 0.0, 0.0, 0.0
    workers = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("ph") == "M"
        and e.get("name") == "thread_name"
        and e.get("pid") == main[0]
        and str(e.get("args", {}).get("name", "")).startswith("DedicatedWorker")
    }
    cpu: dict[tuple[int, int], float] = defaultdict(float)
    longest = 0.0
    ends: dict[tuple[int, int], float] = defaultdict(float)  # the last outermost task's end
    for e in sorted(
        (e for e in events if e.get("name") == "RunTask" and e.get("ph") == "X"),
        key=lambda e: (e["ts"], -e["dur"]),
    ):
        key = (e["pid"], e["tid"])
        if (key != main and key not in workers) or e["ts"] < since_us or e["ts"] < ends[key]:
            continue  # (a task nested in another is part of it)
        ends[key] = e["ts"] + e["dur"]
        took = e.get("tdur", e["dur"])
        cpu[key] += took
        if key == main:
            longest = max(longest, took)
    return cpu[main] / 1000, longest / 1000, sum(cpu[w] for w in workers) / 1000


def mark_ts(events: list[dict[str, Any]], name: str) -> float | None:
    """The trace time of a ``performance.mark(name)`` (``blink.user_timing``), if any."""
    for e in events:
        if e.get("name") == name and "user_timing" in str(e.get("cat", "")):
            return float(e["ts"])
    return None
