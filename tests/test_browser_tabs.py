"""Two tabs of the page, one answer (issue #40, Chromium): an answer streaming in one tab shows
in the other as it is saved, and when the tab streaming it reloads mid-answer, exactly one tab
resumes it from the relay. (Lists, merges and deletes in three engines:
``tests/test_engines_tabs.py``.)"""

from __future__ import annotations

import time
from typing import Any

import pytest

from conftest import READY_MS
from pysse.server.demo import RICH_ANSWER

pytestmark = pytest.mark.browser

LAST = """() => { const a = [...document.querySelectorAll('[data-role=assistant]')].at(-1);
  return a ? { state: a.dataset.state, status: a.querySelector('.status').textContent,
    text: a.dataset.text || '' } : null; }"""


def twin(p: Any) -> Any:
    """The page again, in another tab of the same profile (one chat store)."""
    tab = p.ctx.new_page()
    tab.on("pageerror", lambda e: p.errors.append(f"tab 2: {e}"))
    tab.goto(p.url)
    tab.wait_for_selector("body[data-ready='1']", timeout=READY_MS)
    return tab


def test_an_answer_streaming_in_one_tab_shows_in_the_other_and_one_tab_resumes_it(
    make_page: Any,
) -> None:
    p = make_page(settings={"headers": "X-Demo-Pace: 1"})
    a = p.open()
    p.send("/demo echo hello")
    p.wait_done()
    b = twin(p)
    resumes: list[str] = []
    p.ctx.on("request", lambda r: resumes.append(r.url) if "answer=" in r.url else None)
    p.send("/demo slow")
    # B shows it streaming there, as A saves it (every 2 s), and never asks the relay
    b.wait_for_function(
        f"() => {{ const m = ({LAST})(); return m && m.state === 'streaming'"
        " && m.status.includes('another tab') && m.text.length > 30; }",
        timeout=30_000,
    )
    # A reloads mid-answer: its lock goes; one tab (B, or A once it is back) resumes it
    a.reload()
    a.wait_for_selector("body[data-ready='1']", timeout=READY_MS)
    for tab in (a, b):
        tab.wait_for_function(
            f"() => {{ const m = ({LAST})(); return m && m.state === 'completed'; }}",
            timeout=120_000,
        )
        assert tab.evaluate(LAST)["text"] == RICH_ANSWER
    assert len([u for u in resumes if "answer=" in u and "DELETE" not in u]) == 1, resumes


# Each stored answer of the page's chats: [state, text] (what a reload shows).
STORED_ANSWERS = """() => new Promise((resolve, reject) => {
  const open = indexedDB.open("pysse");
  open.onsuccess = () => { const req = open.result.transaction("bodies").objectStore("bodies").getAll();
    req.onsuccess = () => { open.result.close();
      resolve(req.result.map((b) => JSON.parse(b).messages).flat()
        .filter((m) => m.role === "assistant").map((m) => [m.state, m.text])); }; };
  open.onerror = () => reject(open.error); })"""


def stored_until(tab: Any, ok: Any, timeout: float = 30) -> list[list[str]]:
    """The stored answers once ``ok`` holds for them (a function's promise, read until then)."""
    end = time.monotonic() + timeout
    while True:
        got = tab.evaluate(STORED_ANSWERS)
        if ok(got) or time.monotonic() > end:
            return list(got)
        time.sleep(0.2)


def test_a_tab_frozen_while_it_holds_a_lock_never_keeps_a_question_from_being_stored(
    make_page: Any,
) -> None:
    """A phone freezes a background tab with whatever Web Lock it holds. Saves once waited on
    the chat's lock (and, in WebKit under load, 0.5-4 s for an uncontended one), so a reload
    lost the question and its answer. A save is now a compare-and-set in one IndexedDB
    transaction: no lock is waited for."""
    p = make_page()
    a = p.open()
    p.send("/demo echo one")
    p.wait_done()
    stored_until(a, lambda s: len(s) == 1)
    chat_id = a.evaluate(
        "() => new Promise((r) => { const o = indexedDB.open('pysse'); o.onsuccess = () =>"
        " { const q = o.result.transaction('chats').objectStore('chats').getAllKeys();"
        " q.onsuccess = () => { o.result.close(); r(q.result[0]); }; }; })"
    )
    frozen = twin(p)
    frozen.evaluate(  # held for good, as by a tab frozen mid-write
        "(names) => { for (const n of names) navigator.locks.request(n, () => new Promise(() => {})); }",
        [f"pysse-chat:{chat_id}", "pysse-recordings"],
    )
    p.send("/demo echo two")
    p.wait_done()
    got = stored_until(a, lambda s: len(s) == 2 and all(st == "completed" for st, _ in s))
    assert [text for _, text in got] == ["one", "two"], got
    p.reload()
    texts = [
        t.replace("\u00a0", " ")
        for t in a.eval_on_selector_all(
            "[data-role=user]", "(els) => els.map((e) => e.textContent)"
        )
    ]
    assert any("one" in t for t in texts) and any("two" in t for t in texts), texts
    assert len(p.answers()) == 2 and p.errors == []
