"""The chat page's logic in CPython, against a model view (``tests/model_page.py``): a
conversation, a reload, search, the message actions, settings, files, a rescued answer. Every
batch of ops is applied to a second model of the page and checked against Python's."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from typing import Any

import pytest
from model_page import RELAY, MemoryStore, ModelPage, ScriptNet

from pysse.app.settings import SETTINGS_KEY
from pysse.render.markdown import MarkdownPolicy, make_markdown, render
from pysse.server.app import DEMO_PATHS
from pysse.server.demo import RICH_ANSWER
from pysse.testing import Script


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(coro)


def answer_bytes(text: str, **kw: Any) -> bytes:
    return Script.answer(text, "openai-chat", **kw).body


def one_shot(text: str) -> str:
    return render(text, make_markdown(MarkdownPolicy()))


def test_a_conversation_streams_renders_and_is_stored() -> None:
    async def go() -> None:
        page = ModelPage()
        await page.boot()
        assert page.doc.body.dataset.ready == "1"
        page.net.play(answer_bytes(RICH_ANSWER), chunk=37)
        page.send("hello")
        await page.settle()
        (art,) = page.answers()
        assert art.getAttribute("data-state") == "completed"
        assert art.getAttribute("data-text") == RICH_ANSWER
        assert page.answer_html(art) == one_shot(RICH_ANSWER)  # what the view shows
        assert page.view.texts[art.handle] == RICH_ANSWER  # the view's copy (Copy, rescue)
        assert page.log_texts() == ["hello", RICH_ANSWER]
        (request,) = page.net.requests
        assert request["url"] == RELAY
        assert request["body"]["messages"][-1] == {"role": "user", "content": "hello"}
        assert ["follow"] in page.view.scrolls
        (body,) = page.store.data["bodies"].values()
        stored = json.loads(body)
        assert [m["text"] for m in stored["messages"]] == ["hello", RICH_ANSWER]

    run(go())


async def two_answered(store: MemoryStore) -> ModelPage:
    """A page on ``store`` that asked two questions, both answered."""
    first = ModelPage(store)
    await first.boot()
    for text in ("one **1**", "two *2*"):
        first.net.play(answer_bytes(text))
        first.send(f"q {text}")
        await first.settle()
    return first


def test_a_reload_shows_the_chat_again_and_it_goes_on() -> None:
    async def go() -> None:
        store = MemoryStore()
        await two_answered(store)
        again = ModelPage(store)
        await again.boot()
        arts = again.answers()
        assert [a.getAttribute("data-text") for a in arts] == ["one **1**", "two *2*"]
        for art in arts:  # restored from storage, rendered by the restorer
            assert art.getAttribute("data-pending") is None
            assert again.answer_html(art) == one_shot(art.getAttribute("data-text") or "")
        assert again.log_texts() == ["q one **1**", "one **1**", "q two *2*", "two *2*"]
        again.net.play(answer_bytes("three"))
        again.send("q three")
        await again.settle()
        (request,) = again.net.requests  # the whole conversation went out
        assert [m["content"] for m in request["body"]["messages"]] == [
            "q one **1**", "one **1**", "q two *2*", "two *2*", "q three",
        ]  # fmt: skip

    run(go())


FORM = '<p>two</p><form action="https://evil.test/"><input name="pw"></form>'


def test_cached_html_the_renderer_never_emits_is_rendered_again() -> None:
    """The cached HTML's key is a hash anyone who can write the store can recompute: HTML
    read back holding a tag the renderer never emits (here a form posting elsewhere) is
    dropped, the answer rendered again from its text and cached again; HTML the renderer
    made is still used as is. (Before: put in the page as it was.)"""

    async def go() -> None:
        store = MemoryStore()
        first = await two_answered(store)
        (two,) = [k for k in store.data["html"] if k.split("/")[1] == first.answers()[1].dataset.id]
        store.data["html"][two] = FORM
        again = ModelPage(store)
        await again.boot()
        arts = again.answers()
        assert [again.answer_html(a) for a in arts] == [one_shot("one **1**"), one_shot("two *2*")]
        restored = json.loads(again.app.stats())["restored"]
        assert (restored["from_cache"], restored["rejected"]) == (1, 1)
        assert "form" not in " ".join(store.data["html"].values())  # cached again, rendered

    run(go())


def test_regenerate_makes_a_version_and_the_arrows_switch_between_them() -> None:
    async def go() -> None:
        page = ModelPage()
        await page.boot()
        page.net.play(answer_bytes("first"))
        page.send("q")
        await page.settle()
        page.net.play(answer_bytes("second"))
        page.click("[data-role=regenerate]", page.answers()[0])
        await page.settle()
        (art,) = page.answers()
        assert art.getAttribute("data-text") == "second"
        count = page.q("[data-role=versions] .count", art)
        assert count.textContent == "2/2" or "2" in count.textContent
        page.click("[data-role=version-prev]", art)
        await page.settle()
        assert page.answers()[0].getAttribute("data-text") == "first"
        assert ["hold"] in page.view.scrolls and ["unhold"] in page.view.scrolls

    run(go())


def test_edit_and_resend_branches_the_conversation() -> None:
    async def go() -> None:
        page = ModelPage()
        await page.boot()
        page.net.play(answer_bytes("a1"))
        page.send("question")
        await page.settle()
        user = page.app.log.querySelector("[data-role=user]")
        assert user is not None
        page.click("[data-role=edit]", user)
        await page.settle()
        page.type_into("[data-role=edit-text]", "better question")
        page.net.play(answer_bytes("a2"))
        page.click("[data-role=edit-send]", user)
        await page.settle()
        assert page.log_texts() == ["better question", "a2"]
        assert page.net.requests[-1]["body"]["messages"][-1]["content"] == "better question"

    run(go())


def test_a_cut_answer_is_continued_in_place() -> None:
    async def go() -> None:
        page = ModelPage()
        await page.boot()
        full = answer_bytes("The beginning and the end.")
        page.net.play(full[: len(full) // 2])  # no terminal signal: truncated
        page.send("tell me")
        await page.settle()
        (art,) = page.answers()
        assert art.getAttribute("data-state") == "truncated"
        partial = art.getAttribute("data-text") or ""
        page.net.play(answer_bytes(" REST"))
        page.click("[data-role=continue]", art)
        await page.settle()
        (art,) = page.answers()
        joined = art.getAttribute("data-text") or ""  # (joined at the seam: call.continuation)
        assert joined.startswith(partial.rstrip()) and joined.endswith("REST")
        assert art.getAttribute("data-state") == "completed"
        assert page.view.texts[art.handle] == joined  # the view's copy, the same text

    run(go())


def test_search_finds_a_chat_and_opens_it_at_the_message_with_the_term_marked() -> None:
    async def go() -> None:
        store = MemoryStore()
        first = ModelPage(store)
        await first.boot()
        for i, word in enumerate(("apples", "pears", "plums")):
            first.click("[data-role=new-chat]")
            first.net.play(answer_bytes(f"We talk about {word} here ({i})."))
            first.send(f"chat {i}")
            await first.settle()
        page = ModelPage(store)
        await page.boot()
        page.fire(page.q("[data-role=search]"), "focus")
        page.type_into("[data-role=search]", "pears")
        await page.settle()
        results = page.q("[data-role=search-results]")
        assert not results.hidden and results.getAttribute("data-term") == "pears"
        (hit,) = results.querySelectorAll("[data-role=search-result]")
        assert "chat 1" in hit.textContent
        page.click(hit)
        await page.settle()
        assert page.log_texts() == ["chat 1", "We talk about pears here (1)."]
        (art,) = page.app.log.querySelectorAll("[data-search-hit]")
        assert ["center", art.handle] in page.view.scrolls
        ((marked, (i, lo, j, hi)),) = page.view.marks
        assert marked == art.handle and hi - lo == len("pears") and i == j

    run(go())


def test_deleting_a_chat_asks_first() -> None:
    async def go() -> None:
        store = MemoryStore()
        page = ModelPage(store, confirm=False)
        await page.boot()
        page.net.play(answer_bytes("kept"))
        page.send("keep me")
        await page.settle()
        page.click("[data-role=chat-delete]")
        await page.settle()
        assert len(store.data["bodies"]) == 1  # refused: still there
        page.confirm = True
        page.click("[data-role=chat-delete]")
        await page.settle()
        assert store.data["bodies"] == {} and page.answers() == []
        assert page.q("[data-role=chat-list] .empty").textContent == "No saved chats yet."

    run(go())


def test_settings_are_saved_through_the_view_and_the_theme_applies() -> None:
    async def go() -> None:
        page = ModelPage()
        await page.boot()
        page.type_into("[data-setting=model]", "my-model")
        page.fire(page.q("[data-setting=model]"), "change", value="my-model")
        page.click("[data-role=theme]")
        await page.settle()
        saved = json.loads(page.view.stored[SETTINGS_KEY])
        assert saved["model"] == "my-model" and saved["theme"] == "light"
        assert page.view.doc.documentElement.getAttribute("data-theme") == "light"

    run(go())


def test_export_offers_the_chat_as_files() -> None:
    async def go() -> None:
        page = ModelPage()
        await page.boot()
        page.net.play(answer_bytes("an **answer**"))
        page.send("a question")
        await page.settle()
        page.click("[data-role=export-md]")
        page.click("[data-role=export-json]")
        await page.settle()
        (md_name, md, md_mime), (json_name, data, json_mime) = page.view.downloads
        assert md_name.endswith(".md") and "an **answer**" in md and md_mime == "text/markdown"
        assert json_name.endswith(".json") and json_mime == "application/json"
        assert [m["text"] for m in json.loads(data)["messages"]] == ["a question", "an **answer**"]
        page.click("[data-role=export-html]")
        for _ in range(3):  # (its styles: a call the view answers)
            await page.settle()
        html_name, html_page, html_mime = page.view.downloads[-1]
        assert html_name.endswith(".html") and html_mime.startswith("text/html")
        assert "an <strong>answer</strong>" in html_page and ".msg { color: black }" in html_page

    run(go())


def test_an_answer_a_dead_worker_was_streaming_keeps_the_text_it_showed() -> None:
    async def go() -> None:
        store = MemoryStore()
        page = ModelPage(store)
        await page.boot()
        page.net.play(answer_bytes("on")[:60], end=False)  # the worker "dies" while it streams
        page.send("hello")
        await page.settle()
        (art,) = page.answers()
        conv = page.app.conv
        page.app.answers.save_in_flight(page.app.answers.turns[0])
        await page.settle()
        again = ModelPage(store)
        await again.app.boot([], [(art.getAttribute("data-id") or "", "on screen")], "why")
        await again.settle()
        (art,) = again.answers()
        assert art.getAttribute("data-state") == "error"
        assert art.getAttribute("data-text") == "on screen"
        assert conv.id == again.app.conv.id
        notices = again.app.log.querySelectorAll("[data-role=notice]")
        assert [n.textContent for n in notices] == ["why"]

    run(go())


def test_the_model_view_catches_an_op_the_view_would_apply_elsewhere() -> None:
    """The harness's own check can fail: an element moved in Python only is found."""

    async def go() -> None:
        page = ModelPage()
        await page.boot()
        el = page.doc.createElement("p")
        page.app.log.childNodes.append(el)  # (behind the ops' back)
        el.parent = page.app.log
        try:
            page.deliver()
        except AssertionError as exc:
            return str(exc)
        return ""

    assert "children" in run(go())


