"""Search across chats in Chromium (#23): 50 imported chats, a term in three of them (one
long chat, the term at its top; hostile markup beside it in another): the live count, the
results with the term marked as escaped text, opening one at its message (scrolled into view
and marked), the arrow keys and Enter, Escape back to the list; a chat's text is read again
after it changes; a search over chats not yet in memory reads them from storage."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from test_browser_a11y import THEMES, serious

from bench.search_corpus import chat
from conftest import (
    axe_path,
    beside_python,
    in_store,
    py,
    settled,
    wait_beside_python,
    wait_until,
)

pytestmark = pytest.mark.browser

N = 50
TERM_IN = {5: (1, "KALEIDOSCOPE"), 17: (3, "kaleidoscope"), 42: (1, "Kaleidoscopes")}
HOSTILE = '<img src=x onerror="window.__xss=1"> '
LONG = 42  # 16 answers: its matching answer (the first) is far above the end it opens at


def chat_doc(i: int) -> dict[str, Any]:
    doc = chat(i, answers=16 if i == LONG else 2, size=500 if i == LONG else 200)
    if i in TERM_IN:
        k, word = TERM_IN[i]
        msg = doc["messages"][k]
        after = HOSTILE if i == 17 else ""
        msg["text"] = f"the {word} {after}turns. " + msg["text"]
    return dict(doc)


def import_all(page: Any, tmp_path: Path) -> None:
    for i in range(N):
        path = tmp_path / f"chat{i}.json"
        path.write_text(json.dumps(chat_doc(i)))
        page.set_input_files("[data-role=import]", str(path))
        page.wait_for_function(
            "(n) => document.querySelectorAll('[data-role=chat-list] li[data-chat]').length === n",
            arg=i + 1,
        )


def import_chats(page: Any, tmp_path: Path, ids: tuple[int, ...]) -> None:
    """Import these corpus chats one by one, each waited for in the list."""
    for i in ids:
        path = tmp_path / f"chat{i}.json"
        path.write_text(json.dumps(chat_doc(i)))
        page.set_input_files("[data-role=import]", str(path))
        page.wait_for_selector(f"[data-role=chat-list] li[data-chat=bench{i:04d}]")


def type_term(page: Any, term: str, count: str) -> None:
    """Type ``term`` and wait for its complete results (``data-term``), then check the count."""
    page.fill("[data-role=search]", term)
    page.wait_for_function(
        "(t) => document.querySelector('[data-role=search-results]').dataset.term === t",
        arg=term,
        timeout=60_000,
    )
    assert page.inner_text("[data-role=search-count]") == count


def results(page: Any) -> list[dict[str, Any]]:
    return list(
        page.eval_on_selector_all(
            "[data-role=search-result]",
            """els => els.map((e) => ({chat: e.dataset.chat, message: e.dataset.message,
                 marks: [...e.querySelectorAll('mark')].map((m) => m.textContent),
                 html: e.querySelector('.snippet').innerHTML,
                 text: e.querySelector('.snippet').textContent}))""",
        )
    )


def test_search_fifty_imported_chats(make_page: Any, tmp_path: Path) -> None:
    p = make_page(viewport={"width": 1100, "height": 700})
    page = p.open()
    import_all(page, tmp_path)
    field = page.locator("[data-role=search]")
    assert page.locator("label[for=chat-search]").inner_text() == "Search chats"
    assert page.get_attribute("[data-role=search-count]", "aria-live") == "polite"

    gen = py(page, "app.chats.search._gen")
    page.fill("[data-role=search]", "k")  # one letter: the list stays
    # (the keystroke's search is a task: it has run, else the list would still be shown
    # whatever it then did)
    wait_until(page, "async (g) => (await pysse.py('app.chats.search._gen')) > g", gen)
    assert page.is_visible("[data-role=chat-list]")
    assert page.locator("[data-role=search-result]").count() == 0

    type_term(page, "kaleidoSCOPE", "3 chats")
    assert page.is_hidden("[data-role=chat-list]")
    found = results(page)
    # newest first: chat 5 is newer than 17, 17 than 42
    assert [r["chat"] for r in found] == ["bench0005", "bench0017", "bench0042"]
    assert [r["message"] for r in found] == ["m2", "m4", "m2"]
    assert [r["marks"] for r in found] == [["KALEIDOSCOPE"], ["kaleidoscope"], ["Kaleidoscope"]]
    assert "<img" not in found[1]["html"] and "&lt;img" in found[1]["html"]
    assert 'onerror="window.__xss=1"' in found[1]["text"]  # shown as text
    assert page.evaluate("window.__xss") is None

    needle = "zqx0031needle"  # in chat 31 only (bench.search_corpus.needle_for)
    type_term(page, needle.upper(), "1 chat")
    assert [r["chat"] for r in results(page)] == ["bench0031"]
    type_term(page, "no such words anywhere", "0 chats")
    assert page.inner_text("[data-role=search-results]") == "No chat has this text."

    # the keyboard: down into the results, down again, Enter opens the second
    type_term(page, "kaleidoscope", "3 chats")
    field.press("ArrowDown")
    assert page.evaluate("document.activeElement.dataset.chat") == "bench0005"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.dataset.chat") == "bench0042"
    page.keyboard.press("Enter")
    hit = "[data-role=log] article[data-search-hit]"
    page.wait_for_selector(hit)
    assert page.get_attribute(hit, "data-id") == "m2"
    # the term itself is marked inside that message (a CSS highlight: the DOM is untouched)
    assert marked(page) == {"text": "Kaleidoscope", "in_hit": True}
    # the opened chat is the long one, and its first answer is in the log's view
    page.wait_for_function(
        """() => { const a = document.querySelector('[data-role=log] article[data-search-hit]');
             const v = document.querySelector('[data-role=log]').getBoundingClientRect();
             const r = a.getBoundingClientRect();
             return r.top < v.bottom && r.bottom > v.top; }"""
    )
    assert page.evaluate(
        "document.querySelector('[data-role=log]').scrollHeight"
        " > 2 * document.querySelector('[data-role=log]').clientHeight"
    )

    # Escape in the field clears it: the whole list is back
    field.focus()
    field.press("Escape")
    assert field.input_value() == ""
    assert page.is_visible("[data-role=chat-list]") and page.is_hidden("[data-role=search-results]")
    assert page.locator("[data-role=chat-list] li[data-chat]").count() == N
    assert page.inner_text("[data-role=search-count]") == ""

    # a click opens a result too, and the mark moves to the new message
    type_term(page, "kaleidoscope", "3 chats")
    page.click("[data-role=search-result][data-chat=bench0017]")
    page.wait_for_selector("[data-role=log] article[data-search-hit][data-id=m4]")
    assert page.locator("[data-role=log] article[data-search-hit]").count() == 1
    assert marked(page) == {"text": "kaleidoscope", "in_hit": True}


def marked(page: Any) -> dict[str, Any]:
    """The text the search's CSS highlight covers, and whether it is in the marked message
    (waits for it: the message may still be rendering)."""
    page.wait_for_function(
        "() => CSS.highlights.has('pysse-search') && [...CSS.highlights.get('pysse-search')]"
        ".some((r) => document.querySelector('article[data-search-hit]').contains("
        "r.startContainer))",
        timeout=10_000,
    )
    return dict(
        page.evaluate(
            """() => { const [r] = [...CSS.highlights.get('pysse-search')];
            return {text: r.toString(), in_hit: document.querySelector(
              'article[data-search-hit] .content').contains(r.commonAncestorContainer)}; }"""
        )
    )


def test_a_changed_chat_is_searched_again_and_a_reload_reads_from_storage(
    make_page: Any, tmp_path: Path
) -> None:
    p = make_page()
    page = p.open()
    import_chats(page, tmp_path, (3, 5))
    type_term(page, "kaleidoscope", "1 chat")
    page.fill("[data-role=search]", "")
    page.wait_for_selector("[data-role=chat-list]", state="visible")  # the list is back
    assert page.locator("[data-role=search-result]").count() == 0
    p.send("tell me about kaleidoscope lenses")  # into the open chat (bench0005)
    p.wait_done()
    type_term(page, "kaleidoscope LENSES", "1 chat")
    assert results(page)[0]["marks"] == ["kaleidoscope lenses"]
    # after a reload only the open chat is in memory: the other is read from storage, from
    # its search record (stored with it), not from its whole body
    p.reload()
    type_term(page, "zqx0003needle", "1 chat")
    assert [r["chat"] for r in results(page)] == ["bench0003"]
    assert reads(page) == {"memory": 1, "record": 1, "body": 0}


def test_a_renamed_chat_is_found_by_its_name(make_page: Any, tmp_path: Path) -> None:
    p = make_page()
    page = p.open()
    import_chats(page, tmp_path, (3, 5))
    page.click("[data-chat=bench0003] [data-role=chat-rename]")
    page.fill("[data-role=chat-title]", "Quarterly taxes")
    page.press("[data-role=chat-title]", "Enter")
    page.wait_for_selector("[data-chat=bench0003] >> text=Quarterly taxes")
    type_term(page, "QUARTERLY", "1 chat")
    (found,) = results(page)
    assert (found["chat"], found["message"], found["marks"]) == ("bench0003", "", ["Quarterly"])
    assert found["text"].startswith("Name: ")
    page.click("[data-role=search-result]")
    page.wait_for_function(
        "() => document.querySelector('[data-role=chat-list] [aria-current]')"
        "?.dataset.chat === 'bench0003'"
    )


def test_results_on_screen_follow_the_chats(make_page: Any, tmp_path: Path) -> None:
    """Results stay true to the chats without a keystroke: a chat imported (or changed)
    meanwhile that holds the term joins them, and a deleted one leaves them."""
    p = make_page()
    page = p.open()
    page.on("dialog", lambda d: d.accept())
    import_chats(page, tmp_path, (3, 5))
    type_term(page, "kaleidoscope", "1 chat")
    path = tmp_path / "chat17.json"
    path.write_text(json.dumps(chat_doc(17)))
    page.set_input_files("[data-role=import]", str(path))  # (the list is hidden meanwhile)
    page.wait_for_function(
        "() => document.querySelector('[data-role=search-count]').textContent === '2 chats'"
    )
    assert [r["chat"] for r in results(page)] == ["bench0005", "bench0017"]  # (by updated)
    page.click("[data-role=delete-all]")
    page.wait_for_function(
        "() => document.querySelector('[data-role=search-count]').textContent === '0 chats'"
    )
    assert results(page) == []


def reads(page: Any) -> dict[str, int]:
    """Where the search view took each chat's text from (``SearchView.reads``)."""
    return dict(json.loads(page.evaluate("pysse.stats()"))["search_reads"])


