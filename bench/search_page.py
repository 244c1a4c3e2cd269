"""The search bench in Chromium (``bench_search``'s last table): 500 long chats stored in the
page's IndexedDB (as the page stores them: a row and a body each), the page reloaded, the
CPU throttled 4x (DevTools' mid-tier mobile), then a needle typed into the search field a key
every 150 ms: once cold (every chat read from storage and folded on the way) and once warm
(the folded texts kept); before and after them, the same keys into the message box: the
baseline, what the loaded machine and the throttle cost alone. Long tasks (Long Tasks API) and each key's latency (Event Timing)
come from ``phone_page``'s instruments.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from pysse.chats.conversation import Conversation
from pysse.chats.files import ChatSummary
from pysse.chats.search import search_record
from pysse.server.app import create_app
from tests.support import CHROMIUM_ARGS, LiveServer

from .phone_page import INIT, Throttle, key_latencies, long_tasks

__all__ = ["in_chromium"]

PUT = """async (rows) => { for (const [id, row, body, record] of rows) {
  await pysseStore.putAll([['bodies', id, body], ['search', id, record], ['chats', id, row]]); } }"""
DROP_RECORDS = """async () => { for (const id of await pysseStore.keys('search'))
  await pysseStore.del('search', id); }"""


def _seed(page: Any, bodies: list[str]) -> None:
    """As the page stores a chat: its body, search record and row."""
    batch: list[list[str]] = []
    for body in bodies:
        conv = Conversation.from_json(json.loads(body))
        row = json.dumps(ChatSummary.of(conv).to_json())
        batch.append([conv.id, row, body, search_record(conv)])
        if len(batch) == 25:
            page.evaluate(PUT, batch)
            batch = []
    if batch:
        page.evaluate(PUT, batch)


def _type(page: Any, term: str) -> dict[str, float]:
    page.fill("[data-role=search]", "")
    page.evaluate("() => pysse.py('app.chats.search.longest_ms = 0')")
    page.focus("[data-role=search]")
    t0 = float(page.evaluate("performance.now()"))
    last = t0
    for ch in term:
        time.sleep(0.15)
        last = float(page.evaluate("performance.now()"))
        page.keyboard.press(ch)
    page.wait_for_function(  # the results complete for the whole term (search_view.render)
        "(t) => document.querySelector('[data-role=search-results]').dataset.term === t",
        arg=term,
        timeout=1_200_000,
        polling=100,
    )
    done = float(page.evaluate("performance.now()"))
    found = page.locator("[data-role=search-result]").count()
    own = float(page.evaluate("() => pysse.py('app.chats.search.longest_ms')"))
    tasks = long_tasks(page, t0, done)
    keys = key_latencies(page, t0, done)
    return {
        "to_result_ms": done - last,  # after the last key (polling adds up to ~100 ms)
        "longest_task_ms": max(tasks, default=0.0),
        "tasks_over_50": float(sum(1 for t in tasks if t > 50)),
        "worst_key_ms": max(keys, default=0.0),
        "found": float(found),
        "own_ms": own,
    }


def _type_prompt(page: Any, term: str) -> dict[str, float]:
    """The baseline, side by side: the same keys into the message box (no search), so the
    long tasks the machine and the throttle cause alone are counted the same way."""
    page.focus("[data-role=prompt]")
    t0 = float(page.evaluate("performance.now()"))
    for ch in term:
        time.sleep(0.15)
        page.keyboard.press(ch)
    page.wait_for_timeout(300)
    done = float(page.evaluate("performance.now()"))
    page.fill("[data-role=prompt]", "")
    tasks = long_tasks(page, t0, done)
    keys = key_latencies(page, t0, done)
    return {
        "to_result_ms": float("nan"),
        "longest_task_ms": max(tasks, default=0.0),
        "tasks_over_50": float(sum(1 for t in tasks if t > 50)),
        "worst_key_ms": max(keys, default=0.0),
        "found": float("nan"),
        "own_ms": float("nan"),
    }


def in_chromium(bodies: list[str], needles: tuple[str, str], rate: float = 4.0) -> Any:
    """Cold and warm rows, or None without a browser and a built site."""
    from playwright.sync_api import sync_playwright

    site = Path(os.environ.get("PYSSE_SITE", ""))
    chromium = os.environ.get("PYSSE_CHROMIUM", "/usr/bin/chromium")
    if not (site / "site.json").exists() or not Path(chromium).exists():
        print("(Chromium: skipped, needs PYSSE_SITE and PYSSE_CHROMIUM: build.py bench)")
        return None
    with LiveServer(create_app(site)) as live, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            ctx = browser.new_context(viewport={"width": 1100, "height": 750})
            ctx.set_default_timeout(600_000)
            page = ctx.new_page()
            page.add_init_script(INIT)
            page.goto(live.url + "/")
            page.wait_for_selector("body[data-ready='1']", timeout=120_000)
            _seed(page, bodies)
            page.reload()
            page.wait_for_selector("body[data-ready='1']", timeout=120_000)
            page.wait_for_selector("body[data-warm='1']", timeout=120_000)
            throttle = Throttle(ctx, page)
            throttle.set(rate)
            loop = throttle.loop_ms()
            base = _type_prompt(page, needles[1])
            cold = _type(page, needles[0])
            warm = _type(page, needles[1])
            again = _type_prompt(page, needles[1])
            throttle.set(1)  # the chats as a page before search records stored them
            page.evaluate(DROP_RECORDS)
            page.reload()
            page.wait_for_selector("body[data-warm='1']", timeout=120_000)
            throttle.set(rate)
            old = _type(page, needles[0])
            return {
                "rate": rate,
                "loop_ms": loop,
                "cold": cold,
                "warm": warm,
                "base": base,
                "again": again,
                "old": old,
            }
        finally:
            browser.close()