def test_a_net_that_never_answers_leaves_the_answer_streaming() -> None:
    """(The scripted network is honest: no bytes, no end.)"""
    net = ScriptNet()
    assert net.queue == []


def test_storage_that_fails_is_said_once_and_the_page_works_in_memory() -> None:
    """A store that refuses every write (a full disk): one notice, in words, and the chat
    goes on in memory (the same code path in a worker and on the main thread)."""

    async def go() -> None:
        store = MemoryStore()
        page = ModelPage(store)
        await page.boot()
        store.fail = "QuotaExceededError"
        page.net.play(answer_bytes("kept in memory"))
        page.send("hello")
        await page.settle()
        notices = [n.textContent for n in page.app.log.querySelectorAll("[data-role=notice]")]
        assert len(notices) == 1 and "keeps working" in notices[0]
        assert page.log_texts() == ["hello", "kept in memory"]

    run(go())


def test_the_next_request_is_kept_for_a_message_sent_while_the_next_visit_starts() -> None:
    """The template the page keeps (``web/app.js`` fills it with a message typed while the
    next visit starts, and fetches at once) is, filled, exactly the body Python then sends
    for that message: so the early request is adopted, not sent twice."""

    async def go() -> None:
        from pysse.app.answers import MARKER, NEXT_KEY

        page = ModelPage()
        await page.boot()
        page.net.play(answer_bytes("first answer"))
        page.send("first question")
        await page.settle()
        template = json.loads(page.view.stored[NEXT_KEY])
        assert template["chat"] == page.app.conv.id and template["url"] == RELAY
        text = 'then "this" — é ✓\n😀'  # (as the composer sends it: trimmed)
        escaped = json.dumps(MARKER)[1:-1]
        filled = template["body"].replace(escaped, json.dumps(text)[1:-1])
        page.net.play(answer_bytes("second"))
        page.send(text)
        await page.settle()
        assert page.net.requests[-1]["body"] == json.loads(filled)
        assert json.dumps(page.net.requests[-1]["body"]) == filled  # byte for byte

    run(go())


