"""The frame budget (issue 28), ``python -m bench.bench_frames [--no-browser]`` (with the
venv's Python and ``PYTHONPATH=.``; ``python build.py site`` first for the Pyodide rows):
what one ``StreamingMarkdown.update()`` costs, before and after the budget, side by side in
one run.

* **Where**: CPython (CPU time of this process), Pyodide in Node (wall clock), and the page's
  own Pyodide in Chromium at 1x and with the CPU throttled 4x (DevTools' "mid-tier mobile":
  ``Emulation.setCPUThrottlingRate``), the same Python run with ``pysseRuntime.runPython``.
* **What**: a long mixed answer (~56 KB: headings, an 80-row table, nested lists, a
  140-function code block, task items, math, paragraphs: issue 28's) streamed at 24
  characters a frame (one ``update()`` per frame, then ``end()`` and the updates to the
  final one; before: ``finish()``), and as a *firehose* (the whole answer in one
  ``append``); the answer shapes and a hostile paragraph (40,000 ``[`` and text) as
  firehoses. Per case: updates, the median and the worst update, and the cost of an update
  that takes a full budget of text.
* ``costs``: what each character class costs in CPython, in plain-character units (the
  measurements behind ``pysse.render.budget.WEIGHTS``).

Compare ratios in one run, not absolute times: a shared 2-core machine.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pysse.render.budget import BUDGET, WEIGHTS
from pysse.server.shapes import SHAPES

from .markdown_variants import LOAD_PY, ROOT, variants

FRAMES_PY = (
    LOAD_PY
    + """
import json, statistics, sys, time
clock = time.perf_counter if sys.platform == "emscripten" else time.process_time

def frames(cls, render, text, budget, delta):
    '''One update per frame, ``delta`` characters appended before each (None: all at once),
    then the finishing updates; the time of each update, and of those that took a full
    budget of text.'''
    md = make_md(cls, budget)
    sliced = hasattr(md, "end")
    times, full = [], []
    def timed():
        t = clock()
        out = md.update()
        took = clock() - t
        times.append(took)
        if sliced and md.taken >= 0.9 * budget:
            full.append(took)
        return out
    step = delta or len(text)
    for i in range(0, len(text), step):
        md.append(text[i:i + step])
        timed()
    if sliced:
        while md.busy:
            timed()
        md.end()
        while not timed().final:
            pass
    else:
        t = clock()
        md.finish()
        times.append(clock() - t)
    assert md.html == render(text), "final HTML differs from the one-shot render"
    return times, full

