"""Render work for a growing answer, ``python build.py bench --only markdown``.

1. **Shapes** (issue 15), in CPython and in Pyodide (Node + the npm package): each answer
   shape of ``pysse/server/shapes.py`` (one long code block, table, flat / nested / loose
   list, blockquote, single-line paragraph, and a mixed answer), and two hostile paragraphs
   (issue 16: brackets, which markdown-it parses slowest) at n and 2n units, fed in
   deltas of 6 characters with one ``update()`` every 3 deltas (about a frame). Total work
   when the answer doubles should be ~2x (linear), and the worst single update should not
   grow (~1x). The naive baseline (a full re-render per update, which is what one long block
   cost before issue 15: the whole block was the tail) is shown at n.
2. **Chromium, CPU throttled 4x** (DevTools ``Emulation.setCPUThrottlingRate``): ``/demo
   table`` (500 rows) and ``/demo code`` (300 lines) through the page; main-thread long
   tasks >= 50 ms while they stream (Long Tasks API).
3. The demo's ~30 KB mixed answer against the naive full re-render per delta (the older table).

Each cell is a median of ``runs`` timings; compare ratios, not absolute times (a shared
2-core machine).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from buildtools.pyodide_node import PyodideRunError, run_with_wheels
from pysse.render import StreamingMarkdown, make_markdown, render
from pysse.render.budget import BUDGET
from pysse.server.demo import _long_answer
from pysse.server.shapes import SHAPES

from .markdown_variants import LOAD_PY, variants

ROOT = Path(__file__).resolve().parents[1]
# Units per shape for n: each answer is ~8-10 KB at n.
UNITS = {
    "code": 240,
    "table": 120,
    "flat_list": 180,
    "nested_list": 400,
    "loose_list": 250,
    "blockquote": 200,
    "paragraph": 100,
    "mixed": 300,
}
DELTA, EVERY = 6, 3  # characters per delta, deltas per update

# Runs the same in CPython and in Pyodide, for each variant (markdown_variants.py): total
# and worst update (ms) of a stream, naive total (ms). The worst update includes finishing:
# before, finish() in one go; after, the updates after end() (the page's contract).
SHAPES_PY = (
    LOAD_PY
    + """
import json, sys, time

# CPU time of this process where it is meaningful: other jobs on a shared machine do not
# count (Pyodide in Node: wall-clock time).
clock = time.perf_counter if sys.platform == "emscripten" else time.process_time

