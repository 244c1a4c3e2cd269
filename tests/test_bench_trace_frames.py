"""bench/trace_frames.py on a small hand-made trace: which thread, which window, self time by
kind, frames, forced layouts, paints, tasks. Every figure below is worked out by hand from
the events, so a change in how the instrument counts shows up here, not as a quietly
different bench table."""

from __future__ import annotations

from typing import Any

import pytest

from bench.trace_frames import analyze
from bench.trace_reader import complete_events, keep_event, kind_of

PAGE, OTHER = 10, 20  # the page's renderer process, and another one (about:blank)
MAIN, WORKER = 10, 11


def meta(pid: int, tid: int, name: str) -> dict[str, Any]:
    return {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name}}


def x(name: str, ts: float, dur: float, tdur: float | None = None, **kw: Any) -> dict[str, Any]:
    """A complete event on the page's main thread (``tdur`` = ``dur`` unless given)."""
    e = {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": PAGE, "tid": MAIN}
    e["tdur"] = dur if tdur is None else tdur
    e.update(kw)
    return e


def instant(name: str, ts: float, cat: str = "disabled-by-default-devtools.timeline.frame") -> Any:
    return {"ph": "I", "name": name, "ts": ts, "pid": PAGE, "tid": MAIN, "cat": cat, "s": "t"}


def mark(name: str, ts: float) -> Any:
    return instant(name, ts, cat="blink.user_timing")


def stack(fn: str) -> dict[str, Any]:
    return {"beginData": {"stackTrace": [{"functionName": fn, "url": "http://h/view.js"}]}}


def trace() -> list[dict[str, Any]]:
    """Two frames and a trailing task inside the window [1000, 5000], a task before it.

    - t=500: a task before the send mark (outside the window)
    - t=1000: the send mark
    - t=1100: a network task, 300 us CPU: a microtask (200) forcing a layout (50) and a style
      recalc (30) from script. Frame 1 starts after it.
    - t=2000: frame 1's update task, 1000 us wall / 900 us CPU: FireAnimationFrame (300,
      with a FunctionCall of 250 that forces a Layout of 100), then style 80, layout 120,
      PrePaint 40, Paint 150 (with a nested Paint of 60), Layerize 30, Commit 100 wall / 20
      CPU, an IntersectionObserver computation of 10, a MinorGC of 25.
    - t=3500: frame 2's update task, 200 us: Paint 50, a nested RunTask of 40 with a
      FunctionCall of 30 inside it.
    - t=4500: a task after the last frame, 100 us: ParseHTML 60 inside a FunctionCall 80.
    - t=5000: the end mark; t=200000: a frame too late to be the final one (over 100 ms).
    """
    return [
        meta(PAGE, MAIN, "CrRendererMain"),
        meta(PAGE, WORKER, "DedicatedWorker thread"),
        meta(OTHER, OTHER, "CrRendererMain"),
        # another renderer, busier: must not be taken for the page's
        {"ph": "X", "name": "RunTask", "ts": 1200, "dur": 9000, "tdur": 9000, "pid": OTHER,
         "tid": OTHER},
        x("RunTask", 500, 100),
        mark("send", 1000),
        x("RunTask", 1100, 300),
        x("RunMicrotasks", 1110, 200),
        x("Layout", 1150, 50, args=stack("measure")),
        x("UpdateLayoutTree", 1210, 30),
        x("RunTask", 2000, 1000, 900),
        instant("BeginMainThreadFrame", 2010),
        x("FireAnimationFrame", 2020, 300),
        x("FunctionCall", 2030, 250),
        x("Layout", 2100, 100, args=stack("follow")),
        x("UpdateLayoutTree", 2400, 80),
        x("Layout", 2480, 120),
        x("PrePaint", 2600, 40),
        x("Paint", 2640, 150),
        x("Paint", 2650, 60),
        x("Layerize", 2790, 30),
        x("Commit", 2820, 100, 20),
        x(
            "IntersectionObserverController::computeIntersections", 2925, 10,
            cat="blink,devtools.timeline",
        ),
        x("MinorGC", 2940, 25),
        x("RunTask", 3500, 200),
        instant("BeginMainThreadFrame", 3505),
        x("Paint", 3510, 50),
        x("RunTask", 3600, 40),
        x("FunctionCall", 3605, 30),
        x("RunTask", 4500, 100),
        x("FunctionCall", 4510, 80),
        x("ParseHTML", 4520, 60),
        mark("done", 5000),
        x("RunTask", 200_000, 50),
        instant("BeginMainThreadFrame", 200_001),
        # the worker: 700 us in the window, 100 before it
        {"ph": "X", "name": "RunTask", "ts": 800, "dur": 100, "tdur": 100, "pid": PAGE,
         "tid": WORKER},
        {"ph": "X", "name": "RunTask", "ts": 1500, "dur": 700, "tdur": 700, "pid": PAGE,
         "tid": WORKER},
    ]  # fmt: skip


def test_the_window_tasks_and_cpu() -> None:
    s = analyze(trace(), "send", "done")
    assert s.tasks == 4  # the nested RunTask is part of frame 2's task
    assert s.task_ms == pytest.approx([0.3, 0.9, 0.2, 0.1])
    assert s.cpu_ms == pytest.approx(1.5)
    assert s.longest_task_ms == pytest.approx(0.9)
    assert s.long_tasks(0.25) == 2
    assert s.window_ms == pytest.approx(4.0)
    assert s.worker_cpu_ms == pytest.approx(0.7)


def test_self_time_by_kind_adds_up_to_the_cpu() -> None:
    s = analyze(trace(), "send", "done")
    assert s.by_kind["layout"] == pytest.approx((50 + 100 + 120) / 1000)
    assert s.by_kind["style"] == pytest.approx((30 + 80) / 1000)
    # PrePaint 40, Paint 150 (self 90 + nested 60), Layerize 30, Commit 20 CPU; Paint 50
    assert s.by_kind["paint"] == pytest.approx((40 + 150 + 30 + 20 + 50) / 1000)
    assert s.by_kind["gc"] == pytest.approx(0.025)
    # microtask 200 - 80; FireAnimationFrame 50 + FunctionCall 150; nested FunctionCall 30;
    # FunctionCall 20 + ParseHTML 60
    assert s.by_kind["script"] == pytest.approx((120 + 50 + 150 + 30 + 20 + 60) / 1000)
    assert sum(s.by_kind.values()) == pytest.approx(s.cpu_ms)
    assert s.render_ms == pytest.approx(s.by_kind["style"] + s.by_kind["layout"] + 0.29)
    assert s.self_by_name["ParseHTML"] == pytest.approx(0.06)
    assert s.self_by_name["IntersectionObserverController::computeIntersections"] == (
        pytest.approx(0.01)
    )


def test_frames_take_the_tasks_since_the_previous_frame() -> None:
    s = analyze(trace(), "send", "done")
    assert s.frames == 2  # the frame at 200000 is too late to be the final one
    # frame 1: the network task (layout 50, style 30) and its own update
    assert s.frame_render_ms == pytest.approx([(80 + 300 + 240) / 1000, 0.05])
    assert s.frame_layouts == [3, 0]
    assert s.thrashing_frames == 1
    assert s.frame_paints == [1, 1]
    assert s.frame_median_ms == pytest.approx((0.62 + 0.05) / 2)
    assert s.frame_worst_ms == pytest.approx(0.62)
    assert s.per_frame(s.tasks) == pytest.approx(2.0)


def test_layouts_forced_by_script_and_their_stacks() -> None:
    s = analyze(trace(), "send", "done")
    assert (s.layouts, s.forced_layouts) == (3, 2)
    assert (s.style_recalcs, s.forced_styles) == (2, 1)
    assert sorted(s.forced_stacks) == ["follow (view.js:0)", "measure (view.js:0)"]
    # rendering outside script: all of it but the forced layouts (50, 100) and style (30)
    assert s.render_unforced_ms == pytest.approx(s.render_ms - 0.18)
    assert (s.paints, s.paint_events) == (2, 3)
    assert (s.parse_html, s.intersections) == (1, 1)


def test_a_late_final_frame_extends_the_window() -> None:
    """A page that sets data-state in a frame callback paints the final state after the end
    mark, in the same frame: that frame is in the window."""
    events = [*trace(), instant("BeginMainThreadFrame", 5050), x("RunTask", 5040, 500)]
    events.append(x("Layout", 5100, 300))
    s = analyze(events, "send", "done")
    assert s.frames == 3
    assert s.tasks == 5
    assert s.frame_render_ms[-1] == pytest.approx(0.3)
    assert s.window_ms == pytest.approx((5540 - 1000) / 1000)


def test_the_page_renderer_is_the_one_the_marks_are_in() -> None:
    """A busier renderer elsewhere (9 ms in the window) is never taken for the page's."""
    s = analyze(trace(), "send", "done")
    assert s.cpu_ms == pytest.approx(1.5)
    with pytest.raises(ValueError, match="missing"):
        analyze(trace(), "send", "missing")


def test_without_marks_on_a_main_thread_the_busiest_is_the_page() -> None:
    def elsewhere(e: dict[str, Any]) -> dict[str, Any]:
        return {**e, "pid": 1, "tid": 1} if "user_timing" in str(e.get("cat")) else e

    events = [elsewhere(e) for e in trace()]
    assert analyze(events, "send", "done").cpu_ms == pytest.approx(9.0)


def test_begin_end_pairs_become_complete_events() -> None:
    b = {"ph": "B", "name": "Layout", "ts": 100, "tts": 50, "pid": 1, "tid": 1}
    b["args"] = {"beginData": {"dirtyObjects": 3}}
    inner_b = {"ph": "B", "name": "ParseHTML", "ts": 110, "tts": 55, "pid": 1, "tid": 1}
    inner_e = {"ph": "E", "name": "ParseHTML", "ts": 120, "tts": 60, "pid": 1, "tid": 1}
    e = {"ph": "E", "name": "Layout", "ts": 160, "tts": 90, "pid": 1, "tid": 1}
    e["args"] = {"endData": {"root": 1}}
    stray = {"ph": "E", "name": "Paint", "ts": 5, "pid": 1, "tid": 1}
    out = complete_events([e, inner_e, b, inner_b, stray])
    by_name = {o["name"]: o for o in out}
    assert by_name["Layout"]["dur"] == 60 and by_name["Layout"]["tdur"] == 40
    assert by_name["Layout"]["args"] == {"beginData": {"dirtyObjects": 3}, "endData": {"root": 1}}
    assert by_name["ParseHTML"]["dur"] == 10 and by_name["ParseHTML"]["tdur"] == 5
    assert len(out) == 2


def test_kinds_and_what_a_collector_may_drop() -> None:
    assert kind_of("V8.GC_SCAVENGER") == "gc" and kind_of("ParseHTML") == "script"
    assert kind_of("ScrollLayer") is None  # takes its parent's kind
    assert not keep_event({"ph": "X", "name": "RasterTask"})
    assert keep_event({"ph": "I", "name": "x", "cat": "blink.user_timing"})
    assert keep_event({"ph": "X", "name": "Commit"})


def test_dropping_unknown_events_changes_no_figure() -> None:
    """keep_event's promise: the unknown events' self time lands in the same kind."""
    events = trace()
    events += [x("ScrollLayer", 2050, 20), x("HitTest", 2830, 5), x("Mojo", 1105, 2)]
    full = analyze(events, "send", "done")
    kept = analyze([e for e in events if keep_event(e)], "send", "done")
    assert full.by_kind == pytest.approx(kept.by_kind)
    assert full.frame_render_ms == pytest.approx(kept.frame_render_ms)
    assert full.by_kind["paint"] == pytest.approx(0.29)  # HitTest in Commit: paint chain
