"""bench/trace_reader.py on a small hand-made trace: the one classification every bench uses
(the cases the render and phone benches used to count differently), the page's main thread,
its tasks' CPU and their self time by kind. Every figure is worked out by hand from the
events below."""

from __future__ import annotations

from typing import Any

import pytest

from bench.trace_reader import KINDS, Reader, keep_event, kind_of

PAGE, OTHER = 10, 20  # the page's renderer, and another one (busier by wall time)
MAIN, WORKER = 10, 11


def meta(pid: int, tid: int, name: str) -> dict[str, Any]:
    return {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name}}


def x(name: str, ts: float, dur: float, tdur: float | None = None, tid: int = MAIN) -> Any:
    e = {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": PAGE, "tid": tid}
    e["tdur"] = dur if tdur is None else tdur
    return e


def trace() -> list[dict[str, Any]]:
    """Three tasks on the page's main thread (all times in us, CPU = wall unless said).

    - t=0, 60,000: a FunctionCall of 30,000 holding a V8 GC (5,000), a stylesheet parse
      (4,000), a forced Layout (6,000) and an IntersectionObserver computation (2,000); a
      top-level v8.compile (3,000); style 4,000; a Paint of 10,000 with a nested Paint of
      4,000; a Commit of 5,000 wall, 2,000 CPU; the task's own 11,000.
    - t=70,000, 20,000: a nested task of 5,000 holding a FunctionCall of 4,000.
    - t=100,000, 5,000: nothing inside.
    - the page's worker: 30,000 wall, 25,000 CPU; a worker of the other renderer: 7,000.
    - the other renderer: one task of 90,000 wall but 1,000 CPU (about:blank on a loaded
      machine): busier by wall time, not by CPU.
    """
    return [
        meta(PAGE, MAIN, "CrRendererMain"),
        meta(PAGE, WORKER, "DedicatedWorker thread"),
        meta(OTHER, OTHER, "CrRendererMain"),
        meta(OTHER, 21, "DedicatedWorker thread"),
        {**x("RunTask", 0, 90_000, 1_000), "pid": OTHER, "tid": OTHER},
        {**x("RunTask", 0, 7_000), "pid": OTHER, "tid": 21},
        x("RunTask", 0, 60_000),
        x("FunctionCall", 1_000, 30_000),
        x("V8.GCCompactor", 2_000, 5_000),
        x("ParseAuthorStyleSheet", 8_000, 4_000),
        x("Layout", 13_000, 6_000),
        x("IntersectionObserverController::computeIntersections", 20_000, 2_000),
        x("v8.compile", 32_000, 3_000),
        x("UpdateLayoutTree", 36_000, 4_000),
        x("Paint", 40_000, 10_000),
        x("Paint", 41_000, 4_000),
        x("Commit", 51_000, 5_000, 2_000),
        x("RunTask", 70_000, 20_000),
        x("RunTask", 71_000, 5_000),
        x("FunctionCall", 71_500, 4_000),
        {"ph": "I", "name": "go", "ts": 65_000, "pid": PAGE, "tid": MAIN,
         "cat": "blink.user_timing"},
        x("RunTask", 100_000, 5_000),
        x("RunTask", 0, 30_000, 25_000, tid=WORKER),
    ]  # fmt: skip


# the first task's self time by kind, ms
FIRST = {
    "script": 13 + 3,  # FunctionCall 30 - (5 + 4 + 6 + 2); v8.compile 3
    "style": 4 + 4,  # the stylesheet parse, UpdateLayoutTree
    "layout": 6,
    "paint": 6 + 4 + 2,  # Paint 10 - 4, the nested Paint, Commit's CPU
    "gc": 5,
    "other": 2 + 11,  # the intersections, the task's own
}


def test_where_the_two_old_tables_disagreed() -> None:
    assert kind_of("ParseAuthorStyleSheet") == "style"
    assert kind_of("V8.GCCompactor") == kind_of("BlinkGC.AtomicPhase") == "gc"
    assert kind_of("CppGC.IncrementalSweep") == kind_of("ThreadState::performIdleLazySweep")
    assert kind_of("IntersectionObserverController::computeIntersections") == "other"
    assert kind_of("v8.produceCache") == kind_of("V8.CompileCode") == "script"
    assert kind_of("ParseHTML") == kind_of("EvaluateScript") == kind_of("TimerFire") == "script"
    assert kind_of("RecalculateStyles") == "style" and kind_of("Layout") == "layout"
    paint_chain = ("PrePaint", "Paint", "PaintImage", "Layerize", "UpdateLayer", "Commit")
    assert {kind_of(n) for n in paint_chain} == {"paint"}
    assert kind_of("RunTask") is None and kind_of("V8.Execute") is None  # the parent's kind


def test_the_page_main_thread_is_the_busiest_by_cpu_or_the_marked_one() -> None:
    events = trace()
    read = Reader(events)
    assert read.main_thread() == (PAGE, MAIN)
    elsewhere = {"name": "go", "pid": OTHER, "tid": OTHER, "cat": "blink.user_timing"}
    assert read.main_thread(elsewhere) == (OTHER, OTHER)
    assert read.workers((PAGE, MAIN)) == [(PAGE, WORKER)]
    with pytest.raises(ValueError, match="CrRendererMain"):
        Reader([e for e in events if e.get("ph") != "M"]).main_thread()


def test_long_tasks_self_time_by_kind() -> None:
    read = Reader(trace())
    long = read.long_tasks()
    assert long.tasks == [60.0]
    assert long.by_kind == pytest.approx({k: float(v) for k, v in FIRST.items()})
    assert sum(long.by_kind.values()) == pytest.approx(long.total)
    # from 12.5 ms: the second task too, its nested task counted once, inside it
    phone = read.long_tasks(long_us=12_500)
    assert phone.tasks == [60.0, 20.0]
    assert phone.by_kind["script"] == pytest.approx(FIRST["script"] + 4)
    assert phone.by_kind["other"] == pytest.approx(FIRST["other"] + 15 + 1)
    assert set(phone.by_kind) == set(KINDS)
    assert read.long_tasks(since_us=65_000, long_us=12_500).tasks == [20.0]


def test_thread_cpu_counts_nested_tasks_once_and_the_page_workers_only() -> None:
    read = Reader(trace())
    assert read.thread_cpu() == pytest.approx((85.0, 60.0, 25.0))
    assert read.thread_cpu(since_us=65_000) == pytest.approx((25.0, 20.0, 0.0))
    assert read.thread_cpu(until_us=80_000) == pytest.approx((80.0, 60.0, 25.0))


def test_dropping_what_keep_event_drops_changes_no_figure() -> None:
    events = trace()
    events += [x("HitTest", 52_000, 1_000), x("ScrollLayer", 72_000, 500)]
    full = Reader(events).long_tasks(long_us=12_500)
    kept = Reader([e for e in events if keep_event(e)]).long_tasks(long_us=12_500)
    assert len(kept.by_kind) == len(full.by_kind)
    assert kept.by_kind == pytest.approx(full.by_kind)
    assert full.by_kind["paint"] == pytest.approx(FIRST["paint"])  # HitTest in Commit: paint
