"""Python off the main thread (issue #28, lever 4): the embedding examples side by side in
Debian's Chromium, ``examples/minimal`` (Pyodide, the read loop and markdown on the page's
main thread, as the bundled page does today) against ``examples/worker`` (all of that in a
module Web Worker; the page only applies the posted ``Update`` ops with ``dom_writer.js``).

For each site, at each rate of ``PYSSE_WORKER_RATES`` (``1,4``: CPU throttled 1x and 4x with
``Emulation.setCPUThrottlingRate``), ``PYSSE_BENCH_RUNS`` runs (3), sites interleaved in each
run, medians; one fresh browser context (a cold HTTP cache) per site and run:

* **boot**: navigation to ``Ready.``, a key typed into the prompt every 150 ms meanwhile; the
  main thread's long tasks up to then. A key press waits until the page has taken it, so a
  frozen page gets few keys: "keys sent" says how many got through, and a page that took
  one key in 15 s has a small "worst key" for the wrong reason;
* **streaming**, in the booted page: the phone bench's ~56 KB mixed answer at 24 characters
  every 16 ms and its firehose (the same in 4 chunks), each from a testing-kit
  ``ScriptServer`` through pysse's relay, a key typed every 150 ms; the main thread's long
  tasks, key latency, and each thread's CPU time. The answer's text must be the script's
  whole text (a run that lost text is a failed run, not a number).

Long tasks are counted twice, as "CPU / wall" (see ``bench_phone``): by thread CPU time from a
``devtools.timeline`` trace, and by wall time from the Long Tasks API. Key latency is Event
Timing's (keys under 16 ms report nothing).

**CPU throttling does not reach a dedicated worker** in Chromium (``setCPUThrottlingRate``
slows the page's main thread only; a worker target has no ``Emulation`` domain): each row
reports the rate each thread actually ran at (a fixed JavaScript loop, throttled against
unthrottled). At 4x the worker's Python therefore runs at full speed: its main-thread
columns are fair (the main thread is slowed either way), its ready time and wall times are
optimistic; at 1x both sites are compared on equal terms.

Served as a user would: ``python -m http.server`` from ``build.py examples``' output. Needs
``PYSSE_EXAMPLES`` and ``PYSSE_CHROMIUM``; ``python build.py bench --only worker`` sets them.
Rows are appended to ``PYSSE_WORKER_OUT`` (build/worker-bench.jsonl) as they come;
``PYSSE_WORKER_TABLES=FILE`` only tabulates a file.
"""

from __future__ import annotations

import json
import os
import string
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from pysse.render.markdown import render
from pysse.server.relay import RelayConfig, create_relay_app
from pysse.testing import Script, ScriptServer
from tests.support import CHROMIUM_ARGS, LiveServer, ServerProcess, chromium_path, free_port

from .bench_phone import FMT, Bench, stream_scripts
from .phone_corpus import mixed_answer
from .phone_page import CALIBRATE, INIT, Throttle, Trace, long_tasks, med
from .trace_reader import KINDS

SITES = {"main thread": "minimal", "worker": "worker"}
KEYS = string.ascii_lowercase
SETTLE_MS = 1000
ENDED_RE = "^(completed|truncated|error|aborted): "
Row = dict[str, float]

# When the status line reads "Ready." and each time it reads how an answer ended: the
# examples' only hooks are their element ids (examples/README: #status, #answer, ...).
STATUS_INIT = f"""
window.__readyAt = 0; window.__ended = [];
document.addEventListener('DOMContentLoaded', () => {{
  const s = document.getElementById('status');
  new MutationObserver(() => {{
    const t = s.textContent, now = performance.now();
    if (t === 'Ready.' && !window.__readyAt) window.__readyAt = now;
    if (/{ENDED_RE}/.test(t)) window.__ended.push([now, t]);
  }}).observe(s, {{ childList: true, characterData: true, subtree: true }});
}});
"""

TEXT_OF = """(html) => { const t = document.createElement('template'); t.innerHTML = html;
  const a = document.getElementById('answer');
  return [a.textContent.length, t.content.textContent.length, a.innerHTML === t.innerHTML]; }"""


def type_keys(page: Any, until_js: str, every_s: float = 0.15, timeout_s: float = 600) -> int:
    """A key every ``every_s`` into ``#prompt`` until ``until_js`` is true; keys sent."""
    page.wait_for_selector("#prompt")
    page.focus("#prompt")
    n, deadline = 0, time.time() + timeout_s
    while not page.evaluate(until_js) and time.time() < deadline:
        time.sleep(every_s)
        page.keyboard.press(KEYS[n % len(KEYS)])
        n += 1
    return n


