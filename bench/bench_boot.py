"""Boot in headless Chromium (issue #14): the new boot side by side with the boot before it,
loads interleaved in the same run, medians of several runs.

Pages:

* ``before #14``: the old web/app.js (bench/legacy_app.js: Pyodide's stdlib compiled at every
  start, the wheels through loadPackage), every file sent as it is, as the old server did;
* ``snapshot``: the new boot (web/boot.js) restored from the build's memory snapshot, files
  sent with brotli (what Chromium asks of HTTPS and loopback hosts);
* ``snapshot, gzip only``: the same with gzip (what Chromium asks of a plain-HTTP LAN host);
* ``plain``: the new boot from a site built with ``--no-snapshot``, brotli.

Per load, in a persistent profile (cold: a fresh one; warm: the next navigation in it, with
its disk HTTP cache and V8's code cache; an incognito context would drop 10-30 MB files from
its memory cache and re-download them): ready (``pysseReadyAt``), the longest main-thread
task before ready (Long Tasks API) and the longest gap in a ``setTimeout(0)`` chain (the Long
Tasks API misses some blocking), bytes on the wire (CDP ``encodedDataLength``, until 2 s
after ready), and key latency: a key pressed every 100 ms from navigation to ready, measured
from the moment it was sent to the first animation frame after its ``input`` event.

Then, with Chromium's CPU throttled 4x (``Emulation.setCPUThrottlingRate``), ``/demo long``
streamed on a warm page: long tasks while it streams, and the latency of keys typed meanwhile.

Needs ``PYSSE_SITE`` (built with ``best=True``) and ``PYSSE_CHROMIUM``; ``python build.py
bench --only boot`` sets both and builds the ``--no-snapshot`` site beside it.
"""

from __future__ import annotations

import os
import shutil
import statistics
import string
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from pysse.server.app import create_app
from tests.support import CHROMIUM_ARGS, LiveServer

ROOT = Path(__file__).resolve().parents[1]
KEYS = string.ascii_lowercase + string.digits + string.ascii_uppercase
KEY_EVERY_S = 0.1

INIT = """
window.__long = []; window.__gaps = []; window.__keys = [];
new PerformanceObserver((l) => { for (const e of l.getEntries())
  window.__long.push([e.startTime, e.duration]); }).observe({type: 'longtask', buffered: true});
{ let last = performance.now(); const tick = () => { const t = performance.now();
  if (t - last > 50) window.__gaps.push([last, t - last]); last = t; setTimeout(tick, 0); };
  setTimeout(tick, 0); }
addEventListener('input', (e) => { const ch = e.data, t = performance.now();
  requestAnimationFrame(() => window.__keys.push([ch, t, performance.now()])); }, true);
document.addEventListener('DOMContentLoaded', () => {
  const p = document.querySelector('[data-role=prompt]'); if (p) p.focus();
  new MutationObserver(() => { if (document.body.dataset.ready === '1') console.debug('pysse-ready'); })
    .observe(document.body, { attributes: true });
});
"""
COLLECT = """() => ({ ready: window.pysseReadyAt || null, origin: performance.timeOrigin,
  long: window.__long, gaps: window.__gaps, keys: window.__keys,
  path: (window.pysseBoot || {}).path || 'legacy' })"""


