"""In headless Chromium: page ready (cold and warm cache), the page's own first paint, parser
throughput in the browser against eventsource-parser (npm) in the same tab, and the longest
main-thread task while ``/demo long`` streams.

Needs ``PYSSE_SITE`` (the built site) and ``PYSSE_CHROMIUM``; ``python build.py bench`` sets
both. eventsource-parser is fetched with ``npm pack`` into .cache/bench (bench-only).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

from pysse.server.demo import _long_answer
from tests.support import CHROMIUM_ARGS, LiveServer

from . import corpus

ROOT = Path(__file__).resolve().parents[1]
ESP_VERSION = "3.1.1"


def eventsource_parser() -> Path:
    dest = ROOT / ".cache" / "bench" / f"eventsource-parser-{ESP_VERSION}.js"
    if dest.exists():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    out = subprocess.run(
        [
            "npm",
            "pack",
            f"eventsource-parser@{ESP_VERSION}",
            "--silent",
            "--pack-destination",
            str(dest.parent),
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()[-1]
    with tarfile.open(dest.parent / out) as tar:
        member = tar.getmember("package/dist/index.js")
        f = tar.extractfile(member)
        assert f is not None
        dest.write_bytes(f.read())
    return dest


READY_JS = """() => new Promise((res) => { const t = () => document.body.dataset.ready === '1'
  ? res({ready: window.pysseReadyAt, fcp: (performance.getEntriesByName('first-contentful-paint')[0]
  || {}).startTime}) : setTimeout(t, 10); t(); })"""

THROUGHPUT_JS = """async (args) => {
  const { createParser } = await import('/bench/eventsource-parser.js');
  const py = window.pysseRuntime;
  py.runPython(`
from pysse import SSEParser
def bench_reset():
    global _p, _n
    _p = SSEParser(max_line_bytes=1 << 24)
    _n = 0
def bench_feed(u8):
    global _n
    _n += len(_p.feed(u8.to_bytes()))
def bench_count():
    return _n
`);
  const reset = py.globals.get('bench_reset'), feed = py.globals.get('bench_feed');
  const count = py.globals.get('bench_count');
  const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };
  const out = {};
  for (const file of args.files) {
    const buf = new Uint8Array(await (await fetch(file)).arrayBuffer());
    for (const size of args.sizes) {
      const chunks = [];
      for (let i = 0; i < buf.length; i += size) chunks.push(buf.subarray(i, i + size));
      const jsT = [], pyT = [];
      let nJs = 0, nPy = 0;
      for (let r = 0; r < args.runs; r++) {
        nJs = 0;
        let t0 = performance.now();
        const dec = new TextDecoder();
        const p = createParser({ onEvent: () => { nJs++; } });
        for (const c of chunks) p.feed(dec.decode(c, { stream: true }));
        jsT.push(performance.now() - t0);
        t0 = performance.now();
        reset();
        for (const c of chunks) feed(c);
        pyT.push(performance.now() - t0);
        nPy = count();
      }
      out[file + ' @ ' + size] = { bytes: buf.length, js: med(jsT), py: med(pyT), nJs, nPy };
    }
  }
  return out;
}"""


MARKDOWN_PY = """
import json, time
from pysse.render import StreamingMarkdown, make_markdown, render