class WorkerBench:
    def __init__(self, stack: ExitStack, pw: Any, examples: Path) -> None:
        port = free_port()
        argv = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1"]
        static = ServerProcess([*argv, "--directory", str(examples), str(port)], port)
        stack.callback(static.stop)
        self.origin = static.url
        self.upstream = stack.enter_context(ScriptServer(Script.answer("ok", FMT)))
        cfg = RelayConfig.from_args(self.upstream.url, None, FMT, [self.origin])
        self.relay = stack.enter_context(LiveServer(create_relay_app(cfg))).url + "/relay"
        self.browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        stack.callback(self.browser.close)
        self.scripts = {
            k: v for k, v in stream_scripts().items() if k.startswith(("mixed", "firehose"))
        }
        self.html = render(mixed_answer())  # every stream is this answer

    def rates_of(self, page: Any, throttle: Throttle, rate: float) -> tuple[float, float]:
        """How much slower the main thread and the worker (if any) run at ``rate`` than at
        1x: a fixed loop's best of 3, throttled and not."""

        def loops() -> tuple[float, float]:
            main = min(float(page.evaluate(CALIBRATE)) for _ in range(3))
            w = page.workers[0] if page.workers else None
            worker = min(float(w.evaluate(CALIBRATE)) for _ in range(3)) if w else 0.0
            return main, worker

        slow = loops()
        throttle.set(1)
        fast = loops()
        throttle.set(rate)
        return slow[0] / fast[0], (slow[1] / fast[1] if fast[1] else float("nan"))

    def run(self, site: str, rate: float) -> Iterator[tuple[str, Row]]:
        """A cold boot at ``rate``, then each stream in the booted page; a stream that fails
        is reported and skipped."""
        ctx = self.browser.new_context()
        ctx.set_default_timeout(600_000)
        ctx.add_init_script(INIT)
        ctx.add_init_script(STATUS_INIT)
        page = ctx.new_page()
        try:
            page.goto(self.origin + "/pysse/wheels.json")  # this origin's renderer, throttled
            throttle = Throttle(ctx, page)
            throttle.set(rate)
            trace = Trace(throttle.cdp)
            trace.start()
            page.goto(f"{self.origin}/{site}/", wait_until="commit")
            keys = type_keys(page, "() => window.__readyAt > 0", every_s=0.15)
            page.wait_for_timeout(500)
            ready = float(page.evaluate("window.__readyAt"))
            t1 = float(page.evaluate("performance.now()"))
            row = Bench.measured(page, trace, 0.0, t1)
            to_ready = long_tasks(page, 0.0, ready)
            main_x, worker_x = self.rates_of(page, throttle, rate)
            row.update(
                ready=ready,
                longest_to_ready=max(to_ready, default=0.0),
                tasks_to_ready=len(to_ready),
                keys_sent=keys,
                main_x=main_x,
                worker_x=worker_x,
            )
            yield "boot", row
            for name, script in self.scripts.items():
                try:
                    row = self.stream(page, throttle, script)
                except Exception as exc:
                    print(f"  {site} {rate:g}x {name} FAILED: {exc!r}"[:600], flush=True)
                    continue
                yield name, {**row, "main_x": main_x, "worker_x": worker_x}
        finally:
            ctx.close()

    def stream(self, page: Any, throttle: Throttle, script: Script) -> Row:
        page.fill("#relay", self.relay)
        page.fill("#prompt", "go")
        ended_before = int(page.evaluate("window.__ended.length"))
        trace = Trace(throttle.cdp)
        trace.start()
        self.upstream.play(script)
        t0 = float(page.evaluate("performance.now()"))
        page.click("#ask", no_wait_after=True)
        done_js = f"() => window.__ended.length > {ended_before}"
        keys = type_keys(page, done_js)
        page.wait_for_function(done_js, timeout=600_000)
        page.wait_for_timeout(SETTLE_MS)
        t1 = float(page.evaluate("performance.now()"))
        ended_at, status = page.evaluate("window.__ended.at(-1)")
        row = Bench.measured(page, trace, t0, t1)
        got, want, same_html = page.evaluate(TEXT_OF, self.html)
        if not status.startswith("completed") or got != want:  # the bench's own sanity
            raise AssertionError(f"{status!r}: the answer has {got} of {want} characters")
        row.update(wall=float(ended_at) - t0, keys_sent=keys, same_html=float(same_html))
        return row


# -- tables ------------------------------------------------------------------------------------

Results = dict[tuple[str, str, float], list[Row]]


def _m(rows: list[Row], key: str) -> float:
    return med([r[key] for r in rows if key in r and r[key] == r[key]])


def _f(x: float, digits: int = 0) -> str:
    return "-" if x != x else f"{x:.{digits}f}"


def _pair(rows: list[Row], cpu: str, wall: str) -> str:
    return f"{_f(_m(rows, cpu))} / {_f(_m(rows, wall))}"


