"""The page's Python in a Web Worker: where it runs, and what the page does when the worker
cannot start, when its Python dies, and when the reader acts while it is busy."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import beside_python, settled, stored_answers, wait_stored

pytestmark = pytest.mark.browser

MODE = "() => window.pysse && window.pysse.mode"
NOTICES = "() => [...document.querySelectorAll('[data-role=notice]')].map((n) => n.textContent)"


def test_the_page_runs_its_python_in_a_worker_and_the_main_thread_has_none(
    make_page: Any,
) -> None:
    p = make_page(thread="worker")
    page = p.open()
    assert page.evaluate(MODE) == "worker"
    assert page.evaluate("() => typeof window.pysseRuntime") == "undefined"
    assert page.evaluate("() => pysse.py('import js; hasattr(js, \"document\")')") is False
    p.send("/demo echo from the worker")
    assert p.wait_done().get_attribute("data-text") == "from the worker"


def test_the_main_thread_mode_runs_the_same_page(make_page: Any) -> None:
    p = make_page(thread="main")
    page = p.open()
    assert page.evaluate(MODE) == "main"
    assert page.evaluate("() => typeof window.pysseRuntime") == "object"
    p.send("/demo echo on the main thread")
    assert p.wait_done().get_attribute("data-text") == "on the main thread"
    assert page.evaluate(NOTICES) == []  # chosen, not fallen back to: nothing to say


def _without_workers(route: Any) -> None:
    """The page as a site whose CSP forbids workers (worker-src 'none')."""
    resp = route.fetch()
    html = resp.text().replace("object-src 'none';", "object-src 'none'; worker-src 'none';")
    route.fulfill(response=resp, body=html)


@pytest.mark.parametrize("how", ["csp", "module 404"])
def test_a_worker_that_cannot_start_leaves_the_page_on_the_main_thread_saying_so(
    make_page: Any, how: str
) -> None:
    p = make_page(thread="worker")
    if how == "csp":
        p.page.route("**/", _without_workers)
    else:
        p.page.route("**/worker.js", lambda route: route.fulfill(status=404, body="gone"))
    page = p.open()
    assert page.evaluate(MODE) == "main"
    (notice,) = page.evaluate(NOTICES)
    assert "could not start the page's Python in a Web Worker" in notice
    assert "main thread" in notice
    p.send("/demo echo still works")
    assert p.wait_done().get_attribute("data-text") == "still works"
    p.errors[:] = [e for e in p.errors if "worker" not in e.lower()]  # (the refusal itself)


KILL = """import sys
sys.setrecursionlimit(1_000_000)
def down(n):
    return down(n + 1)
