"""The phone bench's instruments in the page: long tasks (Long Tasks API), key latency (Event
Timing, ``durationThreshold: 16``), when an answer ended, when the newest restored answer and
all of them were on screen, CPU throttling and a trace over CDP, and memory.

Everything here reads the page from outside through its stable hooks (``[data-role]``,
``data-state``, ``body[data-ready]``), so the same instruments measure any version of the
page side by side.
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

__all__ = [
    "INIT",
    "Throttle",
    "Trace",
    "key_latencies",
    "long_tasks",
    "med",
    "memory",
    "p95",
    "wait_rendered",
]

# Installed before any page script. __watch(expect) (or sessionStorage 'bench.expect', for a
# reload) starts a watcher: the first frame at which all `expect` answers have content, and the
# first at which the newest one has content and is in the log's view (null if that did not
# happen within 2 s of the first: the page showed another part of the chat).
INIT = """
window.__long = []; window.__events = []; window.__done = [];
new PerformanceObserver((l) => { for (const e of l.getEntries())
  window.__long.push([e.startTime, e.duration]); }).observe({type: 'longtask', buffered: true});
new PerformanceObserver((l) => { for (const e of l.getEntries()) if (e.interactionId)
  window.__events.push([e.interactionId, e.name, e.startTime, e.duration]); })
  .observe({type: 'event', durationThreshold: 16, buffered: true});
