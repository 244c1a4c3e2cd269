"""What installing pysse costs a page that already runs Pyodide (docs/embedding.md).

1. Bytes: each file ``build.py wheels`` writes, as it is and as a host that compresses would
   send it (gzip -9, brotli 11). Wheels are zip archives: compression gains ~nothing, which is
   why ``build.py site`` writes no ``.br``/``.gz`` beside them.
2. In headless Chromium, cold (a fresh context per load), loads interleaved in one run, medians:
   ``loadPyodide()`` alone (the page's own cost, the baseline), then the same followed by
   ``installPysse(pyodide)`` (micropip from its wheel, ``micropip.install`` from the simple
   index, each module imported). Requests, bytes on the wire (``responseBodySize``) and the
   time each step took.

Served by ``python -m http.server`` from ``build.py examples``' output, as a user would.
Needs ``PYSSE_EXAMPLES`` and ``PYSSE_CHROMIUM``; ``python build.py bench --only embed`` sets them.
"""

from __future__ import annotations

import gzip
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

import brotli

from tests.support import CHROMIUM_ARGS, ServerProcess, chromium_path, free_port

LOAD = """async ([base, options]) => {
  const t0 = performance.now();
  const { loadPyodide } = await import(base + "/pyodide/314.0.7/pyodide.mjs");
  const py = await loadPyodide();
  const t1 = performance.now();
  if (options) {
    const { installPysse } = await import(base + "/pysse/install.js");
    await installPysse(py, options);
  }
  return { pyodide: t1 - t0, install: performance.now() - t1 };
}"""


def sizes(path: Path) -> tuple[int, int, int]:
    data = path.read_bytes()
    return len(data), len(gzip.compress(data, 9, mtime=0)), len(brotli.compress(data, quality=11))


def byte_rows(examples: Path) -> list[str]:
    index = examples / "pysse"
    manifest = json.loads((index / "wheels.json").read_text())
    files = [(w["project"], index / w["url"]) for w in manifest["wheels"]]
    files.append(("micropip (if the page has none)", index / manifest["micropip"]["url"]))
    files += [(name, index / name) for name in ("install.js", "bridge.js", "dom_writer.js")]
    rows = ["| file | bytes | gzip -9 | brotli 11 |", "|---|---:|---:|---:|"]
    total = [0, 0, 0]
    for name, path in files:
        raw, gz, br = sizes(path)
        if not name.startswith("micropip"):
            total = [total[0] + raw, total[1] + gz, total[2] + br]
        rows.append(f"| {name} `{path.name}` | {raw:,} | {gz:,} | {br:,} |")
    rows.append(f"| **pysse[markdown], all** | **{total[0]:,}** | {total[1]:,} | {total[2]:,} |")
    pyodide = examples / "pyodide" / "314.0.7"
    core = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")
    raw = sum((pyodide / f).stat().st_size for f in core)
    gz = sum(len(gzip.compress((pyodide / f).read_bytes(), 6, mtime=0)) for f in core)
    rows.append(  # brotli 11 of 13 MB takes minutes on a busy machine: docs/boot.md has it
        f"| (for scale: the page's own Pyodide, {', '.join(core)}) | {raw:,} | {gz:,} (-6) | - |"
    )
    return rows


def one_load(browser: Any, origin: str, options: dict[str, Any] | None) -> dict[str, float]:
    context = browser.new_context()
    page = context.new_page()
    responses: list[Any] = []
    page.on("requestfinished", lambda r: responses.append(r))
    try:
        page.goto(origin + "/")
        times = page.evaluate(LOAD, [origin, options])
        body = sum(r.sizes()["responseBodySize"] for r in responses)
        return {**times, "requests": len(responses), "bytes": body}
    finally:
        context.close()


def med(values: list[float]) -> float:
    return statistics.median(values)


def main(runs: int = 5) -> list[str]:
    from playwright.sync_api import sync_playwright

    examples = Path(os.environ["PYSSE_EXAMPLES"])
    rows = byte_rows(examples)
    print("\n".join(rows), flush=True)
    port = free_port()
    argv = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1"]
    static = ServerProcess([*argv, "--directory", str(examples), str(port)], port)
    variants: dict[str, dict[str, Any] | None] = {
        "loadPyodide() only": None,
        "+ installPysse(py)": {},
        "+ installPysse(py, {highlight: false})": {"highlight": False},
    }
    results: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            for _ in range(runs):  # interleaved: the machine's load hits every variant alike
                for name, options in variants.items():
                    results[name].append(one_load(browser, static.url, options))
            browser.close()
    finally:
        static.stop()
    load = os.getloadavg()
    t_rows = [
        f"cold loads in headless Chromium, medians of {runs} (load average "
        f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f})",
        "| page | requests | bytes | loadPyodide ms | install ms | install / loadPyodide |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, rs in results.items():
        ratio = [r["install"] / r["pyodide"] for r in rs]
        t_rows.append(
            f"| {name} | {med([r['requests'] for r in rs]):.0f} | {med([r['bytes'] for r in rs]):,.0f}"
            f" | {med([r['pyodide'] for r in rs]):,.0f} | {med([r['install'] for r in rs]):,.0f}"
            f" | {med(ratio):.2f} |"
        )
    print("\n".join(t_rows), flush=True)
    return [*rows, "", *t_rows]


if __name__ == "__main__":
    sys.exit(0 if main(int(os.environ.get("PYSSE_BENCH_RUNS", "5"))) else 1)
