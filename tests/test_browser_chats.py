"""Chats that last, in Chromium: a reload restores the open chat (and its inspector
recording), chats switch without mixing, rename, delete, delete all, export and import, and a
page whose storage fails says so and keeps working in memory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import (
    FRAME,
    beside_python,
    expect,
    log_texts,
    py,
    settled,
    stored_answers,
    wait_beside_python,
    wait_stored,
    wait_until,
)
from pysse.server.demo import RICH_ANSWER

pytestmark = pytest.mark.browser


def chat_titles(page: Any) -> list[str]:
    return [
        str(t)
        for t in page.eval_on_selector_all(
            "[data-role=chat-list] [data-role=chat-open]", "els => els.map(e => e.textContent)"
        )
    ]


def open_chat(page: Any, title: str) -> None:
    page.click(f"[data-role=chat-open] >> text={title}")
    page.wait_for_function(
        "(t) => { const u = document.querySelector('[data-role=log] [data-role=user] .content');"
        " return u && u.textContent === t; }",
        arg=title,
    )


def wait_recording(page: Any, index: int = 0) -> str:
    wait_until(page, "async (i) => (await pysse.rawHex(i)).length > 0", index, timeout=20)
    return str(page.evaluate("(i) => pysse.rawHex(i)", index))


def test_reload_restores_the_chat_and_its_inspector_recording(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    p.send("/demo echo first answer")
    p.wait_done()
    p.send("/demo drop")
    p.wait_done()
    raw = [wait_recording(page, 0), wait_recording(page, 1)]
    before = log_texts(page)
    html = page.inner_html("[data-role=assistant] >> nth=1")
    # Both answers stored as they ended, with their recordings (was: 300 ms for "the last
    # write lands", which a busy page had not done yet).
    wait_stored(
        page,
        lambda db: (
            sorted(m["state"] for m in stored_answers(db)) == ["completed", "truncated"]
            and sorted(r["size"] for r in db["recordings"]) == sorted(len(h) // 2 for h in raw)
        ),
    )
    p.reload()
    # Both restored answers rendered (placeholders at first, rendered in later tasks: the
    # <li> count below read a placeholder's empty HTML), and a frame since (polled in
    # animation frames: their status and speed lines are rendered text, see shown_text).
    page.wait_for_function(
        "() => document.querySelectorAll('[data-role=assistant]').length === 2"
        " && !document.querySelector('[data-role=assistant][data-pending]')"
    )
    assert log_texts(page) == before
    answers = p.answers()
    assert [a.get_attribute("data-state") for a in answers] == ["completed", "truncated"]
    assert "Truncated" in answers[1].query_selector(".status").inner_text()
    assert page.inner_html("[data-role=assistant] >> nth=1").count("<li ") == html.count("<li ")
    assert "to first token" in answers[0].query_selector("[data-role=speed]").inner_text()
    assert not answers[1].query_selector("[data-role=continue]").is_hidden()
    assert [wait_recording(page, 0), wait_recording(page, 1)] == raw
    answers[1].query_selector("[data-role=inspect]").click()
    page.wait_for_selector("[data-role=inspector]:not([hidden])")
    page.click("[data-tab=timing]")
    outcome = page.inner_text("[data-role=insp-timing] dd[data-key=outcome]")
    assert outcome == "truncated: the connection closed before data: [DONE]"
    page.click("[data-tab=raw]")
    assert page.locator("[data-role=insp-chunks] tbody tr").count() >= 1
    assert chat_titles(page) == ["/demo echo first answer"]


def test_two_chats_switch_without_mixing(make_page: Any) -> None:
    p = make_page(settings={"headers": "X-Demo-Pace: 0.5"})
    page = p.open()
    bodies: list[Any] = []
    page.on(
        "request", lambda r: bodies.append(json.loads(r.post_data)) if r.method == "POST" else None
    )
    p.send("/demo echo alpha")
    p.wait_done()
    page.click("[data-role=new-chat]")
    page.wait_for_selector("body[data-empty='1']")
    p.send("/demo slow")  # still streaming when we switch away
    page.wait_for_function(
        "() => document.querySelector('[data-role=assistant] .content').textContent.length > 5"
    )
    assert chat_titles(page) == ["/demo slow", "/demo echo alpha"]
    open_chat(page, "/demo echo alpha")
    assert log_texts(page) == ["/demo echo alpha", "alpha"]
    assert page.is_disabled("[data-role=stop]")  # nothing streams in this chat
    p.send("/demo echo beta")  # while the other chat's answer streams on, out of sight
    p.wait_done()
    assert log_texts(page) == ["/demo echo alpha", "alpha", "/demo echo beta", "beta"]
    assert [m["content"] for m in bodies[-1]["messages"]] == [
        "/demo echo alpha",
        "alpha",
        "/demo echo beta",
    ]
    open_chat(page, "/demo slow")
    slow = p.wait_done(timeout=90_000)
    assert slow.get_attribute("data-text") == RICH_ANSWER  # finished in the background
    assert log_texts(page) == ["/demo slow", RICH_ANSWER]
    p.reload()
    assert log_texts(page) == ["/demo slow", RICH_ANSWER]  # the open chat stays open


def test_rename_delete_and_delete_all(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    page.on("dialog", lambda d: d.accept())
    for word in ("one", "two", "three"):
        page.click("[data-role=new-chat]")
        p.send(f"/demo echo {word}")
        p.wait_done()
    assert chat_titles(page) == ["/demo echo three", "/demo echo two", "/demo echo one"]
    page.click("[data-chat] >> nth=1 >> [data-role=chat-rename]")
    page.fill("[data-role=chat-title]", "  Second   chat ")
    page.press("[data-role=chat-title]", "Enter")
    page.wait_for_function(
        "() => document.querySelector('[data-role=chat-list]').textContent.includes('Second chat')"
    )
    assert chat_titles(page) == ["/demo echo three", "Second chat", "/demo echo one"]
    page.click("[data-chat]:has-text('/demo echo three') [data-role=chat-delete]")  # the open one
    page.wait_for_function("() => document.querySelectorAll('[data-chat]').length == 2")
    assert page.locator("[data-role=assistant]").count() == 0  # a fresh chat is open
    p.reload()
    assert sorted(chat_titles(page)) == ["/demo echo one", "Second chat"]
    page.click("[data-role=delete-all]")
    page.wait_for_selector("[data-role=chat-list] .empty")
    p.reload()
    assert chat_titles(page) == []


def test_export_markdown_and_json_then_import(make_page: Any, tmp_path: Path) -> None:
    p = make_page()
    page = p.open()
    p.send("/demo echo exported text")
    p.wait_done()
    raw = wait_recording(page)
    with page.expect_download() as dl:
        page.click("[data-role=export-md]")
    md = tmp_path / "chat.md"
    dl.value.save_as(md)
    assert (
        md.read_text()
        == "# /demo echo exported text\n\n## You\n\n/demo echo exported text\n\n## Assistant\n\nexported text\n"
    )
    with page.expect_download() as dl:
        page.click("[data-role=export-json]")
    saved = tmp_path / dl.value.suggested_filename
    dl.value.save_as(saved)
    doc = json.loads(saved.read_text())
    assert doc["schema"] == "pysse.conversation" and len(doc["recordings"]) == 1
    page.on("dialog", lambda d: d.accept())
    page.click("[data-role=delete-all]")
    page.wait_for_selector("[data-role=chat-list] .empty")
    page.set_input_files("[data-role=import]", str(saved))
    page.wait_for_function("() => document.querySelectorAll('[data-role=assistant]').length == 1")
    assert log_texts(page) == ["/demo echo exported text", "exported text"]
    assert wait_recording(page) == raw
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "pysse.conversation", "version": 1, "messages": [{"role": "x"}]}')
    page.set_input_files("[data-role=import]", str(bad))
    # written when the file has been read (a task later): waited for, as it is read
    expect(page.locator("[data-role=notice]")).to_contain_text(
        "Could not import bad.json: message 0 has role 'x'"
    )
    # a hand-edited file (issue #40): a 401-digit speed is refused, naming the field; it
    # never imports to a chat that cannot open
    doc["messages"][1]["speed"]["ttft_ms"] = 10**400
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    page.set_input_files("[data-role=import]", str(edited))
    expect(page.locator("[data-role=notice]").last).to_have_text(
        "Could not import edited.json: message 1's speed.ttft_ms must be a number from 0 to 1e+09"
    )
    assert page.locator("[data-role=chat-list] li[data-chat]").count() == 1


@pytest.mark.parametrize(
    ("script", "needle"),
    [
        ("delete window.indexedDB;", "storage is not available"),
        (
            "IDBObjectStore.prototype.put = function () {"
            " throw new DOMException('full', 'QuotaExceededError'); };",
            "storage for this site is full",
        ),
    ],
)
def test_storage_failure_is_reported_and_the_page_works_in_memory(
    make_page: Any, script: str, needle: str
) -> None:
    # (IndexedDB taken away before the page starts: where Python runs on the main thread, the
    # init script reaches it; a worker's realm is the same code, beside_python shows that)
    p = make_page(thread="main")
    p.page.add_init_script(script)
    page = p.open()
    p.send("/demo echo kept in memory")
    msg = p.wait_done()
    assert msg.get_attribute("data-text") == "kept in memory"
    # (a failed write is said when its promise fails: maybe after the answer ended)
    notices = page.locator("[data-role=notice]")
    expect(notices).to_contain_text(needle)
    expect(notices).to_contain_text("keeps working")
    assert notices.count() == 1  # said once
    page.click("[data-role=new-chat]")
    p.send("/demo echo second")
    assert p.wait_done().get_attribute("data-text") == "second"
    open_chat(page, "/demo echo kept in memory")
    assert log_texts(page) == ["/demo echo kept in memory", "kept in memory"]


FULL = """(() => { IDBObjectStore.prototype.put = function () {
  throw new DOMException('full', 'QuotaExceededError'); }; return 1; })()"""


def titles_stored(stored: dict[str, Any]) -> list[str]:
    return sorted(str(b["messages"][0]["text"]) for b in stored["bodies"])


def test_a_full_store_still_deletes_chats_and_opens_the_stored_ones(make_page: Any) -> None:
    """A failed write (the store is full) is said, advising to delete old chats: deleting
    one must reach the store, and a chat only in the store must still open. The first
    failure turned storage off for every later call, deletes and reads too."""
    p = make_page()
    page = p.open()
    page.on("dialog", lambda d: d.accept())
    for word in ("one", "two"):
        page.click("[data-role=new-chat]")
        p.send(f"/demo echo {word}")
        p.wait_done()
    wait_stored(page, lambda s: titles_stored(s) == ["/demo echo one", "/demo echo two"])
    page = p.reload()  # "two" is open; "one" is only in the store
    beside_python(page, FULL)  # (IndexedDB is the worker's)
    p.send("/demo echo three")  # into "two": its save fails
    p.wait_done()
    expect(page.locator("[data-role=notice]")).to_contain_text("storage for this site is full")
    open_chat(page, "/demo echo one")
    assert log_texts(page) == ["/demo echo one", "one"]
    page.click("[data-chat]:has-text('/demo echo two') [data-role=chat-delete]")
    wait_stored(page, lambda s: titles_stored(s) == ["/demo echo one"])


@pytest.mark.parametrize("how", ["one", "all"])
def test_chats_deleted_while_an_answer_streams_stay_deleted(make_page: Any, how: str) -> None:
    """The answer is stopped (its model need not go on), and neither a save under way nor
    the answer's end writes the chat back: after "Delete all", the open chat's answer was
    saved when it ended, and the chat was back after a reload."""
    p = make_page(settings={"headers": "X-Demo-Pace: 1"})
    page = p.open()
    page.on("dialog", lambda d: d.accept())
    p.send("/demo slow")
    wait_stored(page, lambda s: any(m.get("state") == "streaming" for m in stored_answers(s)))
    if how == "one":
        page.click("[data-chat]:has-text('/demo slow') [data-role=chat-delete]")
    else:
        page.click("[data-role=delete-all]")
    page.wait_for_selector("[data-role=chat-list] .empty")
    wait_until(page, "async () => (await pysse.py('len(app.answers.active)')) === 0")  # it ended
    states = "[t.state for t in app.answers.turns]"
    assert py(page, states) == ["aborted"]  # stopped, not left to complete
    page.click("[data-role=new-chat]")  # a later chat's save: the store is written after
    p.send("/demo echo later")
    p.wait_done()
    stored = wait_stored(page, lambda s: "/demo echo later" in titles_stored(s))
    assert titles_stored(stored) == ["/demo echo later"]
    p.reload()
    assert chat_titles(page) == ["/demo echo later"]


HOLD_BODIES = """(() => { const get = pysseStore.get; globalThis.__held = [];
  pysseStore.get = (store, key) => store !== 'bodies' ? get(store, key)
    : new Promise((go) => globalThis.__held.push(() => go(get(store, key)))); return 1; })()"""


def test_the_chat_opened_last_is_the_one_shown(make_page: Any) -> None:
    """A chat read from the store (slowly: a long body) is not shown over the one opened
    after it: "New chat" was replaced by the chat clicked before it once its read ended,
    and the next message went into that chat."""
    p = make_page()
    page = p.open()
    p.send("/demo echo stored one")
    p.wait_done()
    page.click("[data-role=new-chat]")
    p.send("/demo echo open one")
    p.wait_done()
    wait_stored(page, lambda s: len(s["bodies"]) == 2)
    page = p.reload()  # "open one" is open; "stored one" is only in the store
    beside_python(page, HOLD_BODIES)  # (the store is read where Python runs)
    page.click("[data-role=chat-open] >> text=/demo echo stored one")
    wait_beside_python(page, "globalThis.__held.length")
    page.click("[data-role=new-chat]")
    beside_python(
        page, "(() => { for (const go of globalThis.__held.splice(0)) go(); return 1; })()"
    )
    settled(page)
    page.evaluate(FRAME)  # the read's continuation has run (a task after the read)
    page.evaluate(FRAME)
    assert log_texts(page) == []  # the new chat stays
    p.send("/demo echo into the new chat")
    p.wait_done()
    assert log_texts(page) == ["/demo echo into the new chat", "into the new chat"]


def test_keep_no_recordings(make_page: Any) -> None:
    p = make_page(settings={"keep_recordings": "no"})
    page = p.open()
    p.send("/demo echo private")
    p.wait_done()
    assert page.evaluate("pysse.rawHex(0)")  # the live answer still has its bytes
    stored = wait_stored(page, lambda db: [m["state"] for m in stored_answers(db)] == ["completed"])
    assert stored["recordings"] == []
    p.reload()
    page.wait_for_selector("[data-role=assistant]")
    # The chat's recordings have been read from storage (was: 500 ms, after which a busy
    # page might not have read them yet: "none kept" would then pass whatever was stored).
    wait_until(page, "() => pysse.py('app.conv.id in app.answers.recordings')")
    assert page.evaluate("pysse.rawHex(0)") == ""  # none was kept
    page.click("[data-role=assistant] [data-role=inspect]")
    assert "was not kept" in page.inner_text("[data-role=insp-body]")


def test_an_empty_chat_welcomes_with_examples_that_send(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    assert page.is_visible("[data-role=welcome]") and not page.is_visible("[data-role=log]")
    page.click("[data-example='/demo help']")
    msg = p.wait_done()
    assert "Demo commands" in msg.inner_text()
    assert page.is_hidden("[data-role=welcome]")
    page.click("[data-role=new-chat]")
    assert page.is_visible("[data-role=welcome]")
