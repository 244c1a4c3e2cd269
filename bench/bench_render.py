"""The browser's own work per frame while an answer streams (issue #36): style, layout and
paint must cost what changed, not the whole answer.

``python build.py bench --only render [--baseline REF]``. Each stream is played by a scripted
upstream (``pysse.testing``) through the relay the site is served with, 24 characters every
16 ms, into a fresh page (a new browser context: no chats), in Debian's Chromium at 1x (no
throttling), 1280x720, while a ``devtools.timeline`` trace is recorded. The streams:

* the ~56 KB mixed answer of the phone bench (``phone_corpus.mixed_answer``);
* each shape of ``pysse/server/shapes.py`` (code, table, flat_list, nested_list,
  blockquote, paragraph) at n units, n chosen so the answer is ~``PYSSE_RENDER_KB`` KB
  (25), and at 2n: the doubling ratios say whether a frame's work grows with the answer.

The window of a stream is from the send (a ``performance.mark`` placed just before Enter is
pressed) to the answer's ``data-state`` leaving ``streaming`` (a ``performance.mark`` from a
MutationObserver watching only that attribute), plus the frame that paints the final state.
What each figure is, exactly, is ``bench/trace_frames.py``'s docstring: thread CPU time of
the renderer main thread, self time by kind, frames from ``BeginMainThreadFrame``.

pysse's page is measured in both its modes, side by side: ``worker`` (as served: Python in a
Web Worker) and ``main`` (``?thread=main``: Python on the page's main thread); a baseline
(``--baseline REF``) as it is built. **The peer** (issue #41): streamdown, installed from npm
at bench time and bundled by ``bench/bench_peer.py`` (its docstring says exactly what the
page is), streams the mixed answer from the same relay and upstream, at the same pace, in
the same runs, read by the same ``analyze``; the last table is each figure of pysse's modes
and streamdown's and their ratios (``python build.py bench --only peer``: the mixed answer
and Chromium only). If npm cannot install it, one sentence says so and only the peer is left
out.

The page is read only through its stable hooks (``[data-role=prompt]``,
``[data-role=assistant]`` and its ``data-state``, ``body[data-ready='1']``, and
``body[data-warm='1']`` when the page sets it: waited for up to ``WARM_S`` the first time,
then only on the sites that set it), so the same instrument measures any version of the page.

**Firefox** (ESR, over WebDriver BiDi with puppeteer-core: ``render_firefox.cjs``) streams the
mixed answer at 1x with its own profiler recording markers; ``bench/gecko_frames.py`` turns
them into the same figures, in **wall time** except the main thread's total CPU (its
docstring says exactly what each is, and why not a probe in the page).

Environment: ``PYSSE_BENCH_RUNS`` (3; medians), ``PYSSE_RENDER_KB`` (25),
``PYSSE_RENDER_MIXED_KB`` (56), ``PYSSE_RENDER_STREAMS`` (words of the streams' names, e.g.
``mixed,code``), ``PYSSE_RENDER_PARTS`` (``chromium,firefox,peer``), ``PYSSE_RENDER_MODES``
(``worker,main``), ``PYSSE_PEER_CACHE`` (.cache/peer), ``PYSSE_RENDER_STACKS=1``
(records JavaScript stacks: the forced layouts' callers; it costs CPU itself, so it is off by
default), ``PYSSE_RENDER_OUT`` (build/render-bench.jsonl, rewritten each run; with
``PYSSE_RENDER_TABLES=FILE`` only the tables of a saved run are printed), ``PYSSE_RENDER_TOP=N``
(prints the N trace events of most self time of each stream: where the milliseconds go, by
Chromium's names), ``PYSSE_RENDER_DUMP=FILE`` (writes the kept events of the last trace, to
read them apart: each layout's dirty and total objects, each task's contents).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pysse.providers import ProviderName
from pysse.server.app import create_app
from pysse.server.config import RelayConfig
from pysse.server.shapes import shape
from pysse.testing import Script, ScriptServer
from tests.support import CHROMIUM_ARGS, LiveServer

from .bench_peer import prepare, ratio
from .gecko_frames import analyze_gecko
from .phone_corpus import mixed_answer
from .trace_frames import LONG_TASK_MS, FrameStats, analyze
from .trace_reader import keep_event

FMT: ProviderName = "openai-chat"
DELTA_CHARS, DELTA_S = 24, 0.016
SHAPES = ("code", "table", "flat_list", "nested_list", "blockquote", "paragraph")
VIEWPORT = {"width": 1280, "height": 720}
START, END = "bench:send", "bench:done"
WARM_S = 30.0  # the longest wait for body[data-warm='1'] on a site not yet known to set it
CATEGORIES = [
    "devtools.timeline",
    "disabled-by-default-devtools.timeline",
    "disabled-by-default-devtools.timeline.frame",
    "v8.execute",  # RunMicrotasks: promise callbacks (a Python coroutine resumed) are script
    "blink.user_timing",
]
STACKS = "disabled-by-default-devtools.timeline.stack"
HERE = Path(__file__).resolve().parent
SETTINGS = (
    "PYSSE_BENCH_RUNS",
    "PYSSE_RENDER_KB",
    "PYSSE_RENDER_MIXED_KB",
    "PYSSE_RENDER_STREAMS",
    "PYSSE_RENDER_PARTS",
    "PYSSE_RENDER_MODES",
    "PYSSE_RENDER_STACKS",
)
Row = dict[str, Any]

# The end mark: only data-state is watched, so the observer costs nothing while the answer
# streams; the first answer whose state leaves "streaming" ends the window.
INIT = f"""
document.addEventListener('DOMContentLoaded', () => {{
  new MutationObserver((list, obs) => {{ for (const m of list) {{
    if (m.oldValue === 'streaming' && m.target.dataset.role === 'assistant'
        && m.target.dataset.state !== 'streaming') {{
      performance.mark('{END}'); window.__benchDone = performance.now(); obs.disconnect();
      return; }} }} }})
  .observe(document.body, {{ subtree: true, attributes: true, attributeOldValue: true,
                            attributeFilter: ['data-state'] }});
}});
"""

# -- what is streamed --------------------------------------------------------------------------


def units_for(name: str, kb: float) -> int:
    """The n at which ``shape(name, n)`` is about ``kb`` KB (its size grows linearly)."""
    per_unit = (len(shape(name, 2000)) - len(shape(name, 1000))) / 1000
    return max(4, round(kb * 1000 / per_unit))


def streams() -> dict[str, str]:
    """Every stream's name and text, in the tables' order."""
    kb = float(os.environ.get("PYSSE_RENDER_KB", "25"))
    mixed_kb = float(os.environ.get("PYSSE_RENDER_MIXED_KB", "56"))
    out = {f"mixed {mixed_kb:g} KB": mixed_answer(int(mixed_kb * 1000))}
    for name in SHAPES:
        n = units_for(name, kb)
        for k in (n, 2 * n):
            text = shape(name, k)
            out[f"{name} n={k} ({len(text) / 1000:.0f} KB)"] = text
    only = [w for w in os.environ.get("PYSSE_RENDER_STREAMS", "").split(",") if w]
    return {k: v for k, v in out.items() if not only or any(w in k for w in only)}


def script_for(text: str) -> Script:
    deltas = [text[i : i + DELTA_CHARS] for i in range(0, len(text), DELTA_CHARS)]
    return Script.answer(deltas, FMT).chunked("event").paced(DELTA_S)


# -- a trace -------------------------------------------------------------------------------------


class Recorder:
    """A trace of one page over CDP, keeping only what ``trace_reader`` reads as it comes."""

    def __init__(self, cdp: Any, stacks: bool) -> None:
        self.cdp = cdp
        self.categories = [*CATEGORIES, *([STACKS] if stacks else [])]
        self.events: list[dict[str, Any]] = []
        self.seen = 0
        self.complete: dict[str, Any] | None = None
        self._handlers = {
            "Tracing.dataCollected": self._collect,
            "Tracing.tracingComplete": lambda e: setattr(self, "complete", e),
        }

    def _collect(self, e: dict[str, Any]) -> None:
        self.seen += len(e["value"])
        self.events.extend(v for v in e["value"] if keep_event(v))

    def start(self) -> None:
        for name, handler in self._handlers.items():
            self.cdp.on(name, handler)
        config = {
            "recordMode": "recordAsMuchAsPossible",
            "traceBufferSizeInKb": 400_000,
            "includedCategories": self.categories,
        }
        self.cdp.send("Tracing.start", {"transferMode": "ReportEvents", "traceConfig": config})

    def stop(self, page: Any) -> list[dict[str, Any]]:
        self.cdp.send("Tracing.end")
        deadline = time.time() + 300
        while self.complete is None and time.time() < deadline:
            page.wait_for_timeout(100)
        for name, handler in self._handlers.items():
            self.cdp.remove_listener(name, handler)
        if self.complete is None:
            raise RuntimeError("the trace did not complete in 300 s")
        dump = os.environ.get("PYSSE_RENDER_DUMP")  # the kept events, to read them apart
        if dump:
            Path(dump).write_text(json.dumps(self.events))
        return self.events

    @property
    def data_loss(self) -> bool:
        return bool(self.complete and self.complete.get("dataLossOccurred"))


# -- the runs ------------------------------------------------------------------------------------


def row_of(s: FrameStats) -> Row:
    """One stream's figures, flat (every number the tables show, and a few more). With
    ``PYSSE_RENDER_TOP=N`` the N trace events of most self time are printed beside it: where
    a frame's milliseconds go, by Chromium's own names."""
    k = s.by_kind
    top = int(os.environ.get("PYSSE_RENDER_TOP", "0") or 0)
    if top:
        named = sorted(s.self_by_name.items(), key=lambda kv: -kv[1])[:top]
        print("    self time by event:", ", ".join(f"{n} {ms:,.0f}" for n, ms in named))
    return {
        "window_s": s.window_ms / 1000,
        "frames": s.frames,
        "cpu_ms": s.cpu_ms,
        "tasks": s.tasks,
        "tasks_pf": s.per_frame(s.tasks),
        "script_ms": k["script"],
        "style_ms": k["style"],
        "layout_ms": k["layout"],
        "paint_ms": k["paint"],
        "gc_ms": k["gc"],
        "other_ms": k["other"],
        "render_ms": s.render_ms,
        "render_unforced_ms": s.render_unforced_ms,
        "frame_median_ms": s.frame_median_ms,
        "frame_worst_ms": s.frame_worst_ms,
        "layouts": s.layouts,
        "forced_layouts": s.forced_layouts,
        "layouts_pf": s.per_frame(s.layouts),
        "max_layouts_in_frame": max(s.frame_layouts, default=0),
        "thrashing_frames": s.thrashing_frames,
        "paints": s.paints,
        "paints_pf": s.per_frame(s.paints),
        "paint_events": s.paint_events,
        "paint_events_pf": s.per_frame(s.paint_events),
        "style_recalcs": s.style_recalcs,
        "forced_styles": s.forced_styles,
        "parse_html": s.parse_html,
        "parse_html_ms": s.self_by_name.get("ParseHTML", 0.0),
        "intersections": s.intersections,
        "intersections_ms": s.self_by_name.get(
            "IntersectionObserverController::computeIntersections", 0.0
        ),
        "longest_task_ms": s.longest_task_ms,
        "long_tasks": s.long_tasks(LONG_TASK_MS),
        "worker_cpu_ms": s.worker_cpu_ms,
    }


@dataclass
class Site:
    name: str
    base: str
    warm: bool | None = None  # sets body[data-warm]: unknown until first seen
    page: str = "/"  # the page's path and query: "/?thread=main" is pysse's main-thread mode
    peer: bool = False  # streamdown's page (bench_peer): measured on the mixed answer only


def pysse_sites(name: str, base: str, modes: list[str]) -> list[Site]:
    """The page at ``base`` in each of ``modes`` (``worker``: as served, Python in a Web
    Worker; ``main``: ``?thread=main``); a baseline is measured as it is built."""
    if name == "baseline" or not modes:
        return [Site(name, base)]
    return [
        Site(f"{name}, {mode}", base, page="/?thread=main" if mode == "main" else "/")
        for mode in modes
    ]


class Bench:
    def __init__(
        self,
        stack: ExitStack,
        pw: Any,
        sites: dict[str, Path],
        modes: list[str],
        peer: tuple[Path, str] | None = None,
    ) -> None:
        self.upstream = stack.enter_context(ScriptServer(Script.answer("ok", FMT)))
        relay = RelayConfig.from_args(self.upstream.url, None, FMT, [])
        self.sites: list[Site] = []
        for name, path in sites.items():
            base = stack.enter_context(LiveServer(create_app(path, relay=relay))).url
            self.sites += pysse_sites(name, base, modes)
        if peer is not None:  # served by the same app: the same relay, same-origin
            base = stack.enter_context(LiveServer(create_app(peer[0], relay=relay))).url
            self.sites.append(Site(f"streamdown {peer[1]}", base, warm=False, peer=True))
        self.pw = pw
        self.stacks = os.environ.get("PYSSE_RENDER_STACKS") == "1"
        self._browser: Any = None
        self._stack = stack

    @property
    def browser(self) -> Any:
        """Chromium, launched again if it has gone (a crash, or killed from outside)."""
        if self._browser is not None and not self._browser.is_connected():
            self._browser = None
        if self._browser is None:
            self._browser = self.pw.chromium.launch(
                executable_path=os.environ.get("PYSSE_CHROMIUM", "/usr/bin/chromium"),
                args=CHROMIUM_ARGS,
            )
            browser = self._browser
            self._stack.callback(lambda: browser.is_connected() and browser.close())
        return self._browser

    def _booted(self, site: Site) -> tuple[Any, Any]:
        ctx = self.browser.new_context(viewport=VIEWPORT)
        ctx.set_default_timeout(600_000)
        page = ctx.new_page()
        page.add_init_script(INIT)
        page.goto(site.base + site.page)
        page.wait_for_selector("body[data-ready='1']", timeout=120_000)
        if site.warm is not False:
            try:
                page.wait_for_selector("body[data-warm='1']", timeout=WARM_S * 1000)
                site.warm = True
            except Exception:
                if site.warm:
                    raise
                site.warm = False
                print(f"  {site.name}: no body[data-warm='1'] in {WARM_S:g} s", flush=True)
        page.wait_for_timeout(500)
        return ctx, page

    def chromium(self, site: Site, text: str) -> tuple[Row, Counter[str]]:
        """One traced stream."""
        ctx, page = self._booted(site)
        try:
            recorder = Recorder(ctx.new_cdp_session(page), self.stacks)
            recorder.start()
            page.wait_for_timeout(300)
            self.upstream.play(script_for(text))
            page.fill("[data-role=prompt]", "go")
            t0 = float(page.evaluate(f"(performance.mark('{START}'), performance.now())"))
            page.press("[data-role=prompt]", "Enter")
            # polled from the page once a second (a timer task: ~0.02 a frame), with a
            # timeout the driver keeps even if the browser is gone
            page.wait_for_function(
                "() => window.__benchDone !== undefined",
                polling=1000,
                timeout=(120 + 4 * script_for(text).duration) * 1000,
            )
            t1 = float(page.evaluate("window.__benchDone"))
            page.wait_for_timeout(500)  # the final frame, then the trace ends
            events = recorder.stop(page)
        finally:
            if self.browser.is_connected():
                ctx.close()
        stats = analyze(events, START, END)
        row = row_of(stats)
        row.update(trace_events=recorder.seen, data_loss=int(recorder.data_loss))
        row["page_wall_s"] = (t1 - t0) / 1000
        return row, stats.forced_stacks

    def firefox(self, site: Site, text: str) -> Row:
        """One stream in Firefox ESR under its profiler (``render_firefox.cjs``)."""
        if str(HERE.parent / "tests") not in sys.path:
            sys.path.insert(0, str(HERE.parent / "tests"))  # tests/engines, as a package
        from engines.find import find_firefox, find_node, find_puppeteer_core

        self.upstream.play(script_for(text))
        with tempfile.TemporaryDirectory(prefix="pysse-render-ff-") as tmp:
            profile = Path(tmp) / "profile.json"
            opts = {
                "puppeteer": find_puppeteer_core(),
                "firefox": find_firefox(),
                "url": site.base + site.page,
                "prompt": "go",
                "profile": str(profile),
                "warmMs": 0 if site.warm is False else WARM_S * 1000,
                "start": START,
                "end": END,
            }
            proc = subprocess.run(
                [find_node(), str(HERE / "render_firefox.cjs"), json.dumps(opts)],
                capture_output=True,
                text=True,
                timeout=900,
            )
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
            got = json.loads(lines[-1]) if lines else {"error": proc.stderr[-2000:]}
            if "error" in got:
                raise RuntimeError(f"render_firefox.cjs: {got['error'][:2000]}")
            gecko = analyze_gecko(json.loads(profile.read_text()), START, END)
        row = row_of(gecko.stats)
        for unknown in ("tasks", "tasks_pf", "longest_task_ms", "long_tasks", "worker_cpu_ms"):
            row[unknown] = float("nan")  # no tasks in a Gecko profile's markers
        row.update(long_tasks_50ms_wall=gecko.long_tasks, version=got["version"])
        row["page_wall_s"] = (float(got["t1"]) - float(got["t0"])) / 1000
        return row


# -- tables ----------------------------------------------------------------------------------------


def _med(rows: list[Row], key: str) -> float:
    xs = [float(r[key]) for r in rows if key in r and r[key] == r[key]]
    return statistics.median(xs) if xs else float("nan")


def _f(x: float, digits: int = 0) -> str:
    return "n/a" if x != x else f"{x:,.{digits}f}"


Column = tuple[str, Callable[[list[Row]], str]]


def _col(head: str, key: str, digits: int = 0) -> Column:
    return head, lambda rows: _f(_med(rows, key), digits)


def _table(title: str, res: dict[tuple[str, str], list[Row]], cols: list[Column]) -> list[str]:
    out = [
        f"| {title} | site | " + " | ".join(h for h, _ in cols) + " |",
        "|---|---|" + "---:|" * len(cols),
    ]
    for (stream, site), rows in res.items():
        out.append(f"| {stream} | {site} | " + " | ".join(fn(rows) for _, fn in cols) + " |")
    return out


MAIN_COLS = [
    _col("window s", "window_s", 1),
    _col("frames", "frames"),
    _col("main CPU ms", "cpu_ms"),
    _col("tasks", "tasks"),
    _col("tasks / frame", "tasks_pf", 2),
    _col("script ms", "script_ms"),
    _col("style ms", "style_ms"),
    _col("layout ms", "layout_ms"),
    _col("paint chain ms", "paint_ms"),
    _col("GC ms", "gc_ms"),
    _col("other ms", "other_ms"),
    _col("worker CPU ms", "worker_cpu_ms"),
]
RENDER_COLS = [
    _col("rendering ms", "render_ms"),
    _col("frame median ms", "frame_median_ms", 2),
    _col("worst frame ms", "frame_worst_ms", 1),
    _col("layouts", "layouts"),
    _col("forced", "forced_layouts"),
    _col("layouts / frame", "layouts_pf", 2),
    _col("frames with >= 2 layouts", "thrashing_frames"),
    _col("paints / frame", "paints_pf", 2),
    _col("Paint events / frame", "paint_events_pf", 2),
    _col("style recalcs", "style_recalcs"),
    _col("forced styles", "forced_styles"),
    _col("ParseHTML", "parse_html"),
    _col("ParseHTML ms", "parse_html_ms"),
    _col("IO computations", "intersections"),
    _col("longest task ms", "longest_task_ms", 1),
    _col("tasks >= 12.5 ms", "long_tasks"),
]
FIREFOX_COLS = [
    _col("window s", "window_s", 1),
    _col("frames (ticks)", "frames"),
    _col("main CPU ms", "cpu_ms"),
    _col("script ms", "script_ms"),
    _col("style ms", "style_ms"),
    _col("layout ms", "layout_ms"),
    _col("paint ms", "paint_ms"),
    _col("GC ms", "gc_ms"),
    _col("rendering ms", "render_ms"),
    _col("frame median ms", "frame_median_ms", 2),
    _col("worst frame ms", "frame_worst_ms", 1),
    _col("layouts", "layouts"),
    _col("forced", "forced_layouts"),
    _col("layouts / frame", "layouts_pf", 2),
    _col("frames with >= 2 layouts", "thrashing_frames"),
    _col("paints / frame", "paints_pf", 2),
    _col("style flushes", "style_recalcs"),
    _col("forced styles", "forced_styles"),
    _col("tasks >= 50 ms wall", "long_tasks_50ms_wall"),
]
# (figure, key, target, at most): issue #36's targets for the mixed answer
TARGETS = [
    ("rendering CPU ms", "render_ms", 1200.0),
    ("median frame ms (< 0.6)", "frame_median_ms", 0.6),
    ("layouts / frame", "layouts_pf", 1.0),
    ("paints / frame", "paints_pf", 1.0),
    ("tasks / frame", "tasks_pf", 2.5),
    ("main-thread CPU ms", "cpu_ms", 4000.0),
    ("tasks >= 12.5 ms CPU", "long_tasks", 0.0),
]


def doubling_table(res: dict[tuple[str, str], list[Row]]) -> list[str]:
    """Per shape and site: rendering CPU and the worst frame at n and 2n, and their ratios
    (of the runs' medians)."""
    out = [
        "| shape | site | rendering ms n | 2n | ratio (<= 2.2) | worst frame ms n | 2n "
        "| ratio (<= 1.2) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in SHAPES:
        for site in dict.fromkeys(s for _, s in res):
            pair = [
                rows
                for (stream, s), rows in res.items()
                if s == site and stream.startswith(name + " n=")
            ]
            if len(pair) != 2:
                continue
            r1, r2 = (_med(pair[0], "render_ms"), _med(pair[1], "render_ms"))
            w1, w2 = (_med(pair[0], "frame_worst_ms"), _med(pair[1], "frame_worst_ms"))
            out.append(
                f"| {name} | {site} | {_f(r1)} | {_f(r2)} | {_f(r2 / r1, 2) if r1 else 'n/a'} "
                f"| {_f(w1, 1)} | {_f(w2, 1)} | {_f(w2 / w1, 2) if w1 else 'n/a'} |"
            )
    return out


def targets_table(res: dict[tuple[str, str], list[Row]]) -> list[str]:
    out = ["| mixed answer vs issue #36 | site | figure | target | ok |", "|---|---|---|---:|---|"]
    for (stream, site), rows in res.items():
        if not stream.startswith("mixed") or site.startswith(PEER):  # pysse's targets
            continue
        for label, key, limit in TARGETS:
            v = _med(rows, key)
            ok = "yes" if v == v and v <= limit else "no"
            out.append(f"| {stream} | {site} | {label}: {_f(v, 2)} | {limit:g} | {ok} |")
    return out


# (figure, key, digits): the peer table's rows, the figures issue #41 compares
PEER_FIGURES = [
    ("main-thread CPU ms", "cpu_ms", 0),
    ("rendering ms (style + layout + paint chain)", "render_ms", 0),
    ("script ms", "script_ms", 0),
    ("style ms", "style_ms", 0),
    ("layout ms", "layout_ms", 0),
    ("paint chain ms", "paint_ms", 0),
    ("GC ms", "gc_ms", 0),
    ("tasks >= 12.5 ms CPU", "long_tasks", 0),
    ("longest task ms", "longest_task_ms", 1),
    ("tasks", "tasks", 0),
    ("frames", "frames", 0),
    ("worker CPU ms", "worker_cpu_ms", 0),
    ("window s", "window_s", 1),
]
PEER = "streamdown"


def peer_table(res: dict[tuple[str, str], list[Row]]) -> list[str]:
    """Per stream measured on the peer (a site named ``streamdown ...``): each figure of
    ``PEER_FIGURES`` for every site (medians of runs), then each pysse site's ratio to the
    peer (below 1: pysse does less)."""
    out: list[str] = []
    for stream in dict.fromkeys(st for st, _ in res):
        sites = [site for st, site in res if st == stream]
        peers = [site for site in sites if site.startswith(PEER)]
        if not peers:
            continue
        peer, ours = peers[0], [site for site in sites if site != peers[0]]
        runs = max(len(res[(stream, site)]) for site in sites)
        heads = [*ours, peer, *(f"{site} / {PEER}" for site in ours)]
        out += [
            f"| {stream}, Chromium 1x, median of {runs} runs | " + " | ".join(heads) + " |",
            "|---|" + "---:|" * len(heads),
        ]
        for label, key, digits in PEER_FIGURES:
            theirs = _med(res[(stream, peer)], key)
            mine = [_med(res[(stream, site)], key) for site in ours]
            cells = [_f(v, digits) for v in [*mine, theirs]]
            cells += [_f(ratio(v, theirs), 2) for v in mine]
            out.append(f"| {label} | " + " | ".join(cells) + " |")
        out.append("")
    return out


def tables(lines: list[dict[str, Any]]) -> list[str]:
    chromium: dict[tuple[str, str], list[Row]] = defaultdict(list)
    firefox: dict[tuple[str, str], list[Row]] = defaultdict(list)
    stacks: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for d in lines:
        key = (d["stream"], d["site"])
        if d["part"] == "chromium":
            chromium[key].append(d["row"])
            stacks[key].update(d.get("stacks", {}))
        elif d["part"] == "firefox":
            firefox[(f"{d['stream']}, {d['row'].get('version', '')}", d["site"])].append(d["row"])
    out: list[str] = []
    if chromium:
        out += _table("Chromium 1x, main thread CPU, median of runs", chromium, MAIN_COLS)
        out += ["", *_table("Chromium 1x, rendering, median of runs", chromium, RENDER_COLS)]
        doubling = doubling_table(chromium)
        out += ["", *([*doubling, ""] if len(doubling) > 2 else []), *targets_table(chromium), ""]
        out += peer_table(chromium)
    if firefox:
        title = "Firefox 1x, profiler markers: wall ms (main CPU: CPU ms), median of runs"
        out += [*_table(title, firefox, FIREFOX_COLS), ""]
    for (stream, site), counter in stacks.items():
        if stream.startswith("mixed") and any(not k.startswith("(no stack") for k in counter):
            out.append(f"Forced layouts' JavaScript stacks (top 3 frames), {stream}, {site}:")
            out += [f"- {n} x {sig}" for sig, n in counter.most_common(5)] + [""]
    return out


# -- main ------------------------------------------------------------------------------------------


def main() -> list[str]:
    only_tables = os.environ.get("PYSSE_RENDER_TABLES")
    out_path = Path(only_tables or os.environ.get("PYSSE_RENDER_OUT", "build/render-bench.jsonl"))
    if not only_tables:
        measure(out_path)
    lines = [json.loads(line) for line in out_path.read_text().splitlines() if line.strip()]
    result = tables(lines)
    print("\n".join(result), flush=True)
    return result


def measure(out_path: Path) -> None:
    """Every run, stream and site, interleaved (the sites' order alternates run by run), each
    row written to ``out_path`` as it comes: a run that fails or is stopped keeps what it
    measured, and a stream that fails is reported and skipped."""
    from playwright.sync_api import sync_playwright

    runs = int(os.environ.get("PYSSE_BENCH_RUNS", "3"))
    parts = set(os.environ.get("PYSSE_RENDER_PARTS", "chromium,firefox,peer").split(","))
    modes = [m for m in os.environ.get("PYSSE_RENDER_MODES", "worker,main").split(",") if m]
    sites = {"this branch": Path(os.environ["PYSSE_SITE"])}
    if os.environ.get("PYSSE_SITE_BASELINE"):
        sites = {"baseline": Path(os.environ["PYSSE_SITE_BASELINE"]), **sites}
    todo = streams()
    mixed = next((k for k in todo if k.startswith("mixed")), None)
    settings = " ".join(f"{k}={v}" for k, v in sorted(os.environ.items()) if k in SETTINGS)
    ref = os.environ.get("PYSSE_BASELINE_REF")
    baseline = f" --baseline {ref}" if ref and "baseline" in sites else ""
    only = os.environ.get("PYSSE_BENCH_ONLY", "render")
    command = f"{settings} python build.py bench --only {only}{baseline}".strip()
    print(f"command: {command}", flush=True)
    peer = None
    if {"chromium", "peer"} <= parts and mixed:
        peer = prepare()  # None (and one sentence why) if npm cannot install it
    for name, path in sites.items():
        print(f"site {name}: {path} (modes {modes or ['as built']})", flush=True)
    if peer is not None:
        print(f"site streamdown {peer[1]}: {peer[0]} (the mixed answer only)", flush=True)
    print(
        f"runs {runs}, parts {sorted(parts)}, streams {list(todo)}, "
        f"{DELTA_CHARS} chars / {DELTA_S * 1000:g} ms",
        flush=True,
    )
    print(f"load average at start: {os.getloadavg()}", flush=True)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw, ExitStack() as stack, out_path.open("w") as out:
        b = Bench(stack, pw, sites, modes, peer)

        def record(part: str, stream: str, site: str, i: int, row: Row, **extra: Any) -> None:
            line = {"part": part, "stream": stream, "site": site, "run": i, "row": row, **extra}
            out.write(json.dumps(line) + "\n")
            out.flush()
            shown = {k: round(v, 2) if isinstance(v, float) else v for k, v in row.items()}
            print(f"  run {i} {part} {site} {stream}: {json.dumps(shown)}", flush=True)

        for i in range(runs):
            order = b.sites if i % 2 == 0 else b.sites[::-1]
            jobs: list[tuple[str, str, Site]] = []
            for stream in todo:
                jobs += [
                    ("chromium", stream, s)
                    for s in order
                    if "chromium" in parts and (not s.peer or stream == mixed)
                ]
            if mixed:
                jobs += [("firefox", mixed, s) for s in order if "firefox" in parts and not s.peer]
            for part, stream, site in jobs:
                try:
                    if part == "firefox":
                        record(part, stream, site.name, i, b.firefox(site, todo[stream]))
                    else:
                        row, stacks = b.chromium(site, todo[stream])
                        record(part, stream, site.name, i, row, stacks=dict(stacks))
                except Exception as exc:  # one failed stream, not the run
                    print(f"  run {i} {part} {site.name} {stream} FAILED: {exc!r}"[:800])
    print(f"load average at end: {os.getloadavg()} ({os.cpu_count()} cores)", flush=True)


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
