"""Two tabs of the page on one chat store (issue #40), in CPython: two ``ModelPage``s share a
``MemoryStore`` (IndexedDB) and a ``TabHub`` (BroadcastChannel and Web Locks); a hub of their
own each is an engine where tabs cannot hear each other. The same cases run in three browsers
in ``tests/test_engines_tabs.py``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from typing import Any

from model_page import MemoryStore, ModelPage

from pysse.app.tabs import TabHub
from pysse.testing import Script


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(coro)


def answer_bytes(text: str, **kw: Any) -> bytes:
    return Script.answer(text, "openai-chat", **kw).body


def stored_texts(store: MemoryStore) -> list[str]:
    """Every stored message's text, of every chat, in the order they were made."""
    out = []
    for body in store.data["bodies"].values():
        msgs = json.loads(body)["messages"]
        out += [m["text"] for m in sorted(msgs, key=lambda m: m["created"])]
    return out


async def ask(page: ModelPage, question: str, answer: str) -> None:
    page.net.play(answer_bytes(answer))
    page.send(question)
    await page.settle()


async def two_tabs(store: MemoryStore, hub: TabHub | None = None) -> tuple[ModelPage, ModelPage]:
    """Tab A asks once; tab B opens then, on the same chat. ``hub``: the tabs hear each
    other (None: they do not, as in an engine without BroadcastChannel)."""
    a = ModelPage(store, tabs=hub.tab() if hub else None)
    await a.boot()
    await ask(a, "first question", "first answer")
    b = ModelPage(store, tabs=hub.tab() if hub else None)
    await b.boot()
    assert b.app.conv.id == a.app.conv.id
    return a, b


def test_a_stale_tab_adds_its_question_and_removes_nothing() -> None:
    """The issue's case, where the tabs cannot hear each other: only the merge on write
    keeps A's paid-for answer."""

    async def go() -> None:
        store = MemoryStore()
        a, b = await two_tabs(store)
        await ask(a, "A asks", "A's answer")
        await ask(b, "B asks, stale", "B's answer")  # B's copy never saw A's question
        assert stored_texts(store) == [
            "first question", "first answer", "A asks", "A's answer", "B asks, stale", "B's answer",
        ]  # fmt: skip
        assert b.app.chats.store.merges >= 1
        # B asked after the first answer: its question is another branch from there, shown;
        # A's is the other version, one click away
        again = ModelPage(store)
        await again.boot()
        assert again.log_texts() == [
            "first question",
            "first answer",
            "B asks, stale",
            "B's answer",
        ]
        question = again.app.log.querySelectorAll("article[data-id]")[2]
        assert again.q("[data-role=versions]", question).getAttribute("aria-label") == (
            "version 2 of 2"
        )

    run(go())


def test_tabs_see_each_others_chats_and_messages_live() -> None:
    async def go() -> None:
        store, hub = MemoryStore(), TabHub()
        a, b = await two_tabs(store, hub)
        await ask(a, "A asks", "A's answer")
        await b.settle()
        assert b.log_texts() == ["first question", "first answer", "A asks", "A's answer"]
        a.click("[data-role=new-chat]")
        await ask(a, "a new chat", "its answer")
        await b.settle()
        titles = [li.getAttribute("data-chat") for li in b.app.chats.list_el.querySelectorAll("li")]
        assert a.app.conv.id in titles and len(titles) == 2  # without a reload
        await ask(b, "B answers the first chat", "B's answer")
        await a.settle()
        first = a.app.chats.convs[b.app.conv.id]
        assert [m.text for m in first.path()][-2:] == ["B answers the first chat", "B's answer"]

    run(go())


def test_a_chat_deleted_in_another_tab_closes_there_and_is_never_written_back() -> None:
    async def go() -> None:
        store, hub = MemoryStore(), TabHub()
        a, b = await two_tabs(store, hub)
        gone = a.app.conv.id
        a.click("[data-role=chat-delete]")
        await a.settle()
        await b.settle()
        assert b.app.conv.id != gone and gone not in b.app.chats.rows
        notices = [n.textContent for n in b.app.log.querySelectorAll("[data-role=notice]")]
        assert any("deleted in another tab" in n for n in notices)
        assert gone not in store.data["bodies"]

    run(go())


def test_a_tab_that_missed_the_delete_does_not_write_the_chat_back() -> None:
    async def go() -> None:
        store = MemoryStore()
        a, b = await two_tabs(store)  # (no broadcast between them)
        a.click("[data-role=chat-delete]")
        await a.settle()
        gone = a.app.conv.id
        b.net.play(answer_bytes("lost?"))
        b.send("B asks into a deleted chat")
        await b.settle()
        assert store.data["bodies"].get(gone) is None and store.data["chats"].get(gone) is None

    run(go())


def test_an_answer_streaming_in_one_tab_shows_in_the_other_and_is_never_resumed_twice() -> None:
    async def go() -> None:
        store, hub = MemoryStore(), TabHub()
        a, b = await two_tabs(store, hub)
        a.net.play(answer_bytes("slow, and longer")[:60], end=False, answer_id="ans-1")
        a.send("a long one")
        await a.settle()
        await b.settle()
        arts = b.answers()
        assert arts[-1].getAttribute("data-state") == "streaming"
        assert "another tab" in b.q(".status", arts[-1]).textContent
        # a third tab opens now: the answer streams in A, so it reattaches nothing
        c = ModelPage(store, tabs=hub.tab())
        await c.boot()
        assert c.net.requests == []
        assert c.answers()[-1].getAttribute("data-state") == "streaming"
        # A closes mid-answer: its lock goes, and one of B and C resumes it, never both
        hub.close(a.tabs.who)
        for page in (b, c):
            page.net.play(answer_bytes("slow, and longer"), answer_id="ans-1")
        for _ in range(3):
            await b.settle()
            await c.settle()
        resumed = [r for p in (b, c) for r in p.net.requests]
        assert [r.get("reattach", ("",))[0] for r in resumed] == ["ans-1"], resumed
        texts = {p.answers()[-1].getAttribute("data-text") for p in (b, c)}
        assert texts == {"slow, and longer"}  # the resumer's text reached the other by save

    run(go())


def test_a_damaged_stored_chat_opens_with_what_is_readable_and_says_what_was_dropped() -> None:
    async def go() -> None:
        store = MemoryStore()
        a = ModelPage(store)
        await a.boot()
        await ask(a, "kept", "also kept")
        (cid,) = store.data["bodies"]
        doc = json.loads(store.data["bodies"][cid])
        doc["messages"][1]["speed"] = {"ttft_ms": 10**400}
        store.data["bodies"][cid] = json.dumps(doc)
        b = ModelPage(store)
        await b.boot()
        assert b.log_texts() == ["kept", "also kept"]
        notices = [n.textContent for n in b.app.log.querySelectorAll("[data-role=notice]")]
        assert any("speed.ttft_ms must be a number" in n for n in notices), notices

    run(go())
