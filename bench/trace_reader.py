"""The one reader of Chromium ``devtools.timeline`` traces that every bench uses (issue #45):
which thread is the page's, its tasks, their thread CPU, and their self time by kind.

Why one: ``trace_frames`` (the render bench) and ``trace_split`` (the phone and worker
benches) each kept a table of event kinds and their own way of finding the page's thread,
and they disagreed, so the same trace gave two different splits. Everything below is what
both now read.

* **Thread CPU**: every figure is thread CPU time (``tdur``; an event without it counts its
  ``dur``), never wall time: on a machine shared with other work a task's wall time is often
  several times its CPU time, and CPU throttling's spin counts in both, so CPU time is what
  an idle machine at that rate would take.
* **The page's main thread** (``main_thread``): the ``CrRendererMain`` thread a
  ``performance.mark`` was recorded on, if one is given (marks run on the page's main
  thread); else the ``CrRendererMain`` with the most CPU in its tasks (the page's renderer,
  not about:blank's). Its **workers** are the ``DedicatedWorker thread``\\ s of the same
  process (where the page's Python runs in worker mode): their CPU is never main-thread CPU.
* **Tasks**: outermost ``RunTask`` events. A task can run nested inside another (a nested
  run loop): it is part of its outer task, counted once.
* **Self time by kind** (``spans``): a thread's complete events are walked as a stack; an
  event's self time is its CPU minus its children's and goes to its kind (``kind_of``); an
  event of no known kind takes its parent's, and a task's own self time (and a top-level
  unknown event's) is "other". So the kinds of a task add up to its CPU, and a collector may
  drop the events of no known kind as they arrive (``keep_event``) without changing a figure.

The kinds (Chromium's trace event names):

* **script**: ``FunctionCall``, ``EvaluateScript``, ``TimerFire``, ``EventDispatch``,
  ``FireAnimationFrame``, ``FireIdleCallback``, ``RunMicrotasks``, ``HandlePostMessage``,
  ``V8.CompileCode`` and every lowercase ``v8.*`` (V8 compiling or running the page's code:
  ``v8.run``, ``v8.callFunction``, ``v8.compile``, ``v8.evaluateModule``,
  ``v8.wasm.compileConsume``, ...). Also
  ``ParseHTML``, which DevTools calls loading: it is the HTML parser run synchronously by a
  script call (``innerHTML``, ``insertAdjacentHTML``, ``createContextualFragment``), while
  the same DOM built with ``createElement``/``append`` is plain ``FunctionCall`` self time;
  counting it as script keeps both ways of building the DOM comparable.
* **style**: ``UpdateLayoutTree`` (``RecalculateStyles``, its older name) and
  ``ParseAuthorStyleSheet``.
* **layout**: ``Layout``.
* **paint** (the paint chain): ``PrePaint``, ``Paint``, ``PaintImage``, ``Layerize``,
  ``UpdateLayer``, ``UpdateLayerTree``, ``CompositeLayers``, ``Commit``.
* **gc**: ``MinorGC``, ``MajorGC`` and every ``V8.GC*``, ``BlinkGC.*``, ``CppGC.*``,
  ``ThreadState::*`` event.
* **other**: ``IntersectionObserverController::computeIntersections`` (DevTools calls it
  rendering): neither script (the observers' callbacks are ``FunctionCall``\\ s) nor style,
  layout or paint; the render bench reports its count and time apart. "Rendering" is style +
  layout + paint.

Where the two old tables disagreed, and what was decided:

* ``ParseAuthorStyleSheet``: style (``trace_split``) against its parent's kind
  (``trace_frames``, which did not list it). **Style**: it is the style engine's work, its
  cost grows with the stylesheet, not with the script that inserted it.
* GC: ``trace_split`` knew seven GC names, so any other (``V8.GCCompactor``,
  ``V8.GC_MC_*``, ``BlinkGC.*``, ...) counted as its parent's kind, mostly script.
  **Every GC event is gc**, by prefix.
* ``computeIntersections``: its parent's kind (``trace_split``) against "other"
  (``trace_frames``). **Other**, as above.
* Lowercase ``v8.*`` events not listed in either table took their parent's kind: **script**
  now, which changes only a top-level one (it was "other"): at boot, Pyodide's wasm
  compiled from the code cache (``v8.wasm.compileConsume``) and ``v8.produceModuleCache``.
* The main thread: ``trace_split`` and the worker bench took the busiest ``CrRendererMain``
  by wall time, the worker bench counting nested tasks twice; ``trace_frames`` the marked
  thread, else the renderer ``TracingStartedInBrowser`` named, else the busiest. **The
  marked thread, else the busiest by CPU, nested tasks once** (a navigation can move the
  page to another renderer than the one named when tracing started).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "KINDS",
    "RENDER_KINDS",
    "LongTasks",
    "Reader",
    "Span",
    "complete_events",
    "cpu_us",
    "find_mark",
    "keep_event",
    "kind_of",
    "spans",
    "within",
]

Event = dict[str, Any]
Thread = tuple[int, int]

KINDS = ("script", "style", "layout", "paint", "gc", "other")
RENDER_KINDS = ("style", "layout", "paint")
MAIN_THREAD = "CrRendererMain"
WORKER = "DedicatedWorker thread"
TASK = "RunTask"
FRAME = "BeginMainThreadFrame"
INTERSECTIONS = "IntersectionObserverController::computeIntersections"

KIND_OF = {
    "FunctionCall": "script",
    "EvaluateScript": "script",
    "TimerFire": "script",
    "EventDispatch": "script",
    "FireAnimationFrame": "script",
    "FireIdleCallback": "script",
    "RunMicrotasks": "script",
    "HandlePostMessage": "script",
    "V8.CompileCode": "script",
    "ParseHTML": "script",
    "UpdateLayoutTree": "style",
    "RecalculateStyles": "style",
    "ParseAuthorStyleSheet": "style",
    "Layout": "layout",
    "PrePaint": "paint",
    "Paint": "paint",
    "PaintImage": "paint",
    "Layerize": "paint",
    "UpdateLayer": "paint",
    "UpdateLayerTree": "paint",
    "CompositeLayers": "paint",
    "Commit": "paint",
    "MinorGC": "gc",
    "MajorGC": "gc",
    INTERSECTIONS: "other",
}
PREFIX_KINDS = (
    ("v8.", "script"),
    ("V8.GC", "gc"),
    ("BlinkGC.", "gc"),
    ("CppGC.", "gc"),
    ("ThreadState::", "gc"),
)


def kind_of(name: str) -> str | None:
    """The kind an event of this name is (None: it takes its parent's)."""
    kind = KIND_OF.get(name)
    if kind is None:
        kind = next((k for prefix, k in PREFIX_KINDS if name.startswith(prefix)), None)
    return kind


def keep_event(e: Event) -> bool:
    """Whether a reader here needs this event: a collector may drop the rest as they arrive
    (a 38 s stream is hundreds of thousands of events). Dropping an event of no known kind
    changes nothing: its self time goes to its parent, which is the kind it would take."""
    name = str(e.get("name", ""))
    return (
        e.get("ph") == "M"
        or name in (TASK, FRAME)
        or kind_of(name) is not None
        or "user_timing" in str(e.get("cat", ""))
    )


def cpu_us(e: Event) -> float:
    """An event's thread CPU time (its wall time where the trace has no ``tdur``)."""
    return float(e["tdur"] if "tdur" in e else e.get("dur", 0))


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


def thread_names(events: Iterable[Event]) -> dict[Thread, str]:
    return {
        (e["pid"], e["tid"]): str(e.get("args", {}).get("name", ""))
        for e in events
        if e.get("ph") == "M" and e.get("name") == "thread_name"
    }


def outermost_tasks(events: list[Event]) -> list[Event]:
    """The tasks of one thread's ``events`` (ordered as ``Reader.threads``) that run inside
    no other task."""
    out: list[Event] = []
    end = -1.0
    for e in events:
        if e["name"] == TASK and e["ts"] >= end:
            out.append(e)
            end = e["ts"] + e["dur"]
    return out


def within(events: list[Event], tasks: list[Event]) -> list[Event]:
    """The ``events`` (sorted by start) that run inside one of ``tasks`` (sorted by start,
    themselves included)."""
    out: list[Event] = []
    i = 0
    for task in tasks:
        end = task["ts"] + task["dur"]
        while i < len(events) and events[i]["ts"] < task["ts"]:
            i += 1
        while i < len(events) and events[i]["ts"] <= end:
            out.append(events[i])
            i += 1
    return out


@dataclass(frozen=True)
class Span:
    """One event's self time, as ``spans`` found it."""

    event: Event
    kind: str  # its own kind, else its parent's
    self_us: float  # its CPU minus its children's
    in_script: bool  # inside an event whose own kind is script (a forced layout, say)
    nested_same: bool  # inside an event of the same name (a Paint's nested Paints)


def spans(events: list[Event]) -> Iterator[Span]:
    """Each event's self time and kind, from one thread's ``events`` walked as a stack
    (ordered as ``Reader.threads``: by start, an outer event before those it holds); yielded
    as each event closes."""
    # each open event: itself, its end, its kind, whether it or an ancestor is script, and
    # its children's CPU (a one-item list, added to as they come)
    stack: list[tuple[Event, float, str, bool, list[float]]] = []

    def close() -> Span:
        e, _, kind, _, children = stack.pop()
        in_script = bool(stack and stack[-1][3])
        nested = any(s[0]["name"] == e["name"] for s in stack)
        return Span(e, kind, max(0.0, cpu_us(e) - children[0]), in_script, nested)

    for e in events:
        while stack and stack[-1][1] <= e["ts"]:
            yield close()
        parent = stack[-1] if stack else None
        own = kind_of(e["name"])
        if parent is not None:
            parent[4][0] += cpu_us(e)
        kind = own or (parent[2] if parent else "other")
        script = own == "script" or bool(parent and parent[3])
        stack.append((e, e["ts"] + e["dur"], kind, script, [0.0]))
    while stack:
        yield close()


@dataclass
class LongTasks:
    """The long tasks of a window and their CPU by kind (milliseconds)."""

    tasks: list[float] = field(default_factory=list)
    by_kind: dict[str, float] = field(default_factory=lambda: dict.fromkeys(KINDS, 0.0))

    @property
    def total(self) -> float:
        return sum(self.tasks)


class Reader:
    """One trace, its complete events split by thread once (a phone bench's trace is
    hundreds of thousands of events)."""

    def __init__(self, events: list[Event]) -> None:
        self.names = thread_names(events)
        self.threads: dict[Thread, list[Event]] = defaultdict(list)
        for e in complete_events(events):
            self.threads[e["pid"], e["tid"]].append(e)
        for mine in self.threads.values():
            mine.sort(key=lambda e: (e["ts"], -e["dur"]))

    def tasks(self, thread: Thread) -> list[Event]:
        return outermost_tasks(self.threads.get(thread, []))

    def main_thread(self, mark: Event | None = None) -> Thread:
        """The page's main thread (see the module docstring). Raises ValueError when the
        trace has no renderer main thread with tasks."""
        mains = [t for t, n in self.names.items() if n == MAIN_THREAD]
        if mark is not None and (mark["pid"], mark["tid"]) in mains:
            return int(mark["pid"]), int(mark["tid"])
        busy = {t: sum(map(cpu_us, self.tasks(t))) for t in mains}
        busy = {t: us for t, us in busy.items() if us}
        if not busy:
            raise ValueError(f"no renderer main thread ({MAIN_THREAD}) with tasks in the trace")
        return max(busy, key=busy.__getitem__)

    def workers(self, main: Thread) -> list[Thread]:
        """The dedicated workers of the main thread's renderer."""
        return [t for t, n in self.names.items() if t[0] == main[0] and n.startswith(WORKER)]

    def long_tasks(
        self, since_us: float = 0.0, long_us: float = 50_000, mark: Event | None = None
    ) -> LongTasks:
        """The page's main-thread tasks (``mark``: one recorded on it) from ``since_us``
        (trace clock) whose CPU is ``long_us`` or more (50 ms; 12,500 at 1x is what a phone four times slower feels as
        50 ms), each split by kind: a layout forced by script counts as layout, a GC inside
        a frame callback as GC, and the parts add up to the tasks' CPU."""
        out = LongTasks()
        try:
            main = self.main_thread(mark)
        except ValueError:
            return out
        tasks = [t for t in self.tasks(main) if t["ts"] >= since_us and cpu_us(t) >= long_us]
        out.tasks = [cpu_us(t) / 1000 for t in tasks]
        for span in spans(within(self.threads[main], tasks)):
            out.by_kind[span.kind] += span.self_us / 1000
        return out

    def thread_cpu(
        self, since_us: float = 0.0, until_us: float = math.inf, mark: Event | None = None
    ) -> tuple[float, float, float]:
        """Milliseconds of CPU in the tasks that start from ``since_us`` to ``until_us`` on
        the page's main thread (``mark``: one recorded on it), its longest such task, and the
        CPU of its renderer's dedicated workers (where the page's Python runs in worker
        mode)."""
        try:
            main = self.main_thread(mark)
        except ValueError:
            return 0.0, 0.0, 0.0

        def task_ms(thread: Thread) -> list[float]:
            return [cpu_us(t) / 1000 for t in self.tasks(thread) if since_us <= t["ts"] <= until_us]

        mine = task_ms(main)
        return sum(mine), max(mine, default=0.0), sum(sum(task_ms(w)) for w in self.workers(main))
