"""A first visit on a phone's network (issue #33): sites side by side in Debian's Chromium, each
load in a fresh browser context (a cold HTTP cache), on localhost and under DevTools' network
emulation (``Network.emulateNetworkConditions``, as NOTES.md measures networks):

* ``Fast 4G``: 60 ms latency, 9 Mbit/s down, 1.5 Mbit/s up;
* ``Slow 4G``: 150 ms latency, 1.6 Mbit/s down, 0.75 Mbit/s up.

Per load: **ready** (``body[data-ready='1']``, ms after navigation: the only thing it asks
of the page, so it measures any version of it), **bytes before ready** (the sum of
``Network.loadingFinished``'s ``encodedDataLength`` of everything that finished before
ready: the page's requests and its dedicated workers', attached with ``Target.setAutoAttach``;
the emulation throttles workers too), and **requests** (those loads). Medians of
``PYSSE_BENCH_RUNS`` runs (3), sites interleaved in each run.

Then the lazy bundles (``lazy`` in the boot manifest): for the first fence in a language the
page has not loaded, and for the first formula, what a bundle costs after ready: its bytes
on the wire and the time to fetch it cold on each network (``fetch()`` from the page, while
nothing else loads), and the time to install and import it in Pyodide under Node (booted as
the page boots; ``pysse.browser.lazy_assets.install`` and a first highlight or formula).

Sites (``PYSSE_NETWORK_SITES``, JSON ``{"name": "directory"}``; ``build.py bench --only
network`` builds them at brotli 11: this tree's site with its snapshot and without, and
with ``--baseline REF`` both of REF's) are served by the tests' static server
(``pysse.server.app.create_app(site)`` in ``LiveServer``), which sends the ``.br`` files to
Chromium (it asks loopback hosts for brotli). ``PYSSE_NETWORK_PROFILES`` chooses networks
(``local,fast4g,slow4g``).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from pysse.server.app import create_app
from tests.support import CHROMIUM_ARGS, LiveServer

PROFILES: dict[str, dict[str, Any] | None] = {
    "local": None,
    "fast4g": {"latency": 60, "downloadThroughput": 9e6 / 8, "uploadThroughput": 1.5e6 / 8},
    "slow4g": {"latency": 150, "downloadThroughput": 1.6e6 / 8, "uploadThroughput": 0.75e6 / 8},
}
LABEL = {"local": "localhost", "fast4g": "Fast 4G", "slow4g": "Slow 4G"}
READY_TIMEOUT_MS = 300_000
AFTER_READY_S = 1.0  # events of loads that ended before ready may arrive a little later

# When body[data-ready] becomes '1' (ms after navigation start), recorded by the page itself.
INIT = """
new MutationObserver((_, obs) => {
  if (document.body && document.body.dataset.ready === '1' && !window.__readyAt) {
    window.__readyAt = performance.now(); window.__origin = performance.timeOrigin; obs.disconnect();
  }
}).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-ready']});
"""


class Load:
    """One cold load of ``url`` in a fresh context of ``browser``, under ``conditions``."""

    def __init__(self, browser: Any, url: str, conditions: dict[str, Any] | None) -> None:
        self.finished: list[tuple[float, int]] = []  # (monotonic s, encodedDataLength)
        self.navigation: tuple[float, float] | None = None  # (monotonic s, wall s)
        ctx = browser.new_context()
        try:
            ctx.add_init_script(INIT)
            page = ctx.new_page()
            cdp = ctx.new_cdp_session(page)
            cdp.on("Network.requestWillBeSent", self._sent)
            cdp.on("Network.loadingFinished", self._finished)
            cdp.on("Target.receivedMessageFromTarget", self._from_worker)
            cdp.on("Target.attachedToTarget", lambda e: self._attach(cdp, e, conditions))
            cdp.send("Network.enable")
            if conditions is not None:
                cdp.send("Network.emulateNetworkConditions", {"offline": False, **conditions})
            cdp.send(
                "Target.setAutoAttach",
                {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": False},
            )
            page.goto(url, wait_until="commit", timeout=READY_TIMEOUT_MS)
            page.wait_for_function("() => window.__readyAt", timeout=READY_TIMEOUT_MS)
            time.sleep(AFTER_READY_S)
            ready_at, origin = page.evaluate("() => [window.__readyAt, window.__origin]")
            self.ready = float(ready_at)
            assert self.navigation is not None, "the document's request was not seen"
            mono0, wall0 = self.navigation
            ready_mono = mono0 + (float(origin) + self.ready) / 1000 - wall0
            before = [n for t, n in self.finished if t <= ready_mono]
            self.bytes = sum(before)
            self.requests = len(before)
            self.lazy_fetch: dict[str, float] = {}
        finally:
            ctx.close()

    def _sent(self, e: dict[str, Any]) -> None:
        if self.navigation is None and e.get("type") == "Document":
            self.navigation = (float(e["timestamp"]), float(e["wallTime"]))

    def _finished(self, e: dict[str, Any]) -> None:
        self.finished.append((float(e["timestamp"]), int(e["encodedDataLength"])))

    def _from_worker(self, e: dict[str, Any]) -> None:
        msg = json.loads(e["message"])
        if msg.get("method") == "Network.loadingFinished":
            self._finished(msg["params"])

    def _attach(self, cdp: Any, e: dict[str, Any], conditions: dict[str, Any] | None) -> None:
        """A dedicated worker: its loads counted too (and emulated, as the page's)."""
        calls: list[tuple[str, dict[str, Any]]] = [("Network.enable", {})]
        if conditions is not None:
            calls.append(("Network.emulateNetworkConditions", {"offline": False, **conditions}))
        calls.append(("Runtime.runIfWaitingForDebugger", {}))
        for i, (method, params) in enumerate(calls):
            message = json.dumps({"id": 1_000_000 + i, "method": method, "params": params})
            cdp.send(
                "Target.sendMessageToTarget", {"sessionId": e["sessionId"], "message": message}
            )


def manifest(site: Path) -> dict[str, Any]:
    html = (site / "index.html").read_text()
    m = re.search(r'id="pysse-boot">(.*?)</script>', html)
    return dict(json.loads(m.group(1).replace("<\\/", "</"))) if m else {}


def wire_bytes(site: Path, url: str) -> int:
    """What a file weighs on the wire (its brotli sibling, as the server sends it)."""
    path = site / url
    br = path.with_name(path.name + ".br")
    return (br if br.exists() else path).stat().st_size


# A lexer and math: what the first fence in a not-yet-loaded language and the first formula
# wait for (javascript: the lexer bundle most answers after Python meet; python: the largest
# common one).
LAZY = ("lexer:python", "lexer:javascript", "math:latex2mathml")

FETCH = """async ([url]) => {
  const t = performance.now();
  const r = await fetch(url, {cache: 'no-store'});
  const b = await r.arrayBuffer();
  return [performance.now() - t, b.byteLength];
}"""


def lazy_fetch_ms(browser: Any, url: str, files: list[str], conditions: Any) -> dict[str, float]:
    """Each of ``files`` fetched cold from the page (after it is ready), one at a time."""
    ctx = browser.new_context()
    try:
        page = ctx.new_page()
        cdp = ctx.new_cdp_session(page)
        cdp.send("Network.enable")
        page.goto(url + "site.json")  # the site's origin, and nothing else loading meanwhile
        if conditions is not None:
            cdp.send("Network.emulateNetworkConditions", {"offline": False, **conditions})
        return {f: float(page.evaluate(FETCH, [f])[0]) for f in files}
    finally:
        ctx.close()


INSTALL = r"""
import gc, json, time
gc.freeze()  # as the page does after boot: what boot imported is out of the collector's sight
from pysse.browser.lazy_assets import install
from pysse.render.highlight import HighlightJob
from pysse.render.math import tex_to_html
data = json.loads(INPUT)
out = {}
for key, where in data["bundles"].items():
    t = time.perf_counter()
    install(data["root"], open(where, "rb").read(), data["packages"][key])
    kind, name = key.split(":")
    html = HighlightJob("def f(x):\n    return [x, 'a', 2.5]\n", name).run() if kind == "lexer" \
        else tex_to_html(r"\frac{a}{b} + x^2", False)
    out[key] = [round((time.perf_counter() - t) * 1000, 1), bool(html)]
json.dumps(out)
"""


def install_ms(site: Path, how: str) -> dict[str, list[Any]]:
    """Install + first use of each LAZY bundle in Pyodide under Node, booted as the page."""
    from buildtools.pyodide_node import run_as_page

    m = manifest(site)
    res = m.get("lazy", {}).get("resources", {})
    keys = [k for k in LAZY if k in res]
    if not keys:
        return {}
    where = {k: f"/tmp/bench-lazy/{k.replace(':', '-')}.zip" for k in keys}
    payload = {
        "root": m["lazy"]["root"],
        "bundles": where,
        "packages": {k: res[k]["packages"] for k in keys},
    }
    files = {where[k]: site / res[k]["files"][0]["url"] for k in keys}
    out = run_as_page(INSTALL, json.dumps(payload), site, how, files=files)  # type: ignore[arg-type]
    return dict(json.loads(out))


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def main() -> list[str]:
    from playwright.sync_api import sync_playwright

    sites = {k: Path(v) for k, v in json.loads(os.environ["PYSSE_NETWORK_SITES"]).items()}
    runs = int(os.environ.get("PYSSE_BENCH_RUNS", "3"))
    profiles = [
        p for p in os.environ.get("PYSSE_NETWORK_PROFILES", "local,fast4g,slow4g").split(",") if p
    ]
    print(f"load average at start: {os.getloadavg()}", flush=True)
    loads: dict[tuple[str, str], list[Load]] = {(s, p): [] for s in sites for p in profiles}
    rows: list[str] = []
    with ExitStack() as stack, sync_playwright() as pw:
        urls = {
            name: stack.enter_context(LiveServer(create_app(site))).url + "/"
            for name, site in sites.items()
        }
        browser = pw.chromium.launch(
            executable_path=os.environ.get("PYSSE_CHROMIUM", "/usr/bin/chromium"),
            args=CHROMIUM_ARGS,
        )
        for i in range(runs):
            for profile in profiles:
                for name in sites:
                    load = Load(browser, urls[name], PROFILES[profile])
                    loads[name, profile].append(load)
                    print(
                        f"  run {i} {LABEL[profile]:9} {name:24} ready {load.ready:7.0f} ms"
                        f" {load.bytes / 1e6:6.2f} MB {load.requests:3} requests",
                        flush=True,
                    )
        rows += table(sites, profiles, loads, runs)
        rows += lazy_table(browser, sites, urls, profiles)
        browser.close()
    print(f"load average at end: {os.getloadavg()}", flush=True)
    print("\n" + "\n".join(rows), flush=True)
    return rows


def table(
    sites: dict[str, Path],
    profiles: list[str],
    loads: dict[tuple[str, str], list[Load]],
    runs: int,
) -> list[str]:
    head = "| site | MB before ready | requests | " + " | ".join(
        f"ready ms, {LABEL[p]}" for p in profiles
    )
    rows = [f"First visit, cold cache, median of {runs}", "", head + " |"]
    rows.append("|---|---:|---:|" + "---:|" * len(profiles))
    for name in sites:
        first = loads[name, profiles[0]]
        mb = med([x.bytes for x in first]) / 1e6
        req = med([x.requests for x in first])
        ready = " | ".join(f"{med([x.ready for x in loads[name, p]]):.0f}" for p in profiles)
        rows.append(f"| {name} | {mb:.2f} | {req:.0f} | {ready} |")
    spread = [  # the bytes must not depend on the network: a check of the measurement
        f"{name} {LABEL[p]}: {min(x.bytes for x in loads[name, p]) / 1e6:.2f}-"
        f"{max(x.bytes for x in loads[name, p]) / 1e6:.2f} MB"
        for name in sites
        for p in profiles
    ]
    return [*rows, "", "bytes before ready, min-max per site and network: " + "; ".join(spread), ""]


def lazy_table(
    browser: Any, sites: dict[str, Path], urls: dict[str, str], profiles: list[str]
) -> list[str]:
    rows: list[str] = []
    for name, site in sites.items():
        res = manifest(site).get("lazy", {}).get("resources", {})
        keys = [k for k in LAZY if k in res]
        if not keys:
            continue
        files = [res[k]["files"][0]["url"] for k in keys]
        fetch = {p: lazy_fetch_ms(browser, urls[name], files, PROFILES[p]) for p in profiles}
        how = "snapshot" if manifest(site).get("snapshot") else "plain"
        installed = install_ms(site, how)
        head = "| resource | KB on the wire | " + " | ".join(
            f"fetch ms, {LABEL[p]}" for p in profiles
        )
        rows += [
            f"Lazy bundles of {name}: the first fence in a language not loaded yet, the first "
            f"formula (install + first use in Pyodide under Node, booted {how})",
            "",
            head + " | install + first use ms |",
            "|---|---:|" + "---:|" * len(profiles) + "---:|",
        ]
        for k, f in zip(keys, files, strict=True):
            ms = " | ".join(f"{fetch[p][f]:.0f}" for p in profiles)
            inst = installed.get(k, ["?", False])
            ok = "" if inst[1] else " (failed)"
            rows.append(f"| {k} | {wire_bytes(site, f) / 1e3:.1f} | {ms} | {inst[0]}{ok} |")
        rows.append("")
    return rows


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
