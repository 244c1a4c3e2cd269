"""Smooth on a phone-class CPU (issue #28): the page in Debian's Chromium at 1x and with the CPU
throttled 4x (``Emulation.setCPUThrottlingRate``, DevTools' "mid-tier mobile"), in one run:

* **streaming**: ``/demo long``, ``/demo table``, ``/demo code``, a ~56 KB mixed answer at 24
  characters every 16 ms, and a firehose (the same answer in 4 big chunks), each streamed by a
  scripted upstream (``pysse.testing``) through the relay the page is served with, while a
  key is typed every 150 ms;
* **long chats**: a chat of 100 long answers imported, reloaded, opened from the list and
  switched to; when the newest answer was on screen and when all were rendered;
* **boot**, cold (a fresh profile) and warm (the next navigation), keys typed meanwhile;
* **memory** with the 100-answer chat open after a long answer: JS heap after a full GC plus
  the wasm heap (``pysseRuntime._module.HEAP8.length``).

Measured: long tasks twice, as "CPU / wall" in the tables: by **thread CPU time** from a
``devtools.timeline`` trace of every run (a task whose CPU time is 50 ms or more; CPU
throttling's spin counts as CPU time, so this is what an idle machine at that rate would
show, whatever else the machine runs) and by **wall time** (the Long Tasks API, as the issue
asks: on a shared machine the wall time of a task is often several times its CPU time); key
latency (Event Timing, ``durationThreshold: 16``: a key under 16 ms reports nothing; wall
time); the split of the long tasks' CPU time into script / style / layout / paint / GC
(``bench/trace_reader.py``). Medians of ``PYSSE_BENCH_RUNS`` runs (3), sites interleaved in each
run. With ``PYSSE_SITE_BASELINE`` (``build.py bench --only phone --baseline main``) that site
is measured side by side. ``PYSSE_PHONE_PARTS`` (``boot,stream,chats``) and
``PYSSE_PHONE_RATES`` (``1,4``) choose what runs, ``PYSSE_PHONE_STREAMS`` (words of the
streams' names, e.g. ``long,mixed``) which streams.
"""

from __future__ import annotations

import json
import os
import string
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from pysse.providers import ProviderName
from pysse.server import demo
from pysse.server.app import create_app
from pysse.server.config import RelayConfig
from pysse.testing import Script, ScriptServer
from tests.support import CHROMIUM_ARGS, LiveServer

from .bench_boot import persistent
from .phone_corpus import chat_file, mixed_answer
from .phone_page import (
    INIT,
    Throttle,
    Trace,
    key_latencies,
    long_tasks,
    med,
    memory,
    p95,
    wait_rendered,
)
from .trace_reader import KINDS, Reader, find_mark

KEYS = string.ascii_lowercase
FMT: ProviderName = "openai-chat"
CHAT_TITLE = "Question 0: explain part 0 in detail"
SETTLE_MS = 1000  # after an answer ends: its save, the last highlight slices
Row = dict[str, float]