down(0)"""


def test_a_worker_whose_python_dies_leaves_the_answer_its_text_and_starts_again(
    make_page: Any,
) -> None:
    """A fatal error (here: the wasm stack exhausted by runaway recursion) kills the worker's
    Python for good. The answer it was streaming keeps the text it had, marked as ended by
    the failure; the chat is in storage; a new worker starts, without a reload, and shows it
    all again with a notice; the page goes on working."""
    p = make_page(thread="worker", settings={"headers": "X-Demo-Pace: 0.2"})
    page = p.open()
    p.send("/demo long")
    page.wait_for_function(
        "() => (document.querySelector('[data-role=assistant] .settled') || {}).textContent?.length > 300"
    )
    wait_stored(page, lambda s: any(m.get("state") == "streaming" for m in stored_answers(s)))
    page.evaluate("(code) => { pysse.py(code).catch(() => {}); }", KILL)
    page.wait_for_function("() => document.body.dataset.ready === ''", timeout=60_000)
    page.wait_for_selector("body[data-ready='1']", timeout=120_000)
    art = page.wait_for_selector("[data-role=assistant]")
    assert art.get_attribute("data-state") == "error"
    text = art.get_attribute("data-text") or ""
    assert len(text) > 300
    assert "stopped" in art.query_selector(".status").inner_text().lower()
    notices = page.evaluate(NOTICES)
    assert any("The page's Python stopped" in n and "started again" in n for n in notices)
    stored = wait_stored(page, lambda s: any(m.get("state") == "error" for m in stored_answers(s)))
    (kept,) = [m for m in stored_answers(stored) if m.get("state") == "error"]
    assert kept["text"] == text
    p.errors.clear()  # (the fatal error, reported by the worker, was this test's doing)
    p.send("/demo echo alive")
    page.wait_for_function("() => document.querySelectorAll('[data-role=assistant]').length === 2")
    assert p.wait_done().get_attribute("data-text") == "alive"


BUSY = """import time
t = time.monotonic()
while time.monotonic() - t < 2.5:
    pass"""


def test_a_burst_of_events_while_the_worker_is_busy_is_applied_once_each(
    make_page: Any,
) -> None:
    """The worker computes for 2.5 s; meanwhile the reader types a search (only its last
    value matters: merged), presses the theme button twice and sends a message. None is
    lost, none applied twice."""
    p = make_page(thread="worker")
    page = p.open()
    p.send("/demo echo apples and pears")
    p.wait_done()
    settled(page)
    theme_before = page.evaluate("() => document.documentElement.dataset.theme || 'system'")
    assert theme_before == "system"
    page.evaluate("(code) => { window.__busy = pysse.py(code); }", BUSY)
    page.wait_for_timeout(200)  # (the worker is in the loop now)
    page.fill("[data-role=search]", "app")
    page.fill("[data-role=search]", "pears")
    page.click("[data-role=theme]")
    page.click("[data-role=theme]")
    page.fill("[data-role=prompt]", "/demo echo sent while busy")
    page.press("[data-role=prompt]", "Enter")
    page.evaluate("() => window.__busy")
    settled(page)
    assert page.evaluate("() => document.documentElement.dataset.theme") == "dark"  # 2 presses
    page.wait_for_selector("[data-role=search-results][data-term='pears']")
    p.wait_done()
    texts = page.eval_on_selector_all(
        "[data-role=assistant]", "els => els.map((e) => e.dataset.text)"
    )
    assert texts == ["apples and pears", "sent while busy"]
    saved = json.loads(page.evaluate("() => localStorage.getItem('pysse.settings.v1')"))
    assert saved["theme"] == "dark"


EARLY_AT = """(() => { const e = (globalThis.pysseEarly || [])[0];
  return e ? { at: performance.timeOrigin + e.at, adopted: e.adopted } : null; })()"""


def answered_early(p: Any, text: str) -> None:
    """The page became ready, the answer ``text`` is on screen, and its request went out
    before Python was up and was adopted by it."""
    p.page.wait_for_selector("body[data-ready='1']", timeout=120_000)
    assert p.wait_done().get_attribute("data-text") == text
    early = beside_python(p.page, EARLY_AT)
    ready_at = p.page.evaluate("() => performance.timeOrigin + window.pysseReadyAt")
    assert early["adopted"] and early["at"] < ready_at  # out before Python was up


def test_a_first_visits_message_goes_out_before_python_is_up(make_page: Any) -> None:
    """A first visit has kept nothing: site.json has the request a fresh page makes
    (``pysse.app.next_request.first_visit``, written by the server). A message typed while
    Python starts goes out from the worker at once; Python adopts it when it is up (the same
    bytes): one request, its answer rendered whole."""
    p = make_page(thread="worker", first_visit=True)
    page = p.page
    held: list[Any] = []  # site.json comes only after the message is sent (a slow network)
    page.route("**/site.json", lambda route: held.append(route))
    page.goto(p.url, wait_until="commit")
    page.wait_for_selector("body[data-booting='1']")
    page.fill("[data-role=prompt]", "/demo echo the early bird, first visit")
    page.press("[data-role=prompt]", "Enter")
    while not held:
        page.wait_for_timeout(20)
    assert not [u for u in p.requests if u.endswith("/completions")]  # (no template yet)
    site = held[0].fetch()
    assert site.json()["first"]["url"].endswith("/v1/chat/completions")
    held[0].fulfill(response=site)
    answered_early(p, "the early bird, first visit")
    assert beside_python(page, "globalThis.pysseEarly.length") == 1
    assert [u for u in p.requests if u.endswith("/v1/chat/completions")] == [
        p.base + "/v1/chat/completions"
    ]  # one request: Python sent none of its own


def test_a_message_sent_while_python_starts_goes_out_at_once(
    make_page: Any, sse_server: Any
) -> None:
    """The page keeps, for the next visit, the request a next message would make. A message
    sent while that visit starts goes out from the worker before Python is up; Python adopts
    it (the same bytes), and the answer is rendered when Python is ready: one request, the
    text whole, as if sent later."""
    from pysse.testing import Script

    sse_server.play(Script.answer("first answer", "openai-chat"))
    p = make_page(thread="worker", settings={"relay": sse_server.url, "format": "openai-chat"})
    page = p.open()
    p.send("first question")
    p.wait_done()
    page.wait_for_function("() => !!localStorage.getItem('pysse.next.v1')")
    sse_server.play(Script.answer("The early bird's answer.", "openai-chat").paced(0.01))
    page.reload(wait_until="commit")
    page.wait_for_selector("body[data-booting='1']")
    page.fill("[data-role=prompt]", "an early question")
    page.press("[data-role=prompt]", "Enter")
    answered_early(p, "The early bird's answer.")
    _, second = sse_server.requests  # one request for it, not two
    body = json.loads(second.body)
    assert [m["content"] for m in body["messages"]] == [
        "first question", "first answer", "an early question",
    ]  # fmt: skip
