"""Find what makes the page's paints expensive: stream the phone bench's mixed answer at 4x CPU
for a while with a trace, once as the page is and once per *variant* (a stylesheet or script
added to the page that removes one suspect), and print, per variant, the main thread's Paint
time per frame and the long tasks' split (thread CPU, read by ``trace_reader``).

    PYSSE_SITE=build/site python -m bench.paint_probe [SECONDS] [VARIANT ...]

A variant name from ``VARIANTS`` below; with none given, all of them. Not a benchmark (one
run each, a noisy machine): a way to see which suspect moves Paint by a large factor.
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from pysse.providers import ProviderName
from pysse.server.app import create_app
from pysse.server.config import RelayConfig
from pysse.testing import Script, ScriptServer
from tests.support import CHROMIUM_ARGS, LiveServer

from .phone_corpus import mixed_answer
from .phone_page import INIT, Throttle, Trace
from .trace_reader import KINDS, Reader, cpu_us

FMT: ProviderName = "openai-chat"

# name -> (CSS added to the page, script run before the answer is sent)
VARIANTS: dict[str, tuple[str, str]] = {
    "as is": ("", ""),
    "no highlight colours": (
        "[class^=hl-] { color: inherit !important; font-style: normal !important; }",
        "",
    ),
    "no table borders": (
        ".msg .content th, .msg .content td { border: none !important; }"
        " .msg .content table { border-collapse: separate !important; }",
        "",
    ),
    "tables not scrollers": (".msg .content table { display: table !important; }", ""),
    "pre not scrollers": (".codeblock pre, .math.block { overflow: visible !important; }", ""),
    "no math": ("math { display: none !important; }", ""),
    "no overflow-wrap": (".msg { overflow-wrap: normal !important; }", ""),
    "no status dot": (
        ".msg[data-state=streaming] .status::before { content: none !important; }",
        "",
    ),
    "no speed line": ("[data-role=speed], [data-role=stall] { display: none !important; }", ""),
    "no jump button": (".jump { display: none !important; }", ""),
    "no aria-busy": (
        "",
        "new MutationObserver(() => document.querySelectorAll('[aria-busy]')"
        ".forEach((e) => e.removeAttribute('aria-busy'))).observe(document.body,"
        " {subtree: true, childList: true});",
    ),
    "composited log": (".log { will-change: scroll-position; }", ""),
    "contained log": (".log { contain: strict; }", ""),
    "settled blocks contained": (".msg .settled > * { contain: layout paint; }", ""),
    "settled blocks c-v auto": (
        ".msg .settled > * { content-visibility: auto; contain-intrinsic-size: auto 2rem; }",
        "",
    ),
    "c-v blocks, contained log": (
        ".msg .settled > * { content-visibility: auto; contain-intrinsic-size: auto 2rem; }"
        " .log { contain: strict; }",
        "",
    ),
    "answers contained": (".msg { contain: layout paint; }", ""),
    "system font only": (".msg { font-family: sans-serif !important; }", ""),
}


def probe(page: Any, cdp: Any, upstream: ScriptServer, seconds: float, variant: str) -> str:
    css, script = VARIANTS[variant]
    if css:
        page.add_style_tag(content=css)
    if script:
        page.evaluate(f"() => {{ {script} }}")
    text = mixed_answer()
    deltas = [text[i : i + 24] for i in range(0, len(text), 24)]
    upstream.play(Script.answer(deltas, FMT).chunked("event").paced(0.016))
    trace = Trace(cdp)
    trace.start()
    page.fill("[data-role=prompt]", "go")
    page.press("[data-role=prompt]", "Enter")
    t_end = time.time() + seconds
    while time.time() < t_end:
        page.wait_for_timeout(250)
    events = trace.stop(page)
    read = Reader(events)
    split = read.long_tasks()
    mine = read.threads[read.main_thread()]

    def outer(name: str) -> list[float]:
        """Thread CPU (ms) of the ``name`` events not nested in another one (Paint nests)."""
        out, end = [], 0.0
        for e in (e for e in mine if e["name"] == name):
            if e["ts"] >= end:
                out.append(cpu_us(e) / 1000)
                end = e["ts"] + e["dur"]
        return out

    frames = len(outer("FireAnimationFrame")) or 1
    cells = []
    for name in ("Paint", "PrePaint", "Layout", "UpdateLayoutTree", "Commit", "Layerize"):
        xs = outer(name)
        cells.append(f"{name} {sum(xs):5.0f} ({sum(xs) / frames:4.1f}/frame)")
    total = split.total or 1.0
    shares = " ".join(f"{k} {100 * split.by_kind[k] / total:.0f}%" for k in KINDS)
    return (
        f"{variant:26} {frames:4} frames; "
        + ", ".join(cells)
        + f"; long tasks {len(split.tasks):3} sum {split.total:6.0f} ms ({shares})"
    )


def main() -> None:
    from playwright.sync_api import sync_playwright

    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 15.0
    names = sys.argv[2:] or list(VARIANTS)
    site = Path(os.environ.get("PYSSE_SITE", "build/site"))
    rate = float(os.environ.get("PYSSE_PHONE_RATE", "4"))
    with sync_playwright() as pw, ExitStack() as stack:
        upstream = stack.enter_context(ScriptServer(Script.answer("ok", FMT)))
        relay = RelayConfig.from_args(upstream.url, None, FMT, [])
        base = stack.enter_context(LiveServer(create_app(site, relay=relay))).url
        browser = pw.chromium.launch(
            executable_path=os.environ.get("PYSSE_CHROMIUM", "/usr/bin/chromium"),
            args=CHROMIUM_ARGS,
        )
        for name in names:
            ctx = browser.new_context()
            page = ctx.new_page()
            page.add_init_script(INIT)
            page.goto(base + "/")
            page.wait_for_selector("body[data-warm='1']", timeout=120_000)
            throttle = Throttle(ctx, page)
            throttle.set(rate)
            print(probe(page, throttle.cdp, upstream, seconds, name), flush=True)
            ctx.close()
        browser.close()


if __name__ == "__main__":
    main()