def legacy_page(site: Path) -> None:
    """``legacy.html``: today's page with the old boot (its preloads and app.js)."""
    import build

    base = f"pyodide/{build.PYODIDE_VERSION}/"
    wheels = [p.relative_to(site).as_posix() for p in sorted(site.glob("wheels/simple/*/*/*.whl"))]
    order = [
        w for dep in ("mdurl", "markdown_it", "pygments", "pysse") for w in wheels if f"/{dep}" in w
    ]
    links = [
        f'<link rel="modulepreload" href="{base}{m}">' for m in ("pyodide.mjs", "pyodide.asm.mjs")
    ]
    links += [
        f'<link rel="preload" href="{u}" as="fetch" crossorigin>'
        for u in [
            f"{base}{f}" for f in ("pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
        ]
        + order
    ]
    html = (ROOT / "web" / "index.html").read_text()
    html = html.replace(
        "<!--boot: build.py writes preload links and the boot manifest here-->", "\n".join(links)
    )
    html = html.replace('src="app.js"', 'src="legacy-app.js"')
    html = html.replace(
        "<!--formats: build.py writes one option per provider format (pysse.providers) here-->",
        build.format_options(),
    )
    (site / "legacy.html").write_text(html)
    shutil.copy2(ROOT / "bench" / "legacy_app.js", site / "legacy-app.js")


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def p95(xs: list[float]) -> float:
    return sorted(xs)[max(0, int(len(xs) * 0.95 + 0.5) - 1)] if xs else float("nan")


class Load:
    """One navigation: its numbers."""

    def __init__(self, ctx: Any, url: str, keys: bool = True) -> None:
        page = ctx.pages[0] if ctx.pages else ctx.new_page()
        cdp = ctx.new_cdp_session(page)
        cdp.send("Network.enable")
        got: dict[str, float] = {}
        cdp.on(
            "Network.loadingFinished",
            lambda e: got.__setitem__(e["requestId"], e["encodedDataLength"]),
        )
        ready = [False]
        page.on(
            "console", lambda m: ready.__setitem__(0, True) if m.text == "pysse-ready" else None
        )
        sent: dict[str, float] = {}
        page.goto(url, wait_until="commit")
        start = time.time()
        for ch in KEYS if keys else "":
            if ready[0]:
                break
            time.sleep(max(0.0, start + KEY_EVERY_S * (len(sent) + 1) - time.time()))
            sent[ch] = time.time() * 1000
            page.keyboard.press(ch)
        page.wait_for_function(
            "() => document.body && document.body.dataset.ready === '1'", timeout=120_000
        )
        page.wait_for_timeout(2000)
        r = page.evaluate(COLLECT)
        cdp.detach()
        self.path = r["path"]
        self.ready = float(r["ready"])
        self.longest = max((d for s, d in r["long"] if s < self.ready), default=0.0)
        self.gap = max((d for s, d in r["gaps"] if s < self.ready), default=0.0)
        self.bytes = sum(got.values())
        frames = {ch: r["origin"] + frame for ch, _, frame in r["keys"]}
        # keys typed before the prompt existed are lost, not late: they are not counted
        self.keys = [
            frames[ch] - t
            for ch, t in sent.items()
            if ch in frames and t - r["origin"] < self.ready
        ]


@contextmanager
def persistent(pw: Any) -> Iterator[Any]:
    prof = tempfile.mkdtemp(prefix="pysse-bench-profile-")
    ctx = pw.chromium.launch_persistent_context(
        prof,
        executable_path=os.environ.get("PYSSE_CHROMIUM", "/usr/bin/chromium"),
        args=CHROMIUM_ARGS,
    )
    try:
        ctx.add_init_script(INIT)
        yield ctx
    finally:
        ctx.close()
        shutil.rmtree(prof, ignore_errors=True)


def boot_rows(
    pw: Any, pages: dict[str, str], runs: int
) -> tuple[list[str], dict[str, dict[str, list[Load]]]]:
    res: dict[str, dict[str, list[Load]]] = {p: {"cold": [], "warm": []} for p in pages}
    for i in range(runs):
        for name, url in pages.items():
            with persistent(pw) as ctx:
                for kind in ("cold", "warm"):
                    load = Load(ctx, url)
                    res[name][kind].append(load)
                    print(
                        f"  run {i} {name:22} {kind}: ready {load.ready:6.0f} longest {load.longest:5.0f}"
                        f" gap {load.gap:5.0f} keys max {max(load.keys, default=0):5.0f}"
                        f" ({len(load.keys)}) {load.bytes / 1e6:6.2f} MB [{load.path}]",
                        flush=True,
                    )
    rows = [
        f"| boot, median of {runs} | cold ready ms | cold longest task ms | cold longest timer gap ms "
        "| cold worst key ms | cold MB on the wire | warm ready ms | warm longest task ms "
        "| warm longest timer gap ms | warm worst key ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name in pages:
        c, w = res[name]["cold"], res[name]["warm"]
        rows.append(
            f"| {name} | {med([x.ready for x in c]):.0f} | {med([x.longest for x in c]):.0f} "
            f"| {med([x.gap for x in c]):.0f} | {med([max(x.keys, default=0) for x in c]):.0f} "
            f"| {med([x.bytes for x in c]) / 1e6:.2f} | {med([x.ready for x in w]):.0f} "
            f"| {med([x.longest for x in w]):.0f} | {med([x.gap for x in w]):.0f} "
            f"| {med([max(x.keys, default=0) for x in w]):.0f} |"
        )
    return rows, res


STREAM_DONE = """() => { const m = [...document.querySelectorAll('[data-role=assistant]')].at(-1);
  return m && m.dataset.state !== 'streaming'; }"""


def streaming_rows(pw: Any, pages: dict[str, str], runs: int) -> list[str]:
    """/demo long on a warm page with the CPU throttled 4x: long tasks, key latency."""
    res: dict[str, list[tuple[float, int, float, int]]] = {p: [] for p in pages}
    for i in range(runs):
        for name, url in pages.items():
            with persistent(pw) as ctx:
                Load(ctx, url, keys=False)  # fill the caches
                page = ctx.pages[0]
                page.goto(url)
                page.wait_for_selector("body[data-warm='1']", timeout=120_000)
                page.wait_for_timeout(500)
                cdp = ctx.new_cdp_session(page)
                cdp.send("Emulation.setCPUThrottlingRate", {"rate": 4})
                page.fill("[data-role=prompt]", "/demo long")
                t0 = page.evaluate("() => performance.now()")
                page.press("[data-role=prompt]", "Enter")
                sent: dict[str, float] = {}
                for ch in KEYS * 20:
                    if page.evaluate(STREAM_DONE):
                        break
                    time.sleep(0.15)
                    key = f"{ch}{len(sent)}"
                    sent[key] = time.time() * 1000
                    page.keyboard.press(ch)
                page.wait_for_function(STREAM_DONE, timeout=300_000)
                t1 = page.evaluate("() => performance.now()")
                cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})
                r = page.evaluate(COLLECT)
                long = [d for s, d in r["long"] if t0 <= s <= t1]
                # keys in order: the n-th key sent made the n-th input event after t0
                inputs = [r["origin"] + frame for _, t, frame in r["keys"] if t >= t0]
                lat = [f - s for f, s in zip(inputs, sent.values(), strict=False)]
                res[name].append((max(long, default=0.0), len(long), p95(lat), len(lat)))
                print(
                    f"  run {i} {name:22} x4 streaming: longest {res[name][-1][0]:.0f} ms, "
                    f"{len(long)} long tasks, key p95 {p95(lat):.0f} ms ({len(lat)} keys)",
                    flush=True,
                )
    rows = [
        f"| /demo long, CPU 4x, warm page, median of {runs} | longest task while streaming ms "
        "| tasks >= 50 ms | key latency p95 ms |",
        "|---|---:|---:|---:|",
    ]
    for name in pages:
        xs = res[name]
        rows.append(
            f"| {name} | {med([x[0] for x in xs]):.0f} | {med([x[1] for x in xs]):.0f} "
            f"| {med([x[2] for x in xs]):.0f} |"
        )
    return rows