def _groups(
    res: Results, names: Iterable[str], rates: list[float]
) -> Iterator[tuple[str, str, float, list[Row]]]:
    """Each (name, site, rate) that has rows, in table order: name, then rate, then site."""
    for name in names:
        for rate in rates:
            for site in SITES:
                xs = res.get((name, site, rate), [])
                if xs:
                    yield name, site, rate, xs


def boot_table(res: Results, rates: list[float]) -> list[str]:
    rows = [
        "| cold boot, median | rate | ready ms | longest task ms, CPU / wall "
        "| tasks >= 50 ms, CPU / wall | longest to ready ms (wall) | keys sent | worst key ms "
        "| main / worker ran at |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for _, site, rate, xs in _groups(res, ["boot"], rates):
        rows.append(
            f"| {site} ({len(xs)} runs) | {rate:g}x | {_f(_m(xs, 'ready'))} "
            f"| {_pair(xs, 'cpu_longest', 'longest')} | {_pair(xs, 'cpu_tasks', 'tasks')} "
            f"| {_f(_m(xs, 'longest_to_ready'))} | {_f(_m(xs, 'keys_sent'))} "
            f"| {_f(_m(xs, 'key_max'))} "
            f"| {_f(_m(xs, 'main_x'), 1)}x / {_f(_m(xs, 'worker_x'), 1)}x |"
        )
    return rows


def stream_table(res: Results, rates: list[float]) -> list[str]:
    rows = [
        "| stream, median | site | rate | main-thread tasks >= 50 ms, CPU / wall "
        "| longest ms, CPU / wall | sum ms, CPU / wall | worst key ms | keys >= 16 ms "
        "| main-thread CPU s | worker CPU s | wall s |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, site, rate, xs in _groups(res, stream_scripts(), rates):
        rows.append(
            f"| {name} | {site} ({len(xs)} runs) | {rate:g}x "
            f"| {_pair(xs, 'cpu_tasks', 'tasks')} "
            f"| {_pair(xs, 'cpu_longest', 'longest')} | {_pair(xs, 'cpu_sum', 'sum')} "
            f"| {_f(_m(xs, 'key_max'))} | {_f(_m(xs, 'keys_slow'))} "
            f"| {_f(_m(xs, 'main_cpu') / 1000, 1)} "
            f"| {_f(_m(xs, 'worker_cpu') / 1000, 1)} | {_f(_m(xs, 'wall') / 1000, 1)} |"
        )
    return rows


def split_table(res: Results, rates: list[float]) -> list[str]:
    """What the main thread's long tasks spent their CPU time on (ms, medians)."""
    rows = [
        "| main thread's long tasks, CPU ms, median | site | rate | " + " | ".join(KINDS) + " |",
        "|---|---|---:|" + "---:|" * len(KINDS),
    ]
    for name, site, rate, xs in _groups(res, ["boot", *stream_scripts()], rates):
        cells = " | ".join(_f(_m(xs, f"split_{k}")) for k in KINDS)
        rows.append(f"| {name} | {site} | {rate:g}x | {cells} |")
    return rows


def main() -> list[str]:
    from playwright.sync_api import sync_playwright

    runs = int(os.environ.get("PYSSE_BENCH_RUNS", "3"))
    rates = [float(r) for r in os.environ.get("PYSSE_WORKER_RATES", "1,4").split(",")]
    only_tables = os.environ.get("PYSSE_WORKER_TABLES")
    out_path = Path(only_tables or os.environ.get("PYSSE_WORKER_OUT", "build/worker-bench.jsonl"))
    if not only_tables:
        print(f"load average at start: {os.getloadavg()}", flush=True)
        out_path.parent.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as pw, ExitStack() as stack, out_path.open("a") as out:
            b = WorkerBench(stack, pw, Path(os.environ["PYSSE_EXAMPLES"]))
            for i in range(runs):  # interleaved: the machine's load hits both sites alike
                for rate in rates:
                    for site, path in SITES.items():
                        try:
                            for what, row in b.run(path, rate):
                                got = {"what": what, "site": site, "rate": rate, "row": row}
                                out.write(json.dumps(got) + "\n")
                                out.flush()
                                shown = {k: round(v, 1) for k, v in row.items()}
                                print(f"  run {i} {site} {rate:g}x {what}: {shown}", flush=True)
                        except Exception as exc:  # one failed run, not the bench
                            print(f"  run {i} {site} {rate:g}x FAILED: {exc!r}"[:600], flush=True)
        print(f"load average at end: {os.getloadavg()}", flush=True)
    res: Results = defaultdict(list)
    for line in out_path.read_text().splitlines():
        d = json.loads(line)
        res[d["what"], d["site"], float(d["rate"])].append(d["row"])
    tables = [
        *boot_table(res, rates),
        "",
        *stream_table(res, rates),
        "",
        *split_table(res, rates),
    ]
    print("\n".join(tables), flush=True)
    return tables


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
