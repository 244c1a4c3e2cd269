"""``stream_chat`` beyond the issue's bad-input list (tests/test_browser_stream_chat.py has
that): callbacks are the embedder's code, and one that raises is logged to the console and
never ends the answer, nor keeps ``await call`` from returning (``on_update`` raising on the
final render, called from the bridge's read loop, used to leave the call unresolved forever);
options of the wrong type are refused before anything is sent, with what to pass. Run in the
bundled page's Pyodide (one page for the module), against the demo relay."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Page
from pysse.render.markdown import render
from support import LiveServer

pytestmark = pytest.mark.browser

CODE = """
import asyncio, json, js
from pysse.browser import stream_chat

def boom(_):
    raise RuntimeError("the embedder's bug")

el = js.document.createElement("div")
js.document.body.appendChild(el)
body = {"model": "demo", "stream": True, "messages": [{"role": "user", "content": "hello"}]}
a = stream_chat("/v1/chat/completions", body, into=el, on_text=boom, on_event=boom)
b = stream_chat("/v1/chat/completions", body, on_update=boom)
ra, rb = await asyncio.wait_for(asyncio.gather(a, b), 60)
json.dumps([ra.outcome, ra.text, el.innerHTML, rb.outcome, rb.text])
"""


@pytest.fixture(scope="module")
def booted(browser: Any, server: LiveServer) -> Iterator[tuple[Any, list[str]]]:
    """The bundled page, booted with its Python on the main thread (with the DOM: stream_chat
    as an embedder's page runs it); the console's errors as they come."""
    p = Page(browser, server.url, thread="main")
    logged: list[str] = []
    p.page.on("console", lambda m: logged.append(m.text) if m.type == "error" else None)
    p.open()
    yield p.page, logged
    errors = list(p.errors)
    p.close()
    assert errors == []


def run(page: Any, code: str) -> Any:
    return json.loads(page.evaluate("code => pysseRuntime.runPythonAsync(code)", code))


def test_a_callback_that_raises_is_logged_and_the_answer_ends(
    booted: tuple[Any, list[str]],
) -> None:
    page, logged = booted
    got = run(page, CODE)
    outcome_a, text_a, html_a, outcome_b, text_b = got
    assert (outcome_a, outcome_b) == ("completed", "completed")
    assert text_a == text_b and html_a == render(text_a)
    raised = {m for m in logged if "the embedder's bug" in m}
    for hook in ("on_text", "on_event", "on_update"):
        want = f"pysse: stream_chat's {hook} callback boom raised RuntimeError("
        assert any(want in m for m in raised), (hook, raised)


REFUSED = """
import json, js
from pysse.browser import stream_chat, StreamChatError, Timeouts

def refused(**kw):
    try:
        stream_chat("/v1/chat/completions", {"messages": []}, **kw)
    except StreamChatError as exc:
        return str(exc)
    return "accepted"

json.dumps({
    "timeouts": refused(timeouts=30),
    "headers": refused(headers=[("X-Relay-Secret", "s")]),
    "on_text": refused(on_text="print"),
    "on_update": refused(on_update=42),
    "sent": len(js.performance.getEntriesByType("resource")),
})
"""


def test_options_of_the_wrong_type_are_refused_with_what_to_pass(
    booted: tuple[Any, list[str]],
) -> None:
    page, _ = booted
    before = page.evaluate("() => performance.getEntriesByType('resource').length")
    got = run(page, REFUSED)
    assert got["timeouts"].startswith("timeouts: pass Timeouts(first_byte=60, idle=30,")
    assert got["timeouts"].endswith("not 30")
    assert got["headers"].startswith("headers: pass a dict of header names to values")
    assert got["on_text"] == "on_text: pass a function (it is called with each one), not 'print'"
    assert got["on_update"].startswith("on_update: pass a function")
    assert got["sent"] == before  # nothing went out