def stream(cls, render, text, delta, every):
    md = make_md(cls, BUDGET)
    spent = {"total": 0.0, "worst": 0.0, "updates": 0}
    def timed(call):
        t = clock()
        out = call()
        took = clock() - t
        spent["total"] += took
        spent["worst"] = max(spent["worst"], took)
        spent["updates"] += 1
        return out
    for i in range(0, len(text), delta):
        md.append(text[i:i + delta])
        if (i // delta) % every == every - 1:
            timed(md.update)
    if hasattr(md, "end"):
        md.end()
        while not timed(md.update).final:
            pass
    else:
        timed(md.finish)
    assert md.html == render(text), "final HTML differs from the one-shot render"
    return spent["total"] * 1000, spent["worst"] * 1000, spent["updates"]

def naive(render, make_markdown, text, delta, every):
    md = make_markdown()
    t = clock()
    step = delta * every
    for end in range(step, len(text) + step, step):
        render(text[:end], md)
    return (clock() - t) * 1000

def med(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]

def run_shapes(data):
    global BUDGET
    BUDGET = data["budget"]
    out = {}
    for label, name, files in data["variants"]:
        cls, render = load_variant(name, files)
        rows = out[label] = {}
        for shape, (small, big) in data["texts"].items():
            stream(cls, render, small[: len(small) // 4], data["delta"], data["every"])  # warm-up
            row = {"size": [len(small), len(big)]}
            for key, text in (("n", small), ("2n", big)):
                runs = [stream(cls, render, text, data["delta"], data["every"])
                        for _ in range(data["runs"])]
                row[key] = [med([r[0] for r in runs]), med([r[1] for r in runs]), runs[0][2]]
            if data["naive"] and label == "after":
                from pysse.render import make_markdown
                row["naive"] = naive(render, make_markdown, small, data["delta"], data["every"])
            rows[shape] = row
    return out
"""
)

# Issue 16: one paragraph of what markdown-it parses slowest (every "[" runs all its inline
# rules and a link-label scan, ~300x a plain character), which cannot be cut where a
# construct stays open: it is cut provisionally (render/paragraph.py). Sizes in characters.
HOSTILE: dict[str, Callable[[int], str]] = {
    "brackets (hostile)": lambda n: "[" * n,
    "open links (hostile)": lambda n: "word [x " * (n // 8),
}
HOSTILE_N = 4000


def shape_texts() -> dict[str, tuple[str, str]]:
    texts = {name: (make(UNITS[name]), make(2 * UNITS[name])) for name, make in SHAPES.items()}
    texts.update({name: (make(HOSTILE_N), make(2 * HOSTILE_N)) for name, make in HOSTILE.items()})
    return texts


def shapes_data(runs: int, naive: bool) -> dict[str, Any]:
    return {
        "texts": shape_texts(),
        "delta": DELTA,
        "every": EVERY,
        "runs": runs,
        "naive": naive,
        "budget": BUDGET,
        "variants": variants(),
    }


def shapes_cpython(runs: int, naive: bool = True) -> dict[str, Any]:
    scope: dict[str, Any] = {}
    exec(compile(SHAPES_PY, "shapes", "exec"), scope)
    return dict(scope["run_shapes"](shapes_data(runs, naive)))


def shapes_pyodide(runs: int) -> dict[str, Any] | None:
    node = shutil.which("node")
    site = Path(os.environ.get("PYSSE_SITE", ROOT / "build" / "site"))
    if not node or not (site / "site.json").exists():
        print("(Pyodide: skipped, needs node and a built site: python build.py site)")
        return None
    cfg = json.loads((site / "site.json").read_text())
    wheels = [str(site / w) for w in cfg["wheels"]]
    data = shapes_data(runs, naive=False)
    code = SHAPES_PY + "\njson.dumps(run_shapes(json.loads(INPUT)))\n"
    try:
        out = run_with_wheels(code, json.dumps(data), site / "pyodide" / "314.0.7", wheels, 3600)
    except PyodideRunError as exc:
        raise SystemExit(str(exc)) from None
    return dict(json.loads(out))


def shape_rows(title: str, res: dict[str, Any]) -> list[str]:
    """One row per shape: the variants side by side (before -> after)."""
    after = res["after"]
    before = res.get("before", {})
    naive = any("naive" in r for r in after.values())
    rows = [
        f"| {title} | size n / 2n | updates at n | total n | total 2n/n | **worst update n** "
        f"| worst 2n | worst 2n/n |" + (" naive total at n |" if naive else ""),
        "|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if naive else ""),
    ]

    def pair(name: str, key: str, i: int, fmt: str) -> str:
        now = format(after[name][key][i], fmt)
        if name not in before:
            return now
        return f"{format(before[name][key][i], fmt)} → {now}"

    for name, r in after.items():
        (t1, w1, _), (t2, w2, _) = r["n"], r["2n"]
        row = (
            f"| {name} | {r['size'][0] / 1000:.1f} / {r['size'][1] / 1000:.1f} KB "
            f"| {pair(name, 'n', 2, 'd')} | {pair(name, 'n', 0, '.0f')} ms | {t2 / t1:.2f}x "
            f"| **{pair(name, 'n', 1, '.2f')} ms** | {pair(name, '2n', 1, '.2f')} ms "
            f"| {w2 / w1:.2f}x |"
        )
        if naive:
            row += f" {r['naive']:.0f} ms ({r['naive'] / t1:.0f}x) |"
        rows.append(row)
    return rows


THROTTLED_JS = """() => { const m = document.querySelector('[data-role=assistant]');
  return m && m.dataset.state !== 'streaming'; }"""


def throttled(rate: float = 4.0) -> list[str]:
    """``/demo table`` and ``/demo code`` in Chromium with the CPU throttled ``rate`` x."""
    from playwright.sync_api import sync_playwright

    from pysse.server.app import create_app
    from tests.support import CHROMIUM_ARGS, LiveServer

    site = Path(os.environ.get("PYSSE_SITE", ROOT / "build" / "site"))
    rows = [
        f"| Chromium, CPU throttled {rate:g}x | long tasks >= 50 ms | longest task "
        "| longest render | renders | chunks |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    with LiveServer(create_app(site)) as server, sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=os.environ.get("PYSSE_CHROMIUM", "/usr/bin/chromium"),
            args=CHROMIUM_ARGS,
        )
        for command in ("/demo table", "/demo code"):
            ctx = browser.new_context()
            page = ctx.new_page()
            page.add_init_script("""window.__long = []; new PerformanceObserver((l) => {
                for (const e of l.getEntries()) window.__long.push(e.duration); })
                .observe({type: 'longtask', buffered: true});""")
            page.goto(server.url + "/")
            page.wait_for_selector("body[data-ready='1']", timeout=120_000)
            page.wait_for_selector("body[data-warm='1']", timeout=60_000)
            page.wait_for_timeout(300)
            cdp = ctx.new_cdp_session(page)
            cdp.send("Emulation.setCPUThrottlingRate", {"rate": rate})
            page.evaluate("window.__long = []")
            page.fill("[data-role=prompt]", command)
            page.press("[data-role=prompt]", "Enter")
            page.wait_for_function(THROTTLED_JS, timeout=300_000)
            long_tasks = page.evaluate("window.__long") or []
            stats = json.loads(page.evaluate("pysse.stats()"))["turns"][-1]
            longest = f"{max(long_tasks):.0f} ms" if long_tasks else "-"
            rows.append(
                f"| {command} | {len(long_tasks)} | {longest} | "
                f"{stats['longest_render_ms']:.1f} ms | {stats['renders']} | {stats['chunks']} |"
            )
            print(rows[-1], flush=True)
            ctx.close()
        browser.close()
    return rows


def deltas(text: str, n: int) -> list[str]:
    size = max(1, len(text) // n)
    return [text[i : i + size] for i in range(0, len(text), size)]


def incremental(parts: list[str]) -> str:
    md = StreamingMarkdown()
    for d in parts:
        md.feed(d)
    md.finish()
    return md.html


def naive(parts: list[str], every: int = 1) -> str:
    """Full re-render of the whole text, once per ``every`` deltas (and at the end)."""
    md = make_markdown()
    acc = ""
    html = ""
    for i, d in enumerate(parts):
        acc += d
        if i % every == every - 1 or i == len(parts) - 1:
            html = render(acc, md)
    return html


def timed(fn: Callable[[list[str]], str], parts: list[str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn(parts)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def long_answer(runs: int = 3, every: int = 10) -> list[str]:
    single = _long_answer(30_000)
    double = single + "\n" + single.replace("# A long answer", "# Part two")
    rows = [
        f"| answer | deltas | incremental (1 update/delta) | naive (1 full render / {every} "
        "deltas) | naive / incremental |",
        "|---|---:|---:|---:|---:|",
    ]
    times: dict[str, tuple[float, float]] = {}
    for name, text, n in (("30 KB", single, 3000), ("60 KB (doubled)", double, 6000)):
        parts = deltas(text, n)
        assert incremental(parts) == render(text)
        inc = timed(incremental, parts, runs)
        nai = timed(lambda p: naive(p, every), parts, 1)  # slow enough that noise is small
        times[name] = (inc, nai)
        rows.append(
            f"| {name} | {len(parts)} | {inc * 1000:.0f} ms | {nai * 1000:.0f} ms | "
            f"{nai / inc:.1f}x |"
        )
        print(rows[-1], flush=True)
    (i1, n1), (i2, n2) = times["30 KB"], times["60 KB (doubled)"]
    rows.append("")
    rows.append(
        f"doubling the answer costs: incremental {i2 / i1:.2f}x (target <= 2.2), "
        f"naive {n2 / n1:.2f}x"
    )
    print(rows[-1])
    return rows


def main(runs: int = 3) -> list[str]:
    rows: list[str] = []
    print(f"deltas of {DELTA} characters, one update every {EVERY} deltas", flush=True)
    rows += shape_rows("CPython", shapes_cpython(runs))
    print("\n".join(rows), "", sep="\n", flush=True)
    res = shapes_pyodide(runs)
    if res is not None:
        py_rows = shape_rows("Pyodide (Node)", res)
        print("\n".join(py_rows), "", sep="\n", flush=True)
        rows += ["", *py_rows]
    if "--no-browser" not in sys.argv:
        rows += ["", *throttled()]
        print()
    rows += ["", *long_answer(runs, every=1 if "--full" in sys.argv else 10)]
    return rows


if __name__ == "__main__":
    main()