def test_the_kept_template_says_which_relay_it_was_made_for() -> None:
    """``web/app.js`` uses a kept template only while the saved relay and site.json's still
    say what it was made for; it had nothing to compare (issue #40, part 4)."""

    async def go() -> None:
        from pysse.app.answers import NEXT_KEY

        page = ModelPage(settings={"relay": " https://mine.test/v1/chat/completions "})
        await page.boot()
        page.net.play(answer_bytes("first answer"))
        page.send("first question")
        await page.settle()
        template = json.loads(page.view.stored[NEXT_KEY])
        assert template["made_for"] == {
            "relay": "https://mine.test/v1/chat/completions",
            "site": RELAY,
        }

    run(go())


def test_a_history_holding_the_marker_keeps_no_template() -> None:
    """The marker twice in the body (a message that holds its text) would put the next text
    in twice: no template then (it was kept: the marker only had to occur somewhere)."""

    async def go() -> None:
        from pysse.app.answers import MARKER, NEXT_KEY

        page = ModelPage()
        await page.boot()
        page.net.play(answer_bytes("first answer"))
        page.send(f"a message that holds {MARKER} itself")
        await page.settle()
        assert page.view.stored[NEXT_KEY] == ""

    run(go())


FIRST_VISIT_SITES = [
    {"demo": DEMO_PATHS},  # build.py serve: the demo relay at the page's origin
    {"demo": DEMO_PATHS, "format": "anthropic"},
    {"relay": "/relay", "format": "gemini", "demo": DEMO_PATHS},  # serve --upstream
    {"relay": "https://relay.example/v1/chat", "format": "openai-responses"},  # a deploy
]


