"""Reasoning and tool calls in the page (issue #23), in Chromium, every format: the reasoning is
a disclosure open while the model thinks and one summary line ("Thought for N s") once the
answer starts, its exact text apart from the answer's (never in ``data-text``, Copy or what is
sent back); each tool call a read-only block with its name and pretty JSON arguments,
collapsed once complete; hostile markdown inside the reasoning stays inert."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pysse.server.demo import THINK_ANSWER, THINK_REASONING, TOOL_CALLS, TOOLS_ANSWER, XSS_ANSWER
from pysse.testing import Script

pytestmark = pytest.mark.browser

FORMATS = ["openai-chat", "openai-responses", "anthropic", "gemini"]

REASONING = """() => { const a = [...document.querySelectorAll('[data-role=assistant]')].at(-1);
  const r = a.querySelector('[data-role=reasoning]');
  return {hidden: r.hidden, open: r.open, state: r.dataset.state || '', text: r.dataset.text,
          summary: r.querySelector('summary').textContent,
          html: r.querySelector('.reasoning-text').innerHTML,
          answer: a.dataset.text, content: a.querySelector('.content').textContent}; }"""


@pytest.mark.parametrize("fmt", FORMATS)
def test_reasoning_opens_while_thinking_and_folds_into_one_line(make_page: Any, fmt: str) -> None:
    p = make_page(settings={"format": fmt, "headers": "X-Demo-Pace: 1"})
    page = p.open()
    p.send("/demo think")
    # Read in the same poll that saw the reasoning shown: read after it, the answer's text
    # could have started meanwhile on a slow machine (the summary then says "Thought for").
    during = page.wait_for_function(
        "() => { const r = document.querySelector('[data-role=assistant] [data-role=reasoning]');"
        " return r && !r.hidden && r.open && r.querySelector('.reasoning-text').textContent"
        f" && ({REASONING})(); }}",
        timeout=30_000,
    ).json_value()
    assert during["state"] == "thinking" and during["summary"].startswith("Thinking…")
    assert during["content"] == ""  # only reasoning so far: the answer itself is empty
    p.wait_done()
    done = page.evaluate(REASONING)
    assert done["hidden"] is False and done["open"] is False and done["state"] == "done"
    assert done["summary"].startswith("Thought for ")
    assert done["text"] == THINK_REASONING
    assert done["answer"] == THINK_ANSWER  # reasoning is never part of the answer's text
    assert "Counting the units" not in done["content"]
    assert "<strong>Counting the units</strong>" in done["html"]  # rendered as markdown


def test_reasoning_is_never_copied_or_sent_back(make_page: Any) -> None:
    p = make_page(settings={"format": "openai-chat", "headers": "X-Demo-Pace: 0.05"})
    p.page.add_init_script(  # what Copy writes, recorded (headless has no clipboard to read)
        "window.__copied = []; navigator.clipboard.writeText = (t) =>"
        " { window.__copied.push(t); return Promise.resolve(); };"
    )
    page = p.open()
    p.send("/demo think")
    msg = p.wait_done()
    msg.query_selector("[data-role=copy-answer]").click()
    page.wait_for_function("() => window.__copied.length > 0")
    assert page.evaluate("() => window.__copied") == [THINK_ANSWER]
    bodies: list[Any] = []
    page.on("request", lambda r: bodies.append(r.post_data) if r.method == "POST" else None)
    msg.query_selector("[data-role=regenerate]").click()
    p.wait_done()
    sent = json.loads(bodies[-1])
    assert all("Counting the units" not in json.dumps(m) for m in sent["messages"])


def test_tool_calls_show_name_and_arguments_then_fold(make_page: Any) -> None:
    p = make_page(settings={"format": "anthropic", "headers": "X-Demo-Pace: 0.05"})
    page = p.open()
    p.send("/demo tools")
    msg = p.wait_done()
    calls = page.evaluate(
        "() => [...document.querySelectorAll('[data-role=assistant]')].at(-1)"
        ".querySelectorAll('[data-role=tool-call]').length ? [...[...document.querySelectorAll("
        "'[data-role=assistant]')].at(-1).querySelectorAll('[data-role=tool-call]')].map(b =>"
        " ({name: b.dataset.name, args: b.dataset.arguments, open: b.open,"
        " shown: b.querySelector('code').textContent, complete: b.dataset.complete})) : []"
    )
    assert [c["name"] for c in calls] == [t.name for t in TOOL_CALLS]
    for call, tool in zip(calls, TOOL_CALLS, strict=True):
        assert call["args"] == tool.arguments  # the exact JSON text, as it streamed
        assert call["shown"] == json.dumps(json.loads(tool.arguments), indent=2, ensure_ascii=False)
        assert call["open"] is False and call["complete"] == "1"
    assert msg.get_attribute("data-text") == TOOLS_ANSWER


# Records each StreamingMarkdown.finish() (everything in one call, no frame budget) and
# the length of the text it finished, from Python inside the page.
COUNT_FINISH = """() => pysse.py(`
import pysse.render.streaming as s
FINISHED = []
_finish = s.StreamingMarkdown.finish
def _counted(self):
    FINISHED.append(len(self.text))
    return _finish(self)
s.StreamingMarkdown.finish = _counted
`)"""


def test_a_long_reasoning_is_finished_in_frames_like_the_answer(
    make_page: Any, sse_server: Any
) -> None:
    """The last of a long reasoning, arriving at once at the end, is rendered a frame's
    budget at a time after the stream ends, as the answer is: finished in one call, 60 KB
    of reasoning markdown took one long task when the answer ended."""
    long = ("**Step.** Weigh *this* against `that`, then [see](https://e.example). " * 900)[:60_000]
    sse_server.play(Script.answer("Fine.", "anthropic", reasoning=[long]))
    p = make_page(settings={"relay": sse_server.url, "format": "anthropic"})
    page = p.open()
    page.evaluate(COUNT_FINISH)
    p.send("hello")
    p.wait_done()
    assert page.evaluate(REASONING)["text"] == long
    assert page.evaluate("() => pysse.py('FINISHED')") == []


def test_hostile_reasoning_stays_inert(make_page: Any, sse_server: Any) -> None:
    """The demo's XSS corpus as the model's reasoning: rendered like an answer, nothing active,
    no request to a host the user did not choose."""
    sse_server.play(Script.answer("Fine.", "anthropic", reasoning=[XSS_ANSWER]).chunked(7))
    p = make_page(settings={"relay": sse_server.url, "format": "anthropic"})
    page = p.open()
    p.send("hello")
    p.wait_done()
    got = page.evaluate(REASONING)
    assert got["text"] == XSS_ANSWER
    active = page.evaluate(
        "() => document.querySelectorAll('[data-role=reasoning] script, [data-role=reasoning]"
        " [onerror], [data-role=reasoning] [onclick], [data-role=reasoning] a[href^=javascript],"
        " [data-role=reasoning] iframe, [data-role=reasoning] img[src^=http]').length"
    )
    assert active == 0
    foreign = [u for u in p.requests if not u.startswith((p.base, sse_server.url))]
    assert foreign == []