def _deltas(text: str, size: int = 24) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def stream_scripts() -> dict[str, Script]:
    mixed = Script.answer(_deltas(mixed_answer()), FMT)
    return {
        "/demo long": demo.plan(FMT, "/demo long"),
        "/demo table": demo.plan(FMT, "/demo table"),
        "/demo code": demo.plan(FMT, "/demo code"),
        "/demo think": demo.plan(FMT, "/demo think"),
        "/demo tools": demo.plan(FMT, "/demo tools"),
        "mixed 56 KB, 24 chars / 16 ms": mixed.chunked("event").paced(0.016),
        "firehose: the same in 4 chunks": mixed.chunked(len(mixed.body) // 4 + 1).paced(0.05),
    }


class Base(str):
    """A site's origin, with the page's address in it (``?thread=main``: the page's Python on
    its main thread, its fallback mode; else in a Web Worker, where a page supports it)."""

    page: str


def page_url(base: str) -> str:
    return getattr(base, "page", base + "/")


def with_modes(name: str, url: str, modes: list[str]) -> dict[str, Base]:
    """The page at ``url`` in each mode (a baseline site is measured as it is)."""
    out: dict[str, Base] = {}
    for mode in modes if name != "baseline" else ["as built"]:
        base = Base(url)
        base.page = url + ("/?thread=main" if mode == "main" else "/")
        out[name if mode == "as built" else f"{name}, {mode}"] = base
    return out


class Bench:
    def __init__(self, stack: ExitStack, pw: Any, sites: dict[str, Path]) -> None:
        self.pw = pw
        self.upstream = stack.enter_context(ScriptServer(Script.answer("ok", FMT)))
        relay = RelayConfig.from_args(self.upstream.url, None, FMT, [])
        modes = os.environ.get("PYSSE_PHONE_MODES", "worker,main").split(",")
        self.bases: dict[str, Base] = {}
        for name, site in sites.items():
            url = stack.enter_context(LiveServer(create_app(site, relay=relay))).url
            self.bases.update(with_modes(name, url, modes))
        self.browser = pw.chromium.launch(
            executable_path=os.environ.get("PYSSE_CHROMIUM", "/usr/bin/chromium"),
            args=CHROMIUM_ARGS,
        )
        stack.callback(self.browser.close)
        self.chat = Path(tempfile.mkdtemp(prefix="pysse-phone-")) / "long-chat.json"
        self.chat.write_text(chat_file())
        only = os.environ.get("PYSSE_PHONE_STREAMS", "")
        self.scripts = {
            k: v
            for k, v in stream_scripts().items()
            if not only or any(w in k for w in only.split(","))
        }

    # -- a booted page -------------------------------------------------------------------------

    def page(self, base: str, rate: float) -> tuple[Any, Any, Throttle]:
        ctx = self.browser.new_context()
        ctx.set_default_timeout(600_000)  # a baseline page at 4x freezes for many seconds
        page = ctx.new_page()
        page.add_init_script(INIT)
        page.goto(page_url(base))
        page.wait_for_selector("body[data-ready='1']", timeout=120_000)
        page.wait_for_selector("body[data-warm='1']", timeout=120_000)
        throttle = Throttle(ctx, page)
        throttle.set(rate)
        page.wait_for_timeout(300)
        return ctx, page, throttle

    def send(self, page: Any, script: Script, text: str = "go") -> float:
        self.upstream.play(script)
        page.fill("[data-role=prompt]", text)
        t0 = float(page.evaluate("performance.now()"))
        page.press("[data-role=prompt]", "Enter")
        return t0

    def type_until(self, page: Any, done_js: str, timeout_s: float = 600) -> int:
        """A key every 150 ms, into the prompt, until ``done_js`` is true; the number of keys
        sent. (Into the prompt: a key that changes nothing on screen has no next paint, and
        Event Timing then counts until whatever paints next, seconds later.)"""
        page.focus("[data-role=prompt]")
        n, deadline = 0, time.time() + timeout_s
        while not page.evaluate(done_js) and time.time() < deadline:
            time.sleep(0.15)
            page.keyboard.press(KEYS[n % len(KEYS)])
            n += 1
        return n

    # -- measuring one action -----------------------------------------------------------------

    def traced(self, cdp: Any) -> Trace:
        trace = Trace(cdp)
        trace.start()
        return trace

    @staticmethod
    def measured(
        page: Any, trace: Trace, t0: float, t1: float, since_mark: str | None = None
    ) -> Row:
        """Long tasks in [t0, t1] (page clock) by the Long Tasks API (wall time), and, from
        the trace, by thread CPU time (what an idle machine at this rate would take), with
        the CPU time's split by kind; keys typed meanwhile."""
        events = trace.stop(page)
        mark = find_mark(events, since_mark) if since_mark else None
        since = float(mark["ts"]) if mark else 0.0
        read = Reader(events)
        cpu = read.long_tasks(since, mark=mark)
        phone = read.long_tasks(since, long_us=12_500, mark=mark)
        main_ms, longest_ms, worker_ms = read.thread_cpu(since, mark=mark)
        tasks = long_tasks(page, t0, t1)
        keys = key_latencies(page, t0, t1)
        row: Row = {
            "tasks": len(tasks),
            "longest": max(tasks, default=0.0),
            "sum": sum(tasks),
            "cpu_tasks": len(cpu.tasks),
            "cpu_longest": max(cpu.tasks, default=0.0),
            "cpu_sum": cpu.total,
            "key_max": max(keys, default=0.0),
            "key_p95": p95(keys) if keys else 0.0,
            "keys_slow": len(keys),
        }
        row.update({f"split_{k}": cpu.by_kind[k] for k in KINDS})
        row.update(
            tasks_12=len(phone.tasks),  # at 1x: what a 4x phone would feel as >= 50 ms
            main_cpu=main_ms,
            longest_cpu=longest_ms,
            worker_cpu=worker_ms,
        )
        return row

    # -- streaming -----------------------------------------------------------------------------

    def stream(self, base: str, rate: float, name: str) -> Row:
        ctx, page, throttle = self.page(base, rate)
        trace = self.traced(throttle.cdp)
        done_before = int(page.evaluate("window.__done.length"))
        t0 = self.send(page, self.scripts[name])
        done_js = f"() => window.__done.length > {done_before}"
        keys = self.type_until(page, done_js)
        page.wait_for_function(done_js, timeout=600_000)
        page.wait_for_timeout(SETTLE_MS)
        t1 = float(page.evaluate("performance.now()"))
        done = float(page.evaluate("window.__done.at(-1)"))
        row = self.measured(page, trace, t0, t1)
        row.update(wall=done - t0, keys_sent=keys)
        page.fill("[data-role=prompt]", "")
        ctx.close()
        return row

    # -- long chats ----------------------------------------------------------------------------

    def chats(self, base: str, rate: float) -> dict[str, Row]:
        """Import, reload, open from the list and switch to a chat of 100 long answers; then
        a long answer in it, and the page's memory. A step that fails ends the sequence with
        what was measured before it."""
        out: dict[str, Row] = {}
        try:
            self._chats(base, rate, out)
        except Exception as exc:
            print(f"  chats at {rate:g}x stopped after {list(out)}: {exc!r}"[:600], flush=True)
        return out

    def _chats(self, base: str, rate: float, out: dict[str, Row]) -> None:
        ctx, page, throttle = self.page(base, rate)
        calib = throttle.loop_ms()
        n = 100

        def measure(action: Any, key: str) -> None:
            page.evaluate(f"() => window.__watch({n})")
            trace = self.traced(throttle.cdp)
            t0 = float(page.evaluate("performance.now()"))
            action()
            self.type_until(page, "() => window.__seen.all !== null")
            seen = wait_rendered(page)
            page.wait_for_timeout(SETTLE_MS)
            row = self.measured(page, trace, t0, float(seen["all"]) + SETTLE_MS)
            row.update(newest=_since(seen["newest"], t0), all=seen["all"] - t0)
            out[key] = row

        measure(lambda: page.set_input_files("[data-role=import]", str(self.chat)), "import")
        page.wait_for_timeout(500)  # the chat's write lands
        # reload: from the app's start (Python's own boot is the boot table's)
        page.evaluate(f"() => sessionStorage.setItem('bench.expect', '{n}')")
        trace = self.traced(throttle.cdp)
        page.reload(wait_until="commit")
        page.wait_for_selector("body[data-ready='1']", timeout=300_000)
        seen = wait_rendered(page)
        page.wait_for_timeout(SETTLE_MS)
        start = float(
            page.evaluate(
                "() => (performance.getEntriesByName('pysse:start-app')[0] || {startTime: 0})"
                ".startTime"
            )
        )
        row = self.measured(
            page, trace, start, float(seen["all"]) + SETTLE_MS, since_mark="pysse:start-app"
        )
        row.update(newest=_since(seen["newest"], start), all=seen["all"] - start)
        row["newest_from_nav"] = _since(seen["newest"], 0.0)
        row["throttled_x"] = throttle.loop_ms() / calib * rate  # ~rate when it held
        out["reload"] = row
        # a second, short chat, open at the next reload: the long one is then not loaded
        page.click("[data-role=new-chat]")
        done_before = int(page.evaluate("window.__done.length"))
        self.send(page, Script.answer("A short answer.", FMT), "short chat")
        page.wait_for_function(f"() => window.__done.length > {done_before}", timeout=120_000)
        page.wait_for_timeout(500)
        page.reload()
        page.wait_for_selector("body[data-ready='1']", timeout=300_000)
        page.wait_for_selector("body[data-warm='1']", timeout=300_000)
        long_chat = f"[data-role=chat-open] >> text={CHAT_TITLE}"
        measure(lambda: page.click(long_chat, no_wait_after=True), "open")
        page.click("[data-role=chat-open] >> text=short chat", no_wait_after=True)
        page.wait_for_function(
            "() => document.querySelectorAll('[data-role=assistant]').length === 1"
        )
        page.wait_for_timeout(300)
        measure(lambda: page.click(long_chat, no_wait_after=True), "switch")
        # memory: a long answer streamed into the open 100-answer chat
        done_before = int(page.evaluate("window.__done.length"))
        self.send(page, self.scripts["firehose: the same in 4 chunks"], "one more")
        page.wait_for_function(f"() => window.__done.length > {done_before}", timeout=600_000)
        page.wait_for_timeout(SETTLE_MS)
        js_mib, wasm_mib = memory(page, throttle.cdp)
        out["memory"] = {"js": js_mib, "wasm": wasm_mib, "total": js_mib + wasm_mib}
        ctx.close()

    # -- boot ----------------------------------------------------------------------------------

    def boot(self, base: str, rate: float) -> dict[str, Row]:
        out: dict[str, Row] = {}
        with persistent(self.pw) as ctx:
            ctx.set_default_timeout(600_000)
            ctx.add_init_script(INIT)
            page = ctx.pages[0] if ctx.pages else ctx.new_page()
            page.goto(base + "/site.json")  # this origin's renderer, to throttle before boot
            throttle = Throttle(ctx, page)
            calib = throttle.loop_ms()
            throttle.set(rate)
            for kind in ("cold", "warm"):
                trace = self.traced(throttle.cdp)
                page.goto(page_url(base), wait_until="commit")
                start = time.time()
                n = 0
                while not page.evaluate("() => document.body?.dataset.ready === '1'"):
                    time.sleep(max(0.0, start + 0.1 * (n + 1) - time.time()))
                    page.keyboard.press(KEYS[n % len(KEYS)])
                    n += 1
                page.wait_for_selector("body[data-warm='1']", timeout=300_000)
                page.wait_for_timeout(500)
                t1 = float(page.evaluate("performance.now()"))
                ready = float(page.evaluate("window.pysseReadyAt || 0"))
                row = self.measured(page, trace, 0.0, t1)
                row["ready"] = ready
                row["longest_to_ready"] = max(long_tasks(page, 0.0, ready), default=0.0)
                row["throttled_x"] = throttle.loop_ms() / calib
                out[kind] = row
        return out


# -- tables ------------------------------------------------------------------------------------


def _since(t: float | None, t0: float) -> float:
    """Milliseconds from t0 to t; NaN when it never happened (shown as "never")."""
    return float("nan") if t is None else t - t0


def _m(rows: list[Row], key: str) -> float:
    """The median of the runs where it happened (NaN: in none of them)."""
    return med([r[key] for r in rows if key in r and r[key] == r[key]])


def _f(x: float) -> str:
    return "never" if x != x else f"{x:.0f}"


def _pair(xs: list[Row], cpu: str, wall: str) -> str:
    return f"{_f(_m(xs, cpu))} / {_f(_m(xs, wall))}"


def stream_table(res: dict[tuple[str, str, float], list[Row]], rates: list[float]) -> list[str]:
    head = "| stream, median | site | " + " | ".join(
        f"{r:g}x tasks >= 50 ms | {r:g}x longest ms | {r:g}x CPU in long tasks ms "
        f"| {r:g}x worst key ms"
        for r in rates
    )
    rows = [head + f" | {rates[-1]:g}x wall s |", "|---|---|" + "---:|" * (4 * len(rates) + 1)]
    order = list(SCRIPT_ORDER)
    names = sorted({(n, s) for n, s, _ in res}, key=lambda k: (order.index(k[0]), k[1]))
    for name, site in names:
        cells = []
        for r in rates:
            xs = res.get((name, site, r), [])
            cells += [
                _pair(xs, "cpu_tasks", "tasks"),
                _pair(xs, "cpu_longest", "longest"),
                _f(_m(xs, "cpu_sum")),
                _f(_m(xs, "key_max")),
            ]
        wall = _m(res.get((name, site, rates[-1]), []), "wall") / 1000
        rows.append(f"| {name} | {site} | " + " | ".join(cells) + f" | {wall:.1f} |")
    return rows


def split_table(res: dict[tuple[str, str, float], list[Row]], rate: float) -> list[str]:
    """Where the CPU time of the long tasks went, per stream (medians of the runs)."""
    rows = [
        f"| stream, {rate:g}x, CPU time of long tasks, median | site | ms | "
        + " | ".join(KINDS)
        + " |",
        "|---|---|" + "---:|" * (len(KINDS) + 1),
    ]
    order = list(SCRIPT_ORDER)
    for (name, site, r), xs in sorted(
        res.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1])
    ):
        if r != rate:
            continue
        total = sum(_m(xs, f"split_{k}") for k in KINDS) or 1.0
        shares = " | ".join(f"{100 * _m(xs, f'split_{k}') / total:.0f}%" for k in KINDS)
        rows.append(f"| {name} | {site} | {_f(_m(xs, 'cpu_sum'))} | {shares} |")
    return rows


