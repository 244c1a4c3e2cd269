"""Two tabs of the page on one chat store, in Chromium, Firefox and WebKit (issue #40): a stale
tab never overwrites the other's question and answer, each tab sees the other's messages and
chats live, and a chat deleted in one tab closes in the other. (Every interleaving is the
property test's: ``tests/test_chats_merge.py``; the rules in CPython: ``tests/test_app_tabs.py``.)
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.browser

STORED = """() => new Promise((resolve, reject) => {
  const open = indexedDB.open("pysse");
  open.onerror = () => reject(open.error);
  open.onsuccess = () => {
    const req = open.result.transaction("bodies").objectStore("bodies").getAll();
    req.onsuccess = () => { open.result.close();
      resolve(req.result.map((b) => JSON.parse(b).messages.map((m) => m.text))); };
    req.onerror = () => reject(req.error);
  };
})"""
SHOWN = """() => [...document.querySelectorAll('[data-role=log] article[data-id]')].map((a) =>
  a.dataset.role === 'user' ? a.querySelector('.content').textContent : a.dataset.text)"""
LISTED = "() => [...document.querySelectorAll('[data-role=chat-list] li[data-chat]')].length"
NOTICES = """() => [...document.querySelectorAll('[data-role=notice]')].map((n) => n.textContent)
  .join(' | ')"""


def ask(chat: Any, text: str) -> None:
    chat.send(text)
    chat.wait_done()


def test_two_tabs_on_one_chat_lose_nothing_and_see_each_other(open_chat: Any) -> None:
    a = open_chat()
    # BroadcastChannel and Web Locks where the page's Python runs, in every engine
    assert a.page.evaluate("() => pysse.py('sorted(app.platform.tabs.features)')") == [
        "broadcast",
        "locks",
    ]
    ask(a, "the first question")
    b = a.twin()  # opened now: the same chat, from the store
    try:
        assert b.page.evaluate(SHOWN)[0] == "the first question"
        # B's window holds the chat's old lock for good, as a tab frozen mid-write would:
        # writes are compare-and-sets that wait on no lock (test_browser_tabs.py)
        chat_id = a.page.evaluate("() => pysse.py('app.conv.id')")
        b.page.evaluate(
            "(n) => { navigator.locks.request(n, () => new Promise(() => {})); return 1; }",
            f"pysse-chat:{chat_id}",
        )
        ask(a, "A asks")
        b.page.wait_for(f"() => ({SHOWN})().includes('A asks')", timeout=30)  # live
        ask(b, "B asks")
        a.page.wait_for(f"() => ({SHOWN})().includes('B asks')", timeout=30)
        # (B's answer is stored once it is done: a moment after B shows it done)
        (texts,) = a.page.wait_for(
            f"async () => {{ const s = await ({STORED})(); return s[0].length === 6 && s[0].every((t) => t) && s; }}",
            timeout=30,
        )
        assert [t for t in texts if t.endswith("asks") or t == "the first question"] == [
            "the first question", "A asks", "B asks",
        ]  # fmt: skip
        assert len(texts) == 6 and all(texts)  # every answer kept too
        # a new chat in A shows in B's list without a reload
        a.page.click("[data-role=new-chat]")
        ask(a, "a second chat")
        b.page.wait_for(f"() => ({LISTED})() === 2", timeout=30)
        # B deletes the chat open in A (not in B): A closes it with a notice
        b.page.evaluate("() => { window.confirm = () => true; }")
        b.page.click("[data-role=chat-list] li:not([aria-current]) [data-role=chat-delete]")
        a.page.wait_for(f"() => ({NOTICES})().includes('deleted in another tab')", timeout=30)
        a.page.wait_for(f"() => ({LISTED})() === 1", timeout=30)
        # ... and the chat open in B, which A has loaded too: never written back by either
        b.page.click("[data-role=chat-list] li [data-role=chat-delete]")
        a.page.wait_for(f"() => ({LISTED})() === 0", timeout=30)
        b.page.wait_for(f"() => ({LISTED})() === 0", timeout=30)
        ask(a, "after the deletes")
        stored = a.page.evaluate(STORED)
        assert len(stored) == 1 and stored[0][0] == "after the deletes", stored
        assert b.page.errors() == []
    finally:
        b.page.close()
