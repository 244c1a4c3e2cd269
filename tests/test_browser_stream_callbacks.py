"""``stream_chat``'s callbacks are the embedder's code: one that raises is logged to the
console and never ends the answer, nor keeps ``await call`` from returning. ``on_update``
raising on the final render (called from the bridge's read loop) used to leave the call
unresolved forever. Run in the bundled page's Pyodide, against the demo relay."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pysse.render.markdown import render

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


def test_a_callback_that_raises_is_logged_and_the_answer_ends(make_page: Any) -> None:
    p = make_page()
    logged: list[str] = []
    p.page.on("console", lambda m: logged.append(m.text) if m.type == "error" else None)
    page = p.open()
    got = json.loads(page.evaluate("code => pysseRuntime.runPythonAsync(code)", CODE))
    outcome_a, text_a, html_a, outcome_b, text_b = got
    assert (outcome_a, outcome_b) == ("completed", "completed")
    assert text_a == text_b and html_a == render(text_a)
    raised = {m for m in logged if "the embedder's bug" in m}
    for hook in ("on_text", "on_event", "on_update"):
        want = f"pysse: stream_chat's {hook} callback boom raised RuntimeError("
        assert any(want in m for m in raised), (hook, raised)
