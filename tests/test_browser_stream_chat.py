"""``stream_chat`` (``pysse.browser.stream``), the public call, in real Chromium against the demo
relay: an element of the bundled page's document outside its chat (the page's Pyodide runs
the Python). What an embedder gets: the text, the outcome, Stop (a handle and a JS
AbortSignal), resuming a cut, an HTTP error in words, each bad argument refused with a
message, and the worker's path (updates posted as data, applied by ``dom_writer.js``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pysse.render.markdown import render
from pysse.server import demo

pytestmark = pytest.mark.browser

SETUP = """
import json
import js
from pysse.browser import stream_chat, StreamChatError, ElementBusyError
def body(prompt):
    return {"model": "demo", "stream": True, "messages": [{"role": "user", "content": prompt}]}
def target(name):
    el = js.document.createElement("div")
    el.id = name
    js.document.body.appendChild(el)
    return el
PACE = {"X-Demo-Pace": "0.05"}
"""


def py(page: Any, code: str) -> Any:
    """Run ``code`` (Python, top-level await allowed) in the page; its last expression is a
    JSON string, returned decoded."""
    return json.loads(page.evaluate("code => pysseRuntime.runPythonAsync(code)", SETUP + code))


# (The page's main-thread mode: there, its Python is on the page, with the DOM.)


def test_streams_into_an_element_and_returns_the_result(make_page: Any) -> None:
    page = make_page(thread="main").open()
    got = py(
        page,
        """
texts, kinds = [], []
el = target("t1")
r = await stream_chat("/v1/chat/completions", body("/demo table"), into="#t1", headers=PACE,
                      on_text=texts.append, on_event=lambda e: kinds.append(type(e).__name__))
json.dumps({"text": r.text, "outcome": r.outcome, "joined": "".join(texts),
            "html": el.innerHTML, "kinds": sorted(set(kinds)), "busy": el.hasAttribute("aria-busy"),
            "usage": [r.usage.input_tokens, r.usage.output_tokens] if r.usage else None,
            "format": r.format})
""",
    )
    cited = py(
        page,
        """
c = await stream_chat("/v1/responses", {"model": "demo", "stream": True, "input": "/demo cite"},
                      into=target("t1c"))
json.dumps([[x.url, x.linkable] for x in c.citations])
""",
    )
    assert cited == [[c.url, c.linkable] for c in demo.CITATIONS]  # each once, in order
    assert [link for _, link in cited] == [True, True, True, False]
    assert got["outcome"] == "completed"
    assert got["text"].count("\n|") > 100 and got["joined"] == got["text"]
    assert got["html"] == render(got["text"])  # the final DOM is the one-shot render
    assert {"TextDelta", "Finish"} <= set(got["kinds"])
    assert got["busy"] is False and got["format"] == "openai-chat"


def test_an_element_is_written_as_the_page_writes_its_answers(make_page: Any) -> None:
    """stream_chat writes into an element with dom_writer.js, the page's own writer: while a
    long fence is open its lines are in blocks (the browser lays out the new lines, not the
    fence), and the final DOM is the one-shot render, once its highlighted blocks are in (a
    block a frame: ``pysseSwapsPending()``)."""
    page = make_page(thread="main").open()
    got = py(
        page,
        """
import asyncio
from pysse.browser import js_writer
el = target("code1")
call = stream_chat("/v1/chat/completions", body("/demo code"), into=el, headers=PACE)
blocks = 0
while not call.done:
    blocks = max(blocks, el.querySelectorAll(".codeblock.incomplete code > .lines").length)
    await asyncio.sleep(0.01)
r = await call
while js.pysseSwapsPending():  # (a long fence's highlighted blocks: one a frame, after the end)
    await asyncio.sleep(0.02)
json.dumps({"blocks": blocks, "text": r.text, "html": el.innerHTML,
            "js": js_writer.dom_writer_class() is not None})
""",
    )
    assert got["js"] is True  # this page's policy lets pysse load it
    assert got["blocks"] >= 2, got["blocks"]
    assert got["html"] == render(got["text"])


def test_stop_with_the_handle_and_with_an_abort_signal(make_page: Any) -> None:
    page = make_page(thread="main").open()
    got = py(
        page,
        """
import asyncio
call = stream_chat("/v1/messages", {"model": "demo", "max_tokens": 99, "stream": True,
                   "messages": [{"role": "user", "content": "/demo slow"}]}, into=target("a"),
                   format="anthropic")
while not call.text:
    await asyncio.sleep(0.05)
call.stop()
first = await call
ctl = js.AbortController.new()
second = stream_chat("/v1/chat/completions", body("/demo slow"), into=target("b"), signal=ctl.signal)
while not second.text:
    await asyncio.sleep(0.05)
ctl.abort()
r2 = await second
ctl2 = js.AbortController.new(); ctl2.abort()
r3 = await stream_chat("/v1/chat/completions", body("hello"), into=target("c"), signal=ctl2.signal)
json.dumps([[first.outcome, first.text], [r2.outcome, r2.text], [r3.outcome, r3.text]])
""",
    )
    (o1, t1), (o2, t2), (o3, t3) = got
    assert (o1, o2, o3) == ("aborted", "aborted", "aborted")
    assert t1 and t2 and t3 == ""


def test_a_cut_connection_resumes_and_an_http_error_is_explained(make_page: Any) -> None:
    page = make_page(thread="main").open()
    got = py(
        page,
        """