def chats_table(res: dict[tuple[str, str, float], list[Row]], rates: list[float]) -> list[str]:
    head = "| 100 long answers, median | site | " + " | ".join(
        f"{r:g}x newest on screen ms | {r:g}x all rendered ms | {r:g}x tasks >= 50 ms "
        f"| {r:g}x longest ms | {r:g}x worst key ms"
        for r in rates
    )
    rows = [head + " |", "|---|---|" + "---:|" * (5 * len(rates))]
    for action in ("import", "reload", "open", "switch"):
        for site in sorted({s for a, s, _ in res if a == action}):
            cells = []
            for r in rates:
                xs = res.get((action, site, r), [])
                cells += [
                    _f(_m(xs, "newest")),
                    _f(_m(xs, "all")),
                    _pair(xs, "cpu_tasks", "tasks"),
                    _pair(xs, "cpu_longest", "longest"),
                    _f(_m(xs, "key_max")),
                ]
            rows.append(f"| {action} | {site} | " + " | ".join(cells) + " |")
    return rows


def memory_table(res: dict[tuple[str, str, float], list[Row]]) -> list[str]:
    rows = [
        "| 100-answer chat open after a 56 KB answer, median | site | rate | JS heap MiB "
        "| wasm heap MiB | total MiB |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for (action, site, rate), xs in sorted(res.items()):
        if action == "memory":
            rows.append(
                f"| memory | {site} | {rate:g}x | {_m(xs, 'js'):.0f} | {_m(xs, 'wasm'):.0f} "
                f"| {_m(xs, 'total'):.0f} |"
            )
    return rows


def boot_table(res: dict[tuple[str, str, float], list[Row]], rates: list[float]) -> list[str]:
    head = "| boot, median | site | " + " | ".join(
        f"{r:g}x ready ms | {r:g}x longest to ready ms | {r:g}x longest to warm ms "
        f"| {r:g}x tasks >= 50 ms | {r:g}x worst key ms"
        for r in rates
    )
    rows = [head + " |", "|---|---|" + "---:|" * (5 * len(rates))]
    for kind in ("cold", "warm"):
        for site in sorted({s for k, s, _ in res if k == kind}):
            cells = []
            for r in rates:
                xs = res.get((kind, site, r), [])
                cells += [
                    _f(_m(xs, "ready")),
                    _f(_m(xs, "longest_to_ready")),
                    _pair(xs, "cpu_longest", "longest"),
                    _pair(xs, "cpu_tasks", "tasks"),
                    _f(_m(xs, "key_max")),
                ]
            rows.append(f"| {kind} | {site} | " + " | ".join(cells) + " |")
    return rows


def thread_table(res: dict[str, dict[tuple[str, str, float], list[Row]]]) -> list[str]:
    """At 1x, by trace (thread CPU time: what holds on a shared machine): the main thread's
    CPU, the worker's (its CPU at 1x, times four, is what a 4x phone's worker needs), the
    longest main-thread task, and the tasks of 12.5 ms or more (50 ms on a 4x phone)."""
    rows = [
        "| 1x, by trace, median | site | main-thread CPU ms | worker CPU ms | longest task ms "
        "| tasks >= 12.5 ms |",
        "|---|---|---:|---:|---:|---:|",
    ]
    order = {name: i for i, name in enumerate(SCRIPT_ORDER)}
    for part in ("stream", "chats", "boot"):
        keys = sorted(
            (k for k in res.get(part, {}) if k[2] == 1 and "tasks_12" in res[part][k][0]),
            key=lambda k: (order.get(k[0], -1), k[0], k[1]),
        )
        for what, site, _ in keys:
            xs = res[part][what, site, 1]
            label = what if part != "boot" else f"boot {what}"
            rows.append(
                f"| {label} | {site} | {_f(_m(xs, 'main_cpu'))} | {_f(_m(xs, 'worker_cpu'))} "
                f"| {_f(_m(xs, 'longest_cpu'))} | {_f(_m(xs, 'tasks_12'))} |"
            )
    return rows if len(rows) > 2 else []


SCRIPT_ORDER = stream_scripts()


def main() -> list[str]:
    """Run (or, with ``PYSSE_PHONE_TABLES=FILE``, only tabulate) the bench. Every measured row
    is appended to ``PYSSE_PHONE_OUT`` (build/phone-bench.jsonl) as it comes, so a run that
    fails or is stopped keeps what it measured, and a scenario that fails is reported and
    skipped, not the end of the run."""
    from playwright.sync_api import sync_playwright

    runs = int(os.environ.get("PYSSE_BENCH_RUNS", "3"))
    parts = set(os.environ.get("PYSSE_PHONE_PARTS", "boot,stream,chats").split(","))
    rates = [float(r) for r in os.environ.get("PYSSE_PHONE_RATES", "1,4").split(",")]
    only_tables = os.environ.get("PYSSE_PHONE_TABLES")
    out_path = Path(only_tables or os.environ.get("PYSSE_PHONE_OUT", "build/phone-bench.jsonl"))
    if not only_tables:
        sites = {"this branch": Path(os.environ["PYSSE_SITE"])}
        if os.environ.get("PYSSE_SITE_BASELINE"):
            sites = {"baseline": Path(os.environ["PYSSE_SITE_BASELINE"]), **sites}
        print(f"load average at start: {os.getloadavg()}", flush=True)
        out_path.parent.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as pw, ExitStack() as stack, out_path.open("a") as out:

            def record(part: str, what: str, site: str, rate: float, i: int, row: Row) -> None:
                line = {"part": part, "what": what, "site": site, "rate": rate, "row": row}
                out.write(json.dumps(line) + "\n")
                out.flush()
                _say(i, site, rate, what, row)

            b = Bench(stack, pw, sites)
            for i in range(runs):
                for rate in rates:
                    for site, base in b.bases.items():
                        jobs: list[tuple[str, str, Any]] = []
                        if "boot" in parts:
                            jobs.append(
                                ("boot", "", lambda base=base, rate=rate: b.boot(base, rate))
                            )
                        if "stream" in parts:
                            for name in b.scripts:
                                jobs.append(
                                    (
                                        "stream",
                                        name,
                                        lambda base=base, rate=rate, name=name: {
                                            name: b.stream(base, rate, name)
                                        },
                                    )
                                )
                        if "chats" in parts:
                            jobs.append(
                                ("chats", "", lambda base=base, rate=rate: b.chats(base, rate))
                            )
                        for part, name, job in jobs:
                            try:
                                for what, row in job().items():
                                    record(part, what, site, rate, i, row)
                            except Exception as exc:  # one failed scenario, not the run
                                print(
                                    f"  run {i} {site} {rate:g}x {part} {name} FAILED: {exc!r}"[
                                        :600
                                    ]
                                )
        print(f"load average at end: {os.getloadavg()}", flush=True)
    res: dict[str, dict[tuple[str, str, float], list[Row]]] = defaultdict(lambda: defaultdict(list))
    for line in out_path.read_text().splitlines():
        d = json.loads(line)
        res[d["part"]][d["what"], d["site"], float(d["rate"])].append(d["row"])
    streams, chats, boots = res["stream"], res["chats"], res["boot"]
    tables: list[str] = []
    for rows in (
        stream_table(streams, rates) if streams else [],
        split_table(streams, rates[-1]) if streams else [],
        chats_table(chats, rates) if chats else [],
        memory_table(chats) if chats else [],
        boot_table(boots, rates) if boots else [],
        thread_table(res) if 1 in rates else [],
    ):
        if rows:
            print("\n".join(rows), "", sep="\n", flush=True)
            tables += [*rows, ""]
    return tables


def _say(i: int, site: str, rate: float, what: str, row: Row) -> None:
    shown = {k: round(v, 1) for k, v in row.items()}
    print(f"  run {i} {site} {rate:g}x {what}: {json.dumps(shown)}", flush=True)


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
