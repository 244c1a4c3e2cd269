"""A visit to the chat page on a phone's network (issue #33): sites side by side in Debian's
Chromium, on localhost and under DevTools' network emulation
(``Network.emulateNetworkConditions``, as NOTES.md measures networks):

* ``Fast 4G``: 60 ms latency, 9 Mbit/s down, 1.5 Mbit/s up;
* ``Slow 4G``: 150 ms latency, 1.6 Mbit/s down, 0.75 Mbit/s up;

at each CPU rate of ``PYSSE_NETWORK_RATES`` (``Emulation.setCPUThrottlingRate`` on the page:
**it slows the page's main thread only**, not its dedicated worker, where Python boots, nor
the service worker: a worker's DevTools target has no ``Emulation`` domain, see
``bench_worker``; so at 4x the ready and first-token times are optimistic).

Each run opens a fresh browser context (a cold HTTP cache, no service worker, empty storage)
and makes two visits in one tab:

* **cold**: the first visit. It starts plain (``web/boot.js``); as Python comes up (when it
  takes over the composer, just before ready) the page registers its service worker, whose
  install caches the runtime (the snapshot's files fetched from the network). Its first
  loads (``sw.js``, the page's own files revalidated: ~10 KB, 13 requests) finish before
  ready in some runs and not in others, and count when they do: a cold visit's requests
  vary by that much. The bench waits until that worker is ``activated`` (web/sw.js: its
  install cached everything) and the page has kept the next message's request
  (``pysse.next.v1``), and says what the service worker fetched.
* **warm**: the same address again, the service worker in control: the runtime comes from
  its cache, the page's own files from the network first (revalidated, ``no-cache``).

Per visit: **ready** (``body[data-ready='1']``, after navigation: the only thing it asks of
the page, so it measures any version of it); **bytes before ready** (the sum of
``Network.loadingFinished``'s ``encodedDataLength`` of what finished before ready, over the
page's target and the targets ``Target.setAutoAttach`` attaches to it: its dedicated worker
and its service worker, emulated as the page is); **requests** (those loads). Only real
network loads count: a response ``fromServiceWorker``, ``fromDiskCache`` or
``fromPrefetchCache``, or served from the memory cache (``requestServedFromCache``: the
worker's second read of what the page preloaded) is no network byte nor request (the
service worker's own fetch of it, if any, is counted on its target), and neither is the
chat request itself. **boot**: ``window.pysse.boot`` (``plain`` or ``snapshot``).

**A message sent at load**: the site is served with a relay (``/relay``) to a scripted
upstream (``pysse.testing.ScriptServer``) that answers at once. As soon as the page takes
messages (``body[data-booting='1']``, set by app.js: an Enter before it would only add a
line) the bench types a message and presses Enter. **request out** is when the chat request
left (``Network.requestWillBeSent`` of the POST to ``/relay``, any target), **first token**
when the answer's first word was first in the page's DOM (a ``MutationObserver``), both
minus ready (negative: before ready). A cold visit sends it from the worker's JavaScript with
site.json's template (``first``: the served relay's format is known), a warm one with the
request the page kept; both while Python boots (docs/boot.md). A baseline older than
site.json's template waits for Python on a cold visit.

Medians of ``PYSSE_BENCH_RUNS`` runs (3), sites interleaved in each run.

Then the lazy bundles (``lazy`` in the boot manifest): for the first fence in a language the
page has not loaded, and for the first formula, what a bundle costs after ready: its bytes
on the wire and the time to fetch it cold on each network (``fetch()`` from the page, while
nothing else loads), and the time to install and import it in Pyodide under Node (booted as
the page boots; ``pysse.browser.lazy_assets.install`` and a first highlight or formula).

Environment:

* ``PYSSE_NETWORK_SITES``: JSON ``{"name": "directory"}`` (needed). ``build.py bench --only
  network`` builds them at brotli 11: this tree's site with its snapshot and without, and
  with ``--baseline REF`` both of REF's. Each is served by ``create_app(site, relay=...)``
  in ``LiveServer`` (the tests' static server, which sends the ``.br`` files to Chromium:
  it asks loopback hosts for brotli);
* ``PYSSE_NETWORK_PROFILES``: the networks (``local,fast4g,slow4g``);
* ``PYSSE_NETWORK_RATES``: the CPU rates (``1,4``);
* ``PYSSE_NETWORK_LAZY``: ``0`` leaves the lazy bundles out (``1``);
* ``PYSSE_BENCH_RUNS`` (3), ``PYSSE_CHROMIUM`` (``/usr/bin/chromium``).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import statistics
import sys
import time
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pysse.providers import ProviderName
from pysse.server.app import create_app
from pysse.server.config import RelayConfig
from pysse.testing import Script, ScriptServer
from tests.support import CHROMIUM_ARGS, LiveServer

PROFILES: dict[str, dict[str, Any] | None] = {
    "local": None,
    "fast4g": {"latency": 60, "downloadThroughput": 9e6 / 8, "uploadThroughput": 1.5e6 / 8},
    "slow4g": {"latency": 150, "downloadThroughput": 1.6e6 / 8, "uploadThroughput": 0.75e6 / 8},
}
LABEL = {"local": "localhost", "fast4g": "Fast 4G", "slow4g": "Slow 4G"}
READY_TIMEOUT_MS = 300_000
SW_TIMEOUT_MS = 600_000  # the service worker's install (the snapshot on Slow 4G: ~20 s)
AFTER_READY_S = 1.0  # events of loads that ended before ready may arrive a little later
FMT: ProviderName = "openai-chat"
PROMPT = "[data-role=prompt]"
MESSAGE = "Hello there"
VISITS = ("cold", "warm")

# Recorded by the page itself, in its clock (ms after navigation): when body[data-ready]
# became '1', when Enter was pressed in the prompt, and when each word like "Tok12x" was
# first in an answer's DOM (each visit's scripted answer starts with its own).
INIT = r"""
(() => {
  window.__tokens = {};
  const look = (node) => {
    const el = node && (node.nodeType === 1 ? node : node.parentElement);
    const art = el && el.closest('[data-role=assistant]');
    if (!art) return;
    for (const m of art.textContent.matchAll(/\bTok\d+x\b/g)) {
      if (!(m[0] in window.__tokens)) window.__tokens[m[0]] = performance.now();
    }
  };
  new MutationObserver((records) => {
    if (document.body && document.body.dataset.ready === '1' && !window.__readyAt) {
      window.__readyAt = performance.now(); window.__origin = performance.timeOrigin;
    }
    for (const r of records) {
      if (r.type === 'attributes') continue;
      look(r.target);
      for (const n of r.addedNodes) look(n);
    }
  }).observe(document, {subtree: true, childList: true, characterData: true,
                        attributes: true, attributeFilter: ['data-ready']});
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !window.__sentAt && e.target.matches
        && e.target.matches('[data-role=prompt]')) window.__sentAt = performance.now();
  }, true);
})();
"""

# The page's service worker active (its install cached what it caches: web/sw.js) and the
# next message's request kept; when (the page's clock, ms), within 100 ms.
SW_READY = """async (limit) => {
  if (!('serviceWorker' in navigator)) return null;
  // a page without one (an older build) registers none: its ready promise would never settle
  for (const t = performance.now(); !(await navigator.serviceWorker.getRegistration());) {
    if (performance.now() - t > 5000) return null;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  const reg = await navigator.serviceWorker.ready;
  for (const t = performance.now(); performance.now() - t < limit;) {
    const done = reg.active && reg.active.state === 'activated';
    if (done && localStorage.getItem('pysse.next.v1')) return performance.now();
    await new Promise((ok) => setTimeout(ok, 100));
  }
  return null;
}"""


@dataclass
class Request:
    """One load seen over CDP, on the page's target or one attached to it."""

    kind: str  # "page", "worker", "service_worker"
    url: str = ""
    method: str = ""
    sent: float | None = None  # monotonic s (CDP's clock)
    cached: bool = False  # served by a service worker or a cache: no network bytes
    responded: bool = False  # its Network.responseReceived was seen
    finished: float | None = None
    bytes: int = 0


class Probe:
    """The network of one tab over CDP: the page's own loads and those of the targets
    attached to it (its dedicated worker, its service worker), each emulating
    ``conditions``; the page's main thread throttled ``rate`` x."""

    def __init__(self, ctx: Any, page: Any, conditions: dict[str, Any] | None, rate: float) -> None:
        self.conditions = conditions
        self.kinds: dict[str, str] = {"page": "page"}
        self.requests: dict[str, Request] = {}  # by requestId (unique across targets)
        self.navigation: tuple[float, float] | None = None  # (monotonic s, wall s)
        self.cdp = cdp = ctx.new_cdp_session(page)
        for method in (
            "Network.requestWillBeSent",
            "Network.responseReceived",
            "Network.requestServedFromCache",
            "Network.loadingFinished",
        ):
            cdp.on(method, lambda e, m=method: self._event("page", m, e))
        cdp.on("Target.receivedMessageFromTarget", self._from_target)
        cdp.on("Target.attachedToTarget", self._attach)
        cdp.send("Network.enable")
        if conditions is not None:
            cdp.send("Network.emulateNetworkConditions", {"offline": False, **conditions})
        if rate != 1:
            cdp.send("Emulation.setCPUThrottlingRate", {"rate": rate})
        cdp.send(
            "Target.setAutoAttach",
            {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": False},
        )

    def reset(self) -> None:
        """A new visit: what came before is forgotten."""
        self.requests = {}
        self.navigation = None

    def _event(self, session: str, method: str, e: dict[str, Any]) -> None:
        key = str(e.get("requestId"))  # (a worker's script: sent by the page, read by it)
        req = self.requests.get(key)
        if req is None:
            req = self.requests[key] = Request(self.kinds.get(session, "worker"))
        if method == "Network.requestWillBeSent":
            req.url, req.method = e["request"]["url"], e["request"]["method"]
            req.sent = float(e["timestamp"])
            if session == "page" and self.navigation is None and e.get("type") == "Document":
                self.navigation = (float(e["timestamp"]), float(e["wallTime"]))
        elif method == "Network.responseReceived":
            r = e["response"]
            req.url = req.url or r["url"]
            req.responded = True
            if r.get("fromServiceWorker") or r.get("fromDiskCache") or r.get("fromPrefetchCache"):
                req.cached = True
        elif method == "Network.requestServedFromCache":
            req.cached = True
        elif method == "Network.loadingFinished":
            req.finished = float(e["timestamp"])
            req.bytes = int(e["encodedDataLength"])

    def _from_target(self, e: dict[str, Any]) -> None:
        msg = json.loads(e["message"])
        if str(msg.get("method", "")).startswith("Network."):
            self._event(e["sessionId"], msg["method"], msg["params"])

    def _attach(self, e: dict[str, Any]) -> None:
        """A worker (dedicated or service): its loads seen and emulated as the page's."""
        self.kinds[e["sessionId"]] = e["targetInfo"]["type"]
        calls: list[tuple[str, dict[str, Any]]] = [("Network.enable", {})]
        if self.conditions is not None:
            calls.append(
                ("Network.emulateNetworkConditions", {"offline": False, **self.conditions})
            )
        calls.append(("Runtime.runIfWaitingForDebugger", {}))
        for i, (method, params) in enumerate(calls):
            message = json.dumps({"id": 1_000_000 + i, "method": method, "params": params})
            self.cdp.send(
                "Target.sendMessageToTarget", {"sessionId": e["sessionId"], "message": message}
            )

    def page_ms(self, mono: float, origin: float) -> float:
        """A CDP timestamp in the page's clock (``performance.now()``)."""
        assert self.navigation is not None, "the document's request was not seen"
        mono0, wall0 = self.navigation
        return (wall0 + mono - mono0) * 1000 - origin

    def mono(self, page_ms: float, origin: float) -> float:
        """A time of the page's clock as a CDP timestamp."""
        assert self.navigation is not None, "the document's request was not seen"
        mono0, wall0 = self.navigation
        return mono0 + (origin + page_ms) / 1000 - wall0

    def network(self, skip: str) -> list[Request]:
        """The finished loads that went over the network, but ``skip`` (the chat request).
        A load whose response went unseen (a worker's script, read before its target was
        attached) counts unless the service worker fetched the same URL: it served it."""
        by_sw = {r.url for r in self.requests.values() if r.kind == "service_worker"}
        return [
            r
            for r in self.requests.values()
            if r.finished is not None
            and not r.cached
            and r.url != skip
            and (r.responded or r.kind == "service_worker" or r.url not in by_sw)
        ]


@dataclass
class Visit:
    """One visit: its times in ms of the page's clock, relative to ready where said."""

    kind: str  # cold or warm
    ready: float = 0.0
    typed: float = float("nan")  # Enter pressed in the prompt (after navigation)
    bytes: int = 0
    requests: int = 0
    out: float = float("nan")  # the chat request left, minus ready
    token: float = float("nan")  # the answer's first word on screen, minus ready
    boot: str = "?"
    files: list[str] = field(default_factory=list)  # what went over the network before ready
    sw_bytes: int = 0  # cold: what the service worker fetched (its install), until active
    sw_ms: float = float("nan")  # cold: when it was active (and the request kept), minus ready


class Site:
    """A site served with a relay to a scripted upstream."""

    def __init__(self, stack: ExitStack, upstream: ScriptServer, site: Path) -> None:
        relay = RelayConfig.from_args(upstream.url, None, FMT, [])
        self.url = stack.enter_context(LiveServer(create_app(site, relay=relay))).url + "/"
        self.relay = self.url + "relay"
        self.upstream = upstream


WORDS = itertools.count()  # each visit's answer starts with a word of its own


def visit(probe: Probe, page: Any, site: Site, kind: str) -> Visit:
    """Navigate to the site, send a message as soon as the page takes one, and wait for its
    answer on screen."""
    word = f"Tok{next(WORDS)}x"
    site.upstream.play(Script.answer(f"{word} is the first word of this answer.", FMT))
    probe.reset()
    page.goto(site.url, wait_until="commit", timeout=READY_TIMEOUT_MS)
    # the page takes a message while booting (data-booting); an older build, once ready
    page.wait_for_selector("body[data-booting='1'], body[data-ready='1']", timeout=READY_TIMEOUT_MS)
    page.fill(PROMPT, MESSAGE, timeout=READY_TIMEOUT_MS)
    page.press(PROMPT, "Enter", timeout=READY_TIMEOUT_MS)
    page.wait_for_function("() => window.__readyAt", timeout=READY_TIMEOUT_MS)
    page.wait_for_function(
        "(w) => window.__tokens[w]", arg=word, timeout=READY_TIMEOUT_MS, polling=100
    )
    time.sleep(AFTER_READY_S)
    got = page.evaluate(
        "(w) => [window.__readyAt, window.__origin, window.__sentAt, window.__tokens[w],"
        " window.pysse && window.pysse.boot]",
        word,
    )
    ready, origin, typed, token, boot = got
    out = Visit(kind, ready=float(ready), typed=float(typed), token=float(token) - float(ready))
    out.boot = (boot or {}).get("path") or "?"
    if boot and boot.get("snapshotError"):
        out.boot += " (snapshot failed)"
    ready_mono = probe.mono(float(ready), float(origin))
    before = [r for r in probe.network(site.relay) if (r.finished or 0.0) <= ready_mono]
    out.bytes = sum(r.bytes for r in before)
    out.requests = len(before)
    out.files = sorted(f"{r.kind}:{r.url.removeprefix(site.url) or './'}" for r in before)
    chat = [
        r.sent
        for r in probe.requests.values()
        if r.url == site.relay and r.method == "POST" and r.sent is not None
    ]
    if chat:
        out.out = probe.page_ms(min(chat), float(origin)) - float(ready)
    if kind == "cold":  # the service worker's install (for the warm visit)
        done = page.evaluate(SW_READY, SW_TIMEOUT_MS)
        time.sleep(AFTER_READY_S)
        if done is not None:  # (an older build has none: its warm visit is the HTTP cache's)
            out.sw_ms = float(done) - float(ready)
        out.sw_bytes = sum(r.bytes for r in probe.network(site.relay) if r.kind == "service_worker")
    return out


def visits(browser: Any, site: Site, conditions: dict[str, Any] | None, rate: float) -> list[Visit]:
    """A cold visit then a warm one, in a fresh context."""
    ctx = browser.new_context()
    try:
        ctx.add_init_script(INIT)
        page = ctx.new_page()
        probe = Probe(ctx, page, conditions, rate)
        return [visit(probe, page, site, kind) for kind in VISITS]
    finally:
        ctx.close()


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


Key = tuple[str, str, float]  # site, network profile, CPU rate


def listed(name: str, default: str) -> list[str]:
    return [x for x in os.environ.get(name, default).split(",") if x]


def main() -> list[str]:
    from playwright.sync_api import sync_playwright

    sites = {k: Path(v) for k, v in json.loads(os.environ["PYSSE_NETWORK_SITES"]).items()}
    runs = int(os.environ.get("PYSSE_BENCH_RUNS", "3"))
    profiles = listed("PYSSE_NETWORK_PROFILES", "local,fast4g,slow4g")
    rates = [float(r) for r in listed("PYSSE_NETWORK_RATES", "1,4")]
    print(f"load average at start: {os.getloadavg()}", flush=True)
    got: dict[Key, list[list[Visit]]] = {
        (s, p, r): [] for s in sites for p in profiles for r in rates
    }
    rows: list[str] = []
    with ExitStack() as stack, sync_playwright() as pw:
        upstream = stack.enter_context(ScriptServer(Script.answer("ok", FMT)))
        served = {name: Site(stack, upstream, site) for name, site in sites.items()}
        browser = pw.chromium.launch(
            executable_path=os.environ.get("PYSSE_CHROMIUM", "/usr/bin/chromium"),
            args=CHROMIUM_ARGS,
        )
        for i in range(runs):
            for rate in rates:
                for profile in profiles:
                    for name in sites:
                        pair = visits(browser, served[name], PROFILES[profile], rate)
                        got[name, profile, rate].append(pair)
                        for v in pair:
                            print(f"  run {i} {LABEL[profile]:9} {rate:g}x {name:20} {line(v)}")
                        sys.stdout.flush()
        rows += summary(sites, profiles, rates[0], got, runs)
        rows += table(sites, profiles, rates, got, runs)
        if os.environ.get("PYSSE_NETWORK_LAZY", "1") != "0":
            rows += lazy_table(browser, sites, {k: s.url for k, s in served.items()}, profiles)
        browser.close()
    print(f"load average at end: {os.getloadavg()}", flush=True)
    print("\n" + "\n".join(rows), flush=True)
    return rows


def line(v: Visit) -> str:
    text = (
        f"{v.kind} {v.boot:8} ready {v.ready:7.0f} ms {v.bytes / 1e6:6.3f} MB"
        f" {v.requests:3} requests, message typed at {v.typed / 1000:.2f} s, request out {v.out / 1000:+6.2f} s,"
        f" first token {v.token / 1000:+6.2f} s"
    )
    if v.kind == "cold":
        text += (
            f"; then the service worker: {v.sw_bytes / 1e6:.2f} MB, active +{v.sw_ms / 1000:.1f} s"
        )
    return text


def pick(got: dict[Key, list[list[Visit]]], key: Key, kind: str) -> list[Visit]:
    return [v for pair in got[key] for v in pair if v.kind == kind]


def summary(
    sites: dict[str, Path],
    profiles: list[str],
    rate: float,
    got: dict[Key, list[list[Visit]]],
    runs: int,
) -> list[str]:
    """The cold visits at one CPU rate, networks side by side (as docs/boot.md shows them)."""
    head = "| site | MB before ready | requests | " + " | ".join(
        f"ready ms, {LABEL[p]}" for p in profiles
    )
    rows = [f"First visit, cold cache, CPU {rate:g}x, median of {runs}", "", head + " |"]
    rows.append("|---|---:|---:|" + "---:|" * len(profiles))
    for name in sites:
        first = pick(got, (name, profiles[0], rate), "cold")
        mb = med([x.bytes for x in first]) / 1e6
        req = med([x.requests for x in first])
        ready = " | ".join(
            f"{med([x.ready for x in pick(got, (name, p, rate), 'cold')]):.0f}" for p in profiles
        )
        rows.append(f"| {name} | {mb:.2f} | {req:.0f} | {ready} |")
    return [*rows, ""]


def table(
    sites: dict[str, Path],
    profiles: list[str],
    rates: list[float],
    got: dict[Key, list[list[Visit]]],
    runs: int,
) -> list[str]:
    rows = [
        f"Cold and warm visits, a message sent at load, median of {runs} (ready: s after"
        " navigation; request out, first token: s minus ready, negative before it; CPU: the"
        " page's main thread only)",
        "",
        "| site | network | CPU | visit | boot | MB before ready | requests | ready s"
        " | request out − ready s | first token − ready s |",
        "|---|---|---:|---|---|---:|---:|---:|---:|---:|",
    ]
    keys = [(s, p, r) for s in sites for p in profiles for r in rates]
    for key in keys:
        name, profile, rate = key
        for kind in VISITS:
            vs = pick(got, key, kind)
            boot = Counter(v.boot for v in vs).most_common(1)[0][0]
            rows.append(
                f"| {name} | {LABEL[profile]} | {rate:g}x | {kind} | {boot}"
                f" | {med([v.bytes for v in vs]) / 1e6:.3f} | {med([v.requests for v in vs]):.0f}"
                f" | {med([v.ready for v in vs]) / 1000:.2f}"
                f" | {med([v.out for v in vs]) / 1000:+.2f}"
                f" | {med([v.token for v in vs]) / 1000:+.2f} |"
            )
    rows += [
        "",
        "After the cold visit, its service worker's install (what it fetched, when it was"
        " active and the next request kept, s after ready), median of " + str(runs),
        "",
        "| site | network | CPU | MB fetched | active, s after ready |",
        "|---|---|---:|---:|---:|",
    ]
    for key in keys:
        name, profile, rate = key
        vs = pick(got, key, "cold")
        rows.append(
            f"| {name} | {LABEL[profile]} | {rate:g}x | {med([v.sw_bytes for v in vs]) / 1e6:.2f}"
            f" | {med([v.sw_ms for v in vs]) / 1000:.1f} |"
        )
    spread = [  # the bytes must not depend on the network: a check of the measurement
        f"{name} {LABEL[p]} {r:g}x {kind}: {min(v.bytes for v in vs) / 1e6:.3f}-"
        f"{max(v.bytes for v in vs) / 1e6:.3f} MB"
        for name, p, r in keys
        for kind in VISITS
        if (vs := pick(got, (name, p, r), kind))
    ]
    warm = [  # what a warm visit still asks the network for, before ready (the first run)
        f"{name}: " + ", ".join(pick(got, (name, profiles[0], rates[0]), "warm")[0].files)
        for name in sites
    ]
    return [
        *rows,
        "",
        "bytes before ready, min-max: " + "; ".join(spread),
        "",
        f"a warm visit's network loads before ready ({LABEL[profiles[0]]}, {rates[0]:g}x, run 0,"
        " target:file): " + " | ".join(warm),
        "",
    ]


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
