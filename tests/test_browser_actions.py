"""Message actions in Chromium: regenerate any answer (versions ‹ n/m ›), edit a sent message
(a branch), Continue a cut-off answer (each format's own way, joined with no repeat and no
gap), Copy an answer or a code block (the label comes back). Every request body is checked:
exactly the conversation up to that point is sent."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import log_texts
from pysse.providers import CONTINUE_INSTRUCTION
from pysse.server.demo import RICH_ANSWER
from pysse.testing import Script

pytestmark = pytest.mark.browser


def record_bodies(page: Any) -> list[Any]:
    bodies: list[Any] = []
    page.on(
        "request",
        lambda r: bodies.append(json.loads(r.post_data or "{}")) if r.method == "POST" else None,
    )
    return bodies


def sent(body: Any) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in body["messages"]]


def wait_count(page: Any, n: int) -> None:
    page.wait_for_function(
        f"() => document.querySelectorAll('[data-role=log] article[data-id]').length == {n}"
    )


def test_regenerate_any_answer_keeps_versions_and_sends_only_what_came_before(
    make_page: Any,
) -> None:
    p = make_page()
    page = p.open()
    bodies = record_bodies(page)
    p.send("/demo echo one")
    p.wait_done()
    p.send("/demo echo two")
    p.wait_done()
    first = page.query_selector_all("[data-role=assistant]")[0]
    first.query_selector("[data-role=regenerate]").click()
    wait_count(page, 2)
    new = p.wait_done()
    assert sent(bodies[-1]) == [("user", "/demo echo one")]  # not the later turns
    assert log_texts(page) == ["/demo echo one", "one"]
    versions = new.query_selector("[data-role=versions]")
    assert versions.query_selector(".count").inner_text() == "2/2"
    assert versions.get_attribute("aria-label") == "version 2 of 2"
    new.query_selector("[data-role=version-prev]").click()
    wait_count(page, 4)  # the first version still has its later turns
    assert log_texts(page) == ["/demo echo one", "one", "/demo echo two", "two"]
    assert page.inner_text("[data-role=assistant] >> nth=0 >> [data-role=versions] .count") == "1/2"
    p.reload()  # versions survive a reload
    assert log_texts(page) == ["/demo echo one", "one", "/demo echo two", "two"]
    page.click("[data-role=assistant] >> nth=0 >> [data-role=version-next]")
    wait_count(page, 2)
    assert len(bodies) == 3


def test_edit_a_sent_message_starts_a_branch(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    bodies = record_bodies(page)
    p.send("/demo echo one")
    p.wait_done()
    p.send("/demo echo two")
    p.wait_done()
    p.send("/demo echo three")
    p.wait_done()
    second = page.query_selector_all("[data-role=user]")[1]
    second.query_selector("[data-role=edit]").click()
    page.fill("[data-role=edit-text]", "/demo echo TWO")
    page.click("[data-role=edit-send]")
    wait_count(page, 4)
    p.wait_done()
    assert sent(bodies[-1]) == [
        ("user", "/demo echo one"),
        ("assistant", "one"),
        ("user", "/demo echo TWO"),
    ]
    assert log_texts(page) == ["/demo echo one", "one", "/demo echo TWO", "TWO"]
    page.click("[data-role=user] >> nth=1 >> [data-role=version-prev]")
    wait_count(page, 6)
    assert log_texts(page)[2:] == ["/demo echo two", "two", "/demo echo three", "three"]
    # Escape cancels an edit and sends nothing
    page.click("[data-role=user] >> nth=0 >> [data-role=edit]")
    page.press("[data-role=edit-text]", "Escape")
    assert page.locator("[data-role=edit-text]").count() == 0
    assert len(bodies) == 4


@pytest.mark.parametrize("fmt", ["openai-chat", "anthropic", "gemini"])
def test_continue_joins_a_cut_answer_seamlessly(make_page: Any, fmt: str) -> None:
    p = make_page(settings={"format": fmt})
    page = p.open()
    bodies = record_bodies(page)
    p.send("/demo drop")
    msg = p.wait_done()
    partial = msg.get_attribute("data-text") or ""
    assert partial and RICH_ANSWER.startswith(partial) and partial != RICH_ANSWER
    msg.query_selector("[data-role=continue]").click()
    page.wait_for_function(
        "() => document.querySelector('[data-role=assistant]').dataset.state === 'streaming'"
    )
    done = p.wait_done()
    assert done.get_attribute("data-text") == RICH_ANSWER  # no repeat, no gap
    assert done.get_attribute("data-state") == "completed"
    assert page.locator("[data-role=assistant]").count() == 1  # in place
    body = bodies[-1]
    if fmt == "anthropic":  # a prefill: the partial answer is the last message
        assert sent(body) == [("user", "/demo drop"), ("assistant", partial.rstrip())]
    elif fmt == "gemini":
        texts = [(c["role"], c["parts"][0]["text"]) for c in body["contents"]]
        assert texts == [
            ("user", "/demo drop"),
            ("model", partial.rstrip()),
            ("user", CONTINUE_INSTRUCTION),
        ]
    else:
        assert sent(body) == [
            ("user", "/demo drop"),
            ("assistant", partial.rstrip()),
            ("user", CONTINUE_INSTRUCTION),
        ]
    p.reload()
    assert log_texts(page) == ["/demo drop", RICH_ANSWER]


def test_continue_drops_a_repeated_start(make_page: Any, sse_server: Any) -> None:
    sse_server.play(
        Script.answer("The quick brown fox jumps", terminal=False),
        Script.answer(" brown fox jumps over the lazy dog.").chunked(3),
    )
    p = make_page(settings={"relay": sse_server.url, "format": "openai-chat"})
    page = p.open()
    p.send("Tell me")
    msg = p.wait_done()
    assert msg.get_attribute("data-state") == "truncated"
    msg.query_selector("[data-role=continue]").click()
    page.wait_for_function(
        "() => document.querySelector('[data-role=assistant]').dataset.state !== 'truncated'"
    )
    done = p.wait_done()
    assert done.get_attribute("data-text") == "The quick brown fox jumps over the lazy dog."
    assert "The quick brown fox jumps over the lazy dog." in done.inner_text()
    assert sse_server.requests[-1].json()["messages"][-2:] == [
        {"role": "assistant", "content": "The quick brown fox jumps"},
        {"role": "user", "content": CONTINUE_INSTRUCTION},
    ]


def test_copy_an_answer_and_a_code_block_then_the_label_comes_back(make_page: Any) -> None:
    p = make_page(permissions=["clipboard-read", "clipboard-write"])
    page = p.open()
    p.send("hello")
    msg = p.wait_done()
    copy = msg.query_selector("[data-role=copy-answer]")
    copy.click()
    page.wait_for_function(
        "() => document.querySelector('[data-role=copy-answer]').textContent === 'Copied'"
    )
    assert page.evaluate("navigator.clipboard.readText()") == RICH_ANSWER
    page.wait_for_function(
        "() => document.querySelector('[data-role=copy-answer]').textContent === 'Copy'",
        timeout=10_000,
    )
    code = msg.query_selector(".codeblock .copy")
    assert msg.query_selector(".codeblock .code-lang").inner_text() == "python"
    code.click()
    page.wait_for_function(
        "() => document.querySelector('.codeblock .copy').textContent === 'Copied'"
    )
    assert page.evaluate("navigator.clipboard.readText()").startswith(
        "from pysse import ChatStream"
    )
    page.wait_for_function(
        "() => document.querySelector('.codeblock .copy').textContent === 'Copy'", timeout=10_000
    )
    # the button sits in the code's header, never over the code
    box = code.bounding_box()
    pre = msg.query_selector(".codeblock pre").bounding_box()
    assert box["y"] + box["height"] <= pre["y"] + 1