@pytest.mark.parametrize("site", FIRST_VISIT_SITES)
def test_a_first_visit_template_is_what_a_fresh_page_sends(site: dict[str, Any]) -> None:
    """site.json's template (``first_visit``: build.py writes it, web/app.js fills it for a
    message typed during a first visit's boot) is, filled, exactly the request a fresh page
    with the default settings sends for that message: URL, headers and body byte for byte."""
    from pysse.app.answers import NEXT_KEY
    from pysse.app.next_request import ORIGIN_MARKER, first_visit

    first = first_visit(site)
    assert first is not None
    made_for = first.pop("made_for")
    assert made_for == {"relay": site.get("relay", ""), "format": site.get("format", "")}
    first["url"] = first["url"].replace(ORIGIN_MARKER, "http://page.test")

    async def go() -> None:
        page = ModelPage(site=site)
        await page.boot()
        kept = json.loads(page.view.stored[NEXT_KEY])  # what the page itself keeps
        assert {k: v for k, v in kept.items() if k not in ("chat", "made_for")} == first
        assert kept["made_for"] == {"relay": "", "site": site.get("relay", "")}
        text = 'a "first" question — é ✓\n😀'
        page.net.play(answer_bytes("the answer"))
        page.send(text)
        await page.settle()
        sent = page.net.requests[-1]
        assert sent["url"] == first["url"] and sent["headers"] == first["headers"]
        assert json.dumps(sent["body"]) == first["body"].replace(
            first["marker"], json.dumps(text)[1:-1]
        )

    run(go())


@pytest.mark.parametrize(
    ("site", "why"),
    [
        ({}, "no relay: the page shows how to set one up"),
        ({"relay": "/relay"}, "format auto: the page asks the relay which it speaks first"),
        ({"relay": "javascript:alert(1)", "format": "openai-chat"}, "not an http(s) URL"),
    ],
)
def test_a_site_a_fresh_page_cannot_send_to_at_once_has_no_first_visit_template(
    site: dict[str, Any], why: str
) -> None:
    from pysse.app.next_request import first_visit

    assert first_visit(site) is None, why