def main(runs: int = 5, stream_runs: int = 3) -> list[str]:
    from playwright.sync_api import sync_playwright

    site = Path(os.environ["PYSSE_SITE"])
    plain_site = Path(os.environ.get("PYSSE_SITE_PLAIN", ""))
    legacy_page(site)
    with ExitStack() as stack, sync_playwright() as pw:

        def serve(path: Path, **kw: Any) -> str:
            return stack.enter_context(LiveServer(create_app(path, **kw))).url

        raw = serve(site, encodings=())
        pages = {
            "before #14": raw + "/legacy.html",
            "snapshot": serve(site) + "/",
            "snapshot, gzip only": serve(site, encodings=("gzip",)) + "/",
        }
        if plain_site.is_dir():
            pages["plain (--no-snapshot)"] = serve(plain_site) + "/"
        rows, res = boot_rows(pw, pages, runs)
        print("\n".join(rows), flush=True)
        before = med([x.bytes for x in res["before #14"]["cold"]])
        ratio = [
            f"cold bytes / before #14: {name} {med([x.bytes for x in r['cold']]) / before:.0%}"
            for name, r in res.items()
        ]
        print("\n".join(ratio), flush=True)
        s_rows = streaming_rows(
            pw, {"before #14": pages["before #14"], "snapshot": pages["snapshot"]}, stream_runs
        )
        print("\n".join(s_rows), flush=True)
    return [*rows, "", *ratio, "", *s_rows]


if __name__ == "__main__":
    sys.exit(0 if main(int(os.environ.get("PYSSE_BENCH_RUNS", "5"))) else 1)