def run_frames(data):
    out = {}
    for label, name, files in data["variants"]:
        cls, render = load_variant(name, files)
        frames(cls, render, "# warm\\n\\n```python\\nx = 1\\n```\\n\\n| a |\\n|---|\\n| $x^2$ |\\n",
               data["budget"], None)
        rows = out[label] = {}
        for case, (text, delta) in data["cases"].items():
            runs = [frames(cls, render, text, data["budget"], delta) for _ in range(data["runs"])]
            worst = sorted(max(t) for t, _ in runs)[len(runs) // 2]
            med = sorted(statistics.median(t) for t, _ in runs)[len(runs) // 2]
            full = [x for _, f in runs for x in f]
            rows[case] = {
                "updates": len(runs[0][0]),
                "median": med * 1000,
                "worst": worst * 1000,
                "full": statistics.median(full) * 1000 if full else None,
                "full_max": max(full) * 1000 if full else None,
            }
    return out
"""
)


def mixed_answer() -> str:
    """~56 KB in the shape of issue 28's answer: headings, an 80-row table, nested lists, a
    140-function code block, task items, math and paragraphs."""
    para = (
        "A paragraph with **bold**, *italic*, `code`, a [link](https://e.example/{i}) and "
        "some plain words that carry on for a while, as an answer's prose does. "
    )
    out = ["# A long mixed answer\n\n"]
    for i in range(20):
        out.append(f"## Part {i}\n\n" + para.format(i=i) * 4 + "\n\n")
        out.append(
            "".join(f"- item {i}.{j} with *emphasis*\n  - nested {j}\n" for j in range(8)) + "\n"
        )
        out.append(f"- [x] done {i}\n- [ ] to do {i}\n\n")
        out.append(f"The formula $a_{i} = \\frac{{x^2 + {i}}}{{2}}$ and\n\n$$\\sum_k k^{i}$$\n\n")
    rows = "".join(f"| {r} | name {r} | {r * r} | `v{r}` |\n" for r in range(80))
    out.append("| # | name | square | value |\n|---|---|---:|---|\n" + rows + "\n")
    code = "".join(f"def f_{i}(x):\n    return x * {i} + len('{i}')\n\n" for i in range(140))
    out.append(f"```python\n{code}```\n\n")
    for i in range(20, 50):
        out.append(f"## Part {i}\n\n" + para.format(i=i) * 6 + "\n\n")
    return "".join(out)


def cases(shapes: bool = True) -> dict[str, tuple[str, int | None]]:
    mixed = mixed_answer()
    out: dict[str, tuple[str, int | None]] = {
        f"mixed {len(mixed) // 1000} KB, 24 chars/frame": (mixed, 24),
        f"mixed {len(mixed) // 1000} KB, firehose": (mixed, None),
    }
    if shapes:
        out.update({f"{name} (firehose)": (make(200), None) for name, make in SHAPES.items()})
        out["40,000 [ and text (firehose)"] = ("[" * 40_000 + " and text" * 100 + "\n", None)
    return out


def frames_data(runs: int, shapes: bool = True) -> dict[str, Any]:
    return {"cases": cases(shapes), "runs": runs, "budget": BUDGET, "variants": variants()}


def frames_cpython(runs: int) -> dict[str, Any]:
    scope: dict[str, Any] = {}
    exec(compile(FRAMES_PY, "frames", "exec"), scope)
    return dict(scope["run_frames"](frames_data(runs)))


NODE = r"""
const { pathToFileURL } = require("url");
(async () => {
  const [dir, wheelsJson, code, inputPath] = process.argv.slice(2);
  const input = require("fs").readFileSync(inputPath, "utf8");
  const { loadPyodide } = await import(pathToFileURL(dir + "/pyodide.mjs").href);
  const py = await loadPyodide({ indexURL: dir + "/" });
  await py.loadPackage(JSON.parse(wheelsJson), { messageCallback: () => {} });
  py.globals.set("INPUT", input);
  process.stdout.write(py.runPython(code));
})().catch((e) => { console.error(e); process.exit(1); });
"""


def _site() -> Path:
    return Path(os.environ.get("PYSSE_SITE", ROOT / "build" / "site"))


def frames_pyodide(runs: int) -> dict[str, Any] | None:
    node, site = shutil.which("node"), _site()
    if not node or not (site / "site.json").exists():
        print("(Pyodide: skipped, needs node and a built site: python build.py site)")
        return None
    wheels = [str(site / w) for w in json.loads((site / "site.json").read_text())["wheels"]]
    code = FRAMES_PY + "\njson.dumps(run_frames(json.loads(INPUT)))\n"
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "run.js").write_text(NODE)
        (Path(tmp) / "input.json").write_text(json.dumps(frames_data(runs)))
        args = [str(site / "pyodide" / "314.0.7"), json.dumps(wheels), code]
        proc = subprocess.run(
            [node, str(Path(tmp) / "run.js"), *args, str(Path(tmp) / "input.json")],
            capture_output=True,
            text=True,
            timeout=3600,
        )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    return dict(json.loads(proc.stdout))


def frames_chromium(runs: int, rates: tuple[float, ...] = (1.0, 4.0)) -> dict[str, Any]:
    """The same Python in the page's own Pyodide, at each CPU throttling rate."""
    from playwright.sync_api import sync_playwright

    from pysse.server.app import create_app
    from tests.support import CHROMIUM_ARGS, LiveServer

    data = json.dumps(frames_data(runs, shapes=False))
    code = FRAMES_PY + "\njson.dumps(run_frames(json.loads(INPUT)))\n"
    out: dict[str, Any] = {}
    with LiveServer(create_app(_site())) as server, sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=os.environ.get("PYSSE_CHROMIUM", "/usr/bin/chromium"),
            args=CHROMIUM_ARGS,
        )
        for rate in rates:
            ctx = browser.new_context()
            page = ctx.new_page()
            page.goto(server.url + "/")
            page.wait_for_selector("body[data-ready='1']", timeout=120_000)
            page.wait_for_selector("body[data-warm='1']", timeout=60_000)
            ctx.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": rate})
            got = page.evaluate(
                "([code, input]) => { pysseRuntime.globals.set('INPUT', input);"
                " return pysseRuntime.runPython(code); }",
                [code, data],
            )
            out[f"{rate:g}x"] = json.loads(got)
            ctx.close()
        browser.close()
    return out


def frame_rows(title: str, res: dict[str, Any]) -> list[str]:
    after, before = res["after"], res.get("before", {})
    rows = [
        f"| {title} | updates | median update | **worst update** | update at the budget "
        "(median / max) |",
        "|---|---:|---:|---:|---:|",
    ]

    def pair(case: str, key: str, fmt: str) -> str:
        now = format(after[case][key], fmt)
        return f"{format(before[case][key], fmt)} → {now}" if case in before else now

    for case, r in after.items():
        full = f"{r['full']:.2f} / {r['full_max']:.2f} ms" if r["full"] is not None else "-"
        rows.append(
            f"| {case} | {pair(case, 'updates', 'd')} | {pair(case, 'median', '.2f')} ms "
            f"| **{pair(case, 'worst', '.1f')} ms** | {full} |"
        )
    return rows


def costs() -> list[str]:
    """Units per character class, measured: a render's time over a plain character's."""
    from pysse.render import make_markdown, render
    from pysse.render.highlight import HighlightJob

    md = make_markdown()

    def took(text: str) -> float:
        render(text, md)
        samples = []
        for _ in range(5):
            t = time.process_time()
            render(text, md)
            samples.append(time.process_time() - t)
        return statistics.median(samples)

    plain = took("word " * 20_000) / 100_000
    rows = [
        f"plain character: {plain * 1e6:.4f} µs (one unit)",
        "",
        "| class | example | measured units | WEIGHTS |",
        "|---|---|---:|---:|",
    ]
    for c in sorted(WEIGHTS, key=WEIGHTS.__getitem__, reverse=True):
        if c == "\n":
            measured = took("- item word\n" * 2_000) / 2_000 / plain
            rows.append(f"| line | a list item | {measured:.0f} | {WEIGHTS[c]} |")
            continue
        if c == "|":
            t = took("|h|h|h|h|h|\n|-|-|-|-|-|\n" + "|a|b|c|d|e|\n" * 1_000) / 6_000 / plain
            rows.append(f"| `\\|` | a table cell | {t:.0f} | {WEIGHTS[c]} |")
            continue
        measured = (took(("ab" + c + " ") * 2_000) - plain * 6_000) / 2_000 / plain
        rows.append(f"| `{c}` | `ab{c} ` | {measured:.0f} | {WEIGHTS[c]} |")
    code = "".join(f"def f_{i}(x):\n    return x * {i} + 'abc'\n" for i in range(500))
    samples = []
    for _ in range(3):
        from pysse.render import highlight

        highlight._done.clear()
        t = time.process_time()
        HighlightJob(code, "python").run()
        samples.append(time.process_time() - t)
    hl = statistics.median(samples) / len(code) / plain
    rows.append(f"| highlighted code (python) | 500 functions | {hl:.0f} | HIGHLIGHT_WEIGHT |")
    return rows


def main(runs: int = 3, browser: bool = True) -> list[str]:
    print(f"frame budget: {BUDGET} units; load average {os.getloadavg()[0]:.1f}", flush=True)
    rows = frame_rows("CPython", frames_cpython(runs))
    print("\n".join(rows), "", sep="\n", flush=True)
    res = frames_pyodide(runs)
    if res is not None:
        py_rows = frame_rows("Pyodide (Node)", res)
        print("\n".join(py_rows), "", sep="\n", flush=True)
        rows += ["", *py_rows]
    if browser:
        for rate, r in frames_chromium(runs).items():
            ch_rows = frame_rows(f"Chromium's Pyodide, CPU {rate}", r)
            print("\n".join(ch_rows), "", sep="\n", flush=True)
            rows += ["", *ch_rows]
    return rows


if __name__ == "__main__":
    if "costs" in sys.argv[1:]:
        print("\n".join(costs()))
    else:
        main(browser="--no-browser" not in sys.argv)
