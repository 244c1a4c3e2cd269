"""The first diagram's cost (issue #44): Mermaid's bytes on the wire, and from the answer's end
to the diagram on screen, on localhost and on Fast 4G (Chromium's emulation, as
``bench_network.py``: 60 ms, 9 Mbit/s), at CPU 1x; and the long tasks (50 ms or more: the
browser's ``longtask`` entries) while the answer streamed and after; and the same diagram
drawn again, warm (the theme switched to dark).

The page boots unthrottled (booting is ``bench_network``'s), then the network is throttled
and ``/demo diagram`` sent. Run: ``python -m bench.bench_diagrams`` (``PYSSE_SITE``: a
built site, ``build/site`` by default; ``PYSSE_BENCH_RUNS``: 3).
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path
from typing import Any

from bench.bench_network import LABEL, PROFILES
from pysse.server.app import create_app
from tests.support import CHROMIUM_ARGS, LiveServer

# In the page's clock: when the answer ended (body[data-streaming] off after it was on),
# when the first diagram's image had loaded, and every long task.
INIT = r"""
(() => {
  const w = window.__diagram = { long: [], streamed: null, ended: null, shown: null };
  new PerformanceObserver((l) => { for (const e of l.getEntries()) w.long.push([e.startTime, e.duration]); })
    .observe({ type: "longtask", buffered: true });
  new MutationObserver(() => {
    const on = document.body && document.body.dataset.streaming === "1";
    if (on && w.streamed === null) w.streamed = performance.now();
    if (!on && w.streamed !== null && w.ended === null) w.ended = performance.now();
    const img = document.querySelector("figure.diagram img");
    if (img && w.shown === null) {
      const done = () => { if (w.shown === null) w.shown = performance.now(); };
      if (img.complete) done(); else img.addEventListener("load", done);
    }
  }).observe(document, { subtree: true, childList: true, attributes: true });
})();
"""


def visit(browser: Any, url: str, profile: str) -> dict[str, Any]:
    ctx = browser.new_context(service_workers="block", viewport={"width": 1000, "height": 800})
    page = ctx.new_page()
    page.add_init_script(INIT)
    page.add_init_script("localStorage.setItem('pysse.settings.v1', '{}')")
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']", timeout=300_000)
    cdp = ctx.new_cdp_session(page)
    wire: dict[str, int] = {}
    urls: dict[str, str] = {}
    cdp.on(
        "Network.requestWillBeSent", lambda e: urls.__setitem__(e["requestId"], e["request"]["url"])
    )
    cdp.on(
        "Network.loadingFinished",
        lambda e: wire.__setitem__(urls.get(e["requestId"], ""), int(e["encodedDataLength"])),
    )
    cdp.send("Network.enable", {})
    conditions = PROFILES[profile]
    if conditions is not None:
        cdp.send("Network.emulateNetworkConditions", {"offline": False, **conditions})
    page.fill("[data-role=prompt]", "/demo diagram")
    page.press("[data-role=prompt]", "Enter")
    page.wait_for_function("() => window.__diagram.shown !== null", timeout=300_000)
    page.wait_for_timeout(300)
    got = page.evaluate("() => ({ ...window.__diagram, stats: pysse.view.stats.diagrams })")
    # drawn again (Mermaid loaded and warm): the dark theme, as a reader would switch to it
    page.evaluate("() => { document.documentElement.dataset.theme = 'dark'; }")
    page.wait_for_function("() => pysse.view.stats.diagrams.renders.length >= 2", timeout=60_000)
    again = page.evaluate("() => pysse.view.stats.diagrams.renders[1]")
    ctx.close()
    start, end = got["streamed"], got["ended"]
    during = [d for t, d in got["long"] if start <= t < end]
    after = [d for t, d in got["long"] if t >= end]
    mermaid = sum(b for u, b in wire.items() if "mermaid" in u)
    module = sum(b for u, b in wire.items() if u.endswith("diagrams.js"))
    return {
        "ms": got["shown"] - end,
        "load": got["stats"]["loadMs"],
        "render": got["stats"]["renders"][0],
        "again": again,
        "wire": mermaid,
        "module": module,
        "during": during,
        "after": after,
    }


def main() -> list[str]:
    from playwright.sync_api import sync_playwright

    site = Path(os.environ.get("PYSSE_SITE", "build/site"))
    runs = int(os.environ.get("PYSSE_BENCH_RUNS", "3"))
    raw = next(site.glob("boot/*/mermaid.min.js")).stat().st_size
    rows = [
        "| network | Mermaid on the wire | answer end -> diagram shown | of which loading Mermaid"
        " | first render | render again | long tasks while streaming | long tasks after |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    with sync_playwright() as pw, LiveServer(create_app(site)) as live:
        browser = pw.chromium.launch(
            executable_path=os.environ.get("PYSSE_CHROMIUM", "/usr/bin/chromium"),
            args=CHROMIUM_ARGS,
        )
        for profile in ("local", "fast4g"):
            got = [visit(browser, live.url + "/", profile) for _ in range(runs)]
            for g in got:
                print(profile, g, flush=True)
            med = {
                k: statistics.median(g[k] for g in got) for k in ("ms", "load", "render", "again")
            }
            after = sorted(round(d) for g in got for d in g["after"])
            rows.append(
                f"| {LABEL[profile]} | {got[0]['wire'] / 1e6:.2f} MB (+ diagrams.js "
                f"{got[0]['module'] / 1e3:.1f} KB) | {med['ms']:.0f} ms | {med['load']:.0f} ms"
                f" | {med['render']:.0f} ms | {med['again']:.0f} ms"
                f" | {sum(len(g['during']) for g in got)}"
                f" | {after} ms |"
            )
        browser.close()
    rows.append(f"\nMermaid's bundle: {raw / 1e6:.2f} MB raw; median of {runs} at CPU 1x.")
    print("\n".join(rows), flush=True)
    return rows


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