cut = await stream_chat("/v1/chat/completions", body("/demo cut"), into=target("cut"), headers=PACE)
whole = await stream_chat("/v1/chat/completions", body("/demo cut"), into=target("whole"),
                          headers={"X-Demo-Pace": "0"})
err = await stream_chat("/v1/chat/completions", body("/demo 401"), into=target("e"))
json.dumps({"cut": [cut.outcome, cut.resumes, cut.text], "whole": whole.text,
            "err": [err.outcome, err.detail, err.error.status if err.error else None]})
""",
    )
    assert got["cut"][0] == "completed" and got["cut"][1] >= 1
    assert got["cut"][2] == got["whole"]
    outcome, detail, status = got["err"]
    assert outcome == "error" and status == 401 and "401" in detail


def test_bad_arguments_are_refused_with_what_to_pass(make_page: Any) -> None:
    page = make_page(thread="main").open()
    got = py(
        page,
        """
def refused(**kw):
    args = {"url": "/v1/chat/completions", "body": body("hi"), **kw}
    try:
        stream_chat(args.pop("url"), args.pop("body"), **args)
    except ElementBusyError as exc:
        return "busy: " + str(exc)
    except StreamChatError as exc:
        return str(exc)
    return "accepted"
detached = js.document.createElement("div")
busy = target("busy")
first = stream_chat("/v1/chat/completions", body("/demo slow"), into=busy)
out = {
    "detached": refused(into=detached),
    "selector": refused(into="#nothing-here"),
    "scheme": refused(url="ftp://relay.example/relay", into=target("s")),
    "format": refused(format="openai", into=target("f")),
    "body": refused(body={"x": object()}, into=target("b")),
    "text": refused(body="not json", into=target("t")),
    "busy": refused(into=busy),
}
first.stop()
await first
json.dumps(out)
""",
    )
    assert "not in the document" in got["detached"]
    assert "no element in the document matches" in got["selector"]
    assert "http:// or https://" in got["scheme"]
    assert "openai-chat" in got["format"] and "is not one of" in got["format"]
    assert "not JSON-serialisable" in got["body"] and "pass a dict" in got["body"]
    assert "not JSON" in got["text"]
    assert got["busy"].startswith("busy: an answer is already streaming into this element")


def test_updates_posted_as_data_rebuild_the_same_dom(make_page: Any) -> None:
    """The worker's path: no element, each Update as plain data (``remote.update_to_js``),
    applied by dom_writer.js; it ends equal to the one-shot render."""
    page = make_page(thread="main").open()
    page.evaluate(
        "async () => { const m = await import('/dom_writer.js');"
        " const el = document.createElement('div'); el.id = 'remote';"
        " document.body.appendChild(el); window.__w = new m.DomWriter(el); window.__n = 0; }"
    )
    got = py(
        page,
        """
from pysse.browser.remote import update_to_js
def apply(update):
    js.__n += 1
    js.__w.apply(update_to_js(update))
r = await stream_chat("/v1/chat/completions", body("/demo math"), on_update=apply, headers=PACE)
json.dumps({"text": r.text, "html": js.document.querySelector("#remote").innerHTML, "n": js.__n})
""",
    )
    assert got["n"] > 1
    assert got["html"] == render(got["text"])


def test_a_firehose_ends_in_budgeted_slices_and_returns_after_the_final_one(
    make_page: Any,
) -> None:
    """The whole ~30 KB answer at once (no pacing): each update takes at most a frame's budget
    of work (counted by the renderer, never timed), the ones after the stream's end finish it
    in slices, exactly one is final, it is the last, and ``await`` returns only after it."""
    page = make_page(thread="main").open()
    got = py(
        page,
        """
from pysse.events import Finish
from pysse.render.budget import BUDGET, WEIGHTS
log = []
call = None
def seen(update):
    log.append({"final": update.final, "taken": call.md.taken, "ops": len(update.ops)})
def event(e):
    if isinstance(e, Finish):
        log.append("end")
el = target("fire")
call = stream_chat("/v1/chat/completions", body("/demo long"), into=el,
                   headers={"X-Demo-Pace": "0"}, on_update=seen, on_event=event)
r = await call
json.dumps({"log": log, "after": len(log), "text": r.text, "outcome": r.outcome,
            "html": el.innerHTML, "limit": BUDGET + max(WEIGHTS.values())})
""",
    )
    log, limit = got["log"], got["limit"]
    assert got["outcome"] == "completed" and len(got["text"]) > 20_000
    updates = [u for u in log if u != "end"]
    assert all(u["taken"] <= limit for u in updates), max(u["taken"] for u in updates)
    assert [u["final"] for u in updates].count(True) == 1 and updates[-1]["final"]
    after_end = log[log.index("end") + 1 :]
    assert len(after_end) >= 2  # the rest rendered a frame at a time, not in one task
    assert got["after"] == len(log)  # nothing rendered after await returned
    assert got["html"] == render(got["text"])