def test_a_chat_stored_without_a_usable_search_record_is_read_whole_and_gets_one(
    make_page: Any, tmp_path: Path
) -> None:
    """Chats stored by a page before search records, or whose record does not match the row
    (a later save whose record did not land): found all the same, from their bodies, and the
    next reload reads the records written meanwhile."""
    p = make_page()
    page = p.open()
    import_chats(page, tmp_path, (3, 5, 17))
    in_store(page, "pysseStore.del('search', 'bench0003')")  # as an older page stored it
    in_store(  # a record older than its row
        page,
        """(async () => { const r = JSON.parse(await pysseStore.get('search', 'bench0005'));
        r.updated -= 1; r.messages = []; await pysseStore.put('search', 'bench0005',
        JSON.stringify(r)); })()""",
    )
    p.reload()  # bench0017 (imported last) is the open chat
    type_term(page, "kaleidoscope", "2 chats")  # (bench0005 and bench0017)
    assert reads(page) == {"memory": 1, "record": 0, "body": 2}
    deadline = time.monotonic() + 30  # the record is written after the search: wait for it
    while in_store(page, "pysseStore.get('search', 'bench0003')") is None:
        assert time.monotonic() < deadline, "the record read from its body was never written"
        time.sleep(0.1)
    p.reload()
    type_term(page, "zqx0003needle", "1 chat")
    assert reads(page) == {"memory": 1, "record": 2, "body": 0}