def parts(text, n):
    size = max(1, len(text) // n)
    return [text[i:i + size] for i in range(0, len(text), size)]

def inc(ps):
    md = StreamingMarkdown()
    for d in ps:
        md.feed(d)
    md.finish()

def naive(ps, every=50):
    md = make_markdown()
    acc = ""
    for i, d in enumerate(ps):
        acc += d
        if i % every == every - 1 or i == len(ps) - 1:
            render(acc, md)

def timed(fn, ps):
    t = time.perf_counter()
    fn(ps)
    return (time.perf_counter() - t) * 1000

single = json.loads(LONG_ANSWER_JSON)  # the demo's long answer, made in CPython
double = single + "\\n" + single
out = {}
for name, text, n in (("30 KB", single, 3000), ("60 KB (doubled)", double, 6000)):
    ps = parts(text, n)
    out[name] = [len(ps), min(timed(inc, ps) for _ in range(3)), timed(naive, ps)]
json.dumps(out)
"""


def main(runs: int = 5) -> list[str]:
    from playwright.sync_api import sync_playwright

    from pysse.server.app import create_app

    site = Path(os.environ["PYSSE_SITE"])
    bench_dir = site / "bench"
    bench_dir.mkdir(exist_ok=True)
    shutil.copy2(eventsource_parser(), bench_dir / "eventsource-parser.js")
    (bench_dir / "openai.sse").write_bytes(corpus.openai_chat())
    (bench_dir / "anthropic.sse").write_bytes(corpus.anthropic())
    with LiveServer(create_app(site)) as server:
        rows: list[str] = []
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=os.environ.get("PYSSE_CHROMIUM", "/usr/bin/chromium"),
                args=CHROMIUM_ARGS,
            )
            cold, warm, fcp = [], [], []
            for _ in range(runs):
                ctx = browser.new_context()
                page = ctx.new_page()
                page.goto(server.url + "/")
                r = page.evaluate(READY_JS)
                cold.append(r["ready"])
                fcp.append(r["fcp"])
                page.reload()
                warm.append(page.evaluate(READY_JS)["ready"])
                ctx.close()
            rows += [
                f"| page (headless Chromium, median of {runs}) | ms |",
                "|---|---:|",
                f"| first contentful paint (the page's own UI) | {statistics.median(fcp):.0f} |",
                f"| ready to send, cold cache | {statistics.median(cold):.0f} |",
                f"| ready to send, warm cache | {statistics.median(warm):.0f} |",
                "",
            ]
            print("\n".join(rows), flush=True)

            ctx = browser.new_context()
            page = ctx.new_page()
            page.goto(server.url + "/")
            page.evaluate(READY_JS)
            res: dict[str, Any] = page.evaluate(
                THROUGHPUT_JS,
                {
                    "files": ["/bench/openai.sse", "/bench/anthropic.sse"],
                    "sizes": [65536, 1400, 64],
                    "runs": runs,
                },
            )
            t_rows = [
                "| stream @ chunk | pysse in Pyodide MB/s | eventsource-parser + TextDecoder MB/s "
                "| pysse / JS |",
                "|---|---:|---:|---:|",
            ]
            for key, v in res.items():
                if v["nJs"] != v["nPy"]:
                    raise SystemExit(f"event counts differ on {key}: {v}")
                mb = v["bytes"] / 1e6
                t_rows.append(
                    f"| {key.removeprefix('/bench/')} | {mb / (v['py'] / 1000):.1f} | "
                    f"{mb / (v['js'] / 1000):.1f} | {v['js'] / v['py']:.2f}x |"
                )
            print("\n".join(t_rows), flush=True)
            rows += [*t_rows, ""]
            ctx.close()

            ctx = browser.new_context()
            page = ctx.new_page()
            page.goto(server.url + "/")
            page.evaluate(READY_JS)
            md = json.loads(
                page.evaluate(
                    "(code) => window.pysseRuntime.runPython(code)",
                    f"LONG_ANSWER_JSON = {json.dumps(json.dumps(_long_answer(30_000)))}\n"
                    + MARKDOWN_PY,
                )
            )
            md_rows = [
                "| render work in Pyodide | deltas | incremental | naive (1 full render / 50 deltas) |",
                "|---|---:|---:|---:|",
            ]
            for name, (n, inc, nai) in md.items():
                md_rows.append(f"| {name} | {n} | {inc:.0f} ms | {nai:.0f} ms |")
            (i1, n1), (i2, n2) = [(v[1], v[2]) for v in md.values()]
            md_rows += [
                "",
                f"doubling the answer costs: incremental {i2 / i1:.2f}x, naive {n2 / n1:.2f}x",
            ]
            print("\n".join(md_rows), flush=True)
            rows += [*md_rows, ""]
            ctx.close()

            ctx = browser.new_context()
            page = ctx.new_page()
            page.add_init_script("""window.__long = []; new PerformanceObserver((l) => {
                for (const e of l.getEntries()) window.__long.push(e.duration); })
                .observe({type: 'longtask', buffered: true});
                window.__frames = 0; (function t(){ window.__frames++; requestAnimationFrame(t); })();""")
            page.goto(server.url + "/")
            page.evaluate(READY_JS)
            # Measure the stream, not the end of boot: wait for the idle warm-up to finish.
            page.wait_for_selector("body[data-warm='1']", timeout=30_000)
            page.wait_for_timeout(200)
            long_rows = ["| /demo long (30 KB) | value |", "|---|---:|"]
            for _ in range(1):
                page.evaluate("window.__long = []")
                f0 = page.evaluate("window.__frames")
                page.fill("[data-role=prompt]", "/demo long")
                page.press("[data-role=prompt]", "Enter")
                page.wait_for_function(
                    "() => { const m = document.querySelector("
                    "'[data-role=assistant]'); return m && m.dataset.state "
                    "!== 'streaming'; }",
                    timeout=120_000,
                )
                frames = page.evaluate("window.__frames") - f0
                long_tasks = page.evaluate("window.__long") or []
                stats = json.loads(page.evaluate("pysse.stats()"))["turns"][-1]
                longest = (
                    f"{max(long_tasks):.0f} ms ({len(long_tasks)} tasks >= 50 ms)"
                    if long_tasks
                    else "none >= 50 ms (Long Tasks API)"
                )
                long_rows += [
                    f"| longest main-thread task while streaming | {longest} |",
                    f"| renders / frames elapsed | {stats['renders']} / {frames} |",
                    f"| longest single render | {stats['longest_render_ms']:.1f} ms |",
                    f"| chunks, SSE events | {stats['chunks']}, {stats['sse_events']} |",
                ]
            print("\n".join(long_rows), flush=True)
            rows += long_rows
            browser.close()
    return rows


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