window.__watch = (expect) => {
  const w = window.__seen = { expect, newest: null, all: null };
  const tick = () => {
    const log = document.querySelector('[data-role=log]');
    const arts = log ? log.querySelectorAll('[data-role=assistant]') : [];
    if (arts.length >= expect) {
      const last = arts[arts.length - 1], s = last.querySelector('.settled');
      if (w.newest === null && s && s.childElementCount) {
        const r = last.getBoundingClientRect(), v = log.getBoundingClientRect();
        if (r.bottom > v.top && r.top < v.bottom) w.newest = performance.now();
      }
      if (w.all === null
          && [...arts].every((a) => a.querySelector('.settled').childElementCount)) {
        w.all = performance.now();
      }
    }
    if (w.all === null || (w.newest === null && performance.now() - w.all < 2000))
      requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
};
{ const exp = sessionStorage.getItem('bench.expect');
  if (exp) { sessionStorage.removeItem('bench.expect'); window.__watch(Number(exp)); } }
document.addEventListener('DOMContentLoaded', () => {
  new MutationObserver((list) => { for (const m of list) {
    const el = m.target;
    if (el.dataset && el.dataset.role === 'assistant' && el.dataset.state !== 'streaming')
      window.__done.push(performance.now());
  } }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-state'] });
});
"""

CALIBRATE = """() => { const t = performance.now(); let x = 0;
  for (let i = 0; i < 2e7; i++) x = (x + i * 7) % 1000003; return performance.now() - t; }"""


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def p95(xs: list[float]) -> float:
    return sorted(xs)[max(0, int(len(xs) * 0.95 + 0.5) - 1)] if xs else float("nan")


def long_tasks(page: Any, t0: float, t1: float) -> list[float]:
    """Durations of the long tasks that started in [t0, t1] (page clock, ms)."""
    return [float(d) for s, d in page.evaluate("window.__long") if t0 <= s <= t1]


def key_latencies(page: Any, t0: float, t1: float) -> list[float]:
    """Per key interaction in [t0, t1]: its longest event (keydown to the next paint). Keys
    under the 16 ms threshold report nothing: they are not in the list."""
    worst: dict[int, float] = {}
    for iid, _, start, dur in page.evaluate("window.__events"):
        if t0 <= start <= t1:
            worst[iid] = max(worst.get(iid, 0.0), float(dur))
    return list(worst.values())


def wait_rendered(page: Any, timeout_s: float = 600) -> dict[str, float]:
    """Wait for the watcher (``window.__watch``) to see every expected answer rendered."""
    page.wait_for_function(
        "() => { const w = window.__seen; return w && w.all !== null"
        " && (w.newest !== null || performance.now() - w.all > 2000); }",
        timeout=timeout_s * 1000,
    )
    return dict(page.evaluate("window.__seen"))


WASM_HEAP = """async () => window.pysseRuntime ? pysseRuntime._module.HEAP8.length
  : window.pysse ? await pysse.py('import pyodide_js; pyodide_js._module.HEAP8.length') : 0"""


def memory(page: Any, cdp: Any) -> tuple[float, float]:
    """MiB of JS heap in use after a full collection (the page's, and its workers': where the
    page's Python runs in one, its JavaScript side lives there), and the wasm heap's size (it
    never shrinks: its high-water mark)."""
    cdp.send("HeapProfiler.enable")
    cdp.send("HeapProfiler.collectGarbage")
    used = cdp.send("Runtime.getHeapUsage")["usedSize"] + _workers_heap(page)
    wasm = page.evaluate(WASM_HEAP)
    return used / 2**20, wasm / 2**20


def _workers_heap(page: Any) -> float:
    """The JS heap in use of the page's dedicated workers, through the browser's CDP session
    (a page's own session cannot reach a worker target), after a collection there."""
    browser = page.context.browser
    if browser is None:
        return 0.0
    cdp = browser.new_browser_cdp_session()
    replies: dict[int, Any] = {}
    cdp.on(
        "Target.receivedMessageFromTarget",
        lambda e: replies.update({(m := json.loads(e["message"])).get("id", 0): m}),
    )
    total = 0.0
    for info in cdp.send("Target.getTargets")["targetInfos"]:
        if info["type"] != "worker":
            continue
        session = cdp.send("Target.attachToTarget", {"targetId": info["targetId"]})["sessionId"]
        for n, method in ((1, "HeapProfiler.collectGarbage"), (2, "Runtime.getHeapUsage")):
            message = json.dumps({"id": n, "method": method})
            cdp.send("Target.sendMessageToTarget", {"sessionId": session, "message": message})
            deadline = time.time() + 10
            while n not in replies and time.time() < deadline:
                page.wait_for_timeout(50)
        total += float(replies.get(2, {}).get("result", {}).get("usedSize", 0))
        replies.clear()
        cdp.send("Target.detachFromTarget", {"sessionId": session})
    cdp.detach()
    return total


class Throttle:
    """The page's CPU slowed ``rate`` x (DevTools' "mid-tier mobile" is 4), over CDP."""

    def __init__(self, ctx: Any, page: Any) -> None:
        self.page = page
        self.cdp = ctx.new_cdp_session(page)

    def set(self, rate: float) -> None:
        self.cdp.send("Emulation.setCPUThrottlingRate", {"rate": rate})

    def loop_ms(self) -> float:
        """A fixed JavaScript loop's time (the best of 3): 4x slower at rate 4 when
        throttling works."""
        return min(float(self.page.evaluate(CALIBRATE)) for _ in range(3))


CATEGORIES = [
    "devtools.timeline",
    "disabled-by-default-devtools.timeline",
    "v8",
    "blink.user_timing",
]


class Trace:
    """A ``devtools.timeline`` trace of one page over CDP (``Tracing.start`` ... ``end``)."""

    def __init__(self, cdp: Any) -> None:
        self.cdp = cdp
        self.events: list[dict[str, Any]] = []
        self.complete = False
        self._handlers = {
            "Tracing.dataCollected": lambda e: self.events.extend(e["value"]),
            "Tracing.tracingComplete": lambda e: setattr(self, "complete", True),
        }
        for name, handler in self._handlers.items():
            cdp.on(name, handler)

    def start(self) -> None:
        self.cdp.send(
            "Tracing.start",
            {
                "transferMode": "ReportEvents",
                "traceConfig": {
                    "recordMode": "recordAsMuchAsPossible",
                    "includedCategories": CATEGORIES,
                },
            },
        )

    def stop(self, page: Any) -> list[dict[str, Any]]:
        self.cdp.send("Tracing.end")
        deadline = time.time() + 120
        while not self.complete and time.time() < deadline:
            page.wait_for_timeout(100)
        for name, handler in self._handlers.items():
            self.cdp.remove_listener(name, handler)
        return self.events