HOLD_READS = """(() => { const read = pysseStore.getMany; globalThis.__held = [];
  pysseStore.getMany = (store, keys) => store !== 'search' ? read(store, keys)
    : new Promise((go) => globalThis.__held.push(() => go(read(store, keys)))); return 1; })()"""


def test_results_grow_while_the_chats_are_read(make_page: Any, tmp_path: Path) -> None:
    """The chats in memory are searched at once and the stored ones as they are read: with
    the reads of stored chats held, the open chat's hit is shown, counted "so far"; once
    they go on, the rest are found and the results are complete."""
    p = make_page()
    page = p.open()
    import_chats(page, tmp_path, (3, 5, 17))
    p.reload()  # bench0017 (imported last) is the open chat: in memory
    beside_python(page, HOLD_READS)  # (the chats are read where Python runs)
    page.fill("[data-role=search]", "kaleidoscope")
    wait_beside_python(page, "globalThis.__held.length")
    page.wait_for_selector("[data-role=search-result][data-chat=bench0017]")
    assert page.get_attribute("[data-role=search-results]", "data-term") == ""  # searching
    assert page.inner_text("[data-role=search-count]") == "1 chat so far, searching…"
    page.press("[data-role=search]", "ArrowDown")  # a reader on the first result meanwhile
    beside_python(
        page, "(() => { for (const go of globalThis.__held.splice(0)) go(); return 1; })()"
    )
    settled(page)
    page.wait_for_function(
        "() => document.querySelector('[data-role=search-results]').dataset.term === 'kaleidoscope'"
    )
    assert page.inner_text("[data-role=search-count]") == "2 chats"
    assert [r["chat"] for r in results(page)] == ["bench0005", "bench0017"]
    # the results were rendered again as they grew: the reader is still on that result
    assert page.evaluate("() => document.activeElement.dataset.chat") == "bench0017"


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_search_results_and_a_marked_message_pass_axe(
    make_page: Any, tmp_path: Path, theme: str
) -> None:
    source = axe_path().read_text()
    settings, context = THEMES[theme]
    p = make_page(settings=settings, bypass_csp=True, **context)
    page = p.open()
    import_chats(page, tmp_path, (5, 17, 42))
    type_term(page, "kaleidoscope", "3 chats")
    assert page.locator("[data-role=search-result] mark").count() == 3
    assert serious(page, source) == []
    page.click("[data-role=search-result][data-chat=bench0005]")
    page.wait_for_selector("[data-role=log] article[data-search-hit]")
    assert serious(page, source) == []
