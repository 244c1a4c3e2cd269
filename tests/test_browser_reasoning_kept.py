"""Reasoning and tool calls kept with the chat (issue #23), in Chromium: after a reload an
answer's reasoning is back folded on its "Thought for N s" line (rendered once opened, its
exact text apart from the answer's, never copied) and its tool calls folded; Anthropic, with a
thinking budget, gets the signed thinking back in the next request; an imported file's
reasoning and tool calls are shown the same way, and hostile ones (the XSS corpus) stay
inert text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import stored_answers, wait_stored
from pysse import ReasoningBlock, ToolCall
from pysse.chats.conversation import Conversation
from pysse.chats.files import export_json
from pysse.server.demo import THINK_ANSWER, THINK_REASONING, TOOL_CALLS, TOOLS_ANSWER, XSS_ANSWER
from pysse.testing import Script, ToolUse

pytestmark = pytest.mark.browser

SHOWN = """(i) => { const a = [...document.querySelectorAll('[data-role=assistant]')].at(i);
  const r = a.querySelector('[data-role=reasoning]');
  return {hidden: r.hidden, open: r.open, state: r.dataset.state || '', text: r.dataset.text,
          summary: r.querySelector('summary').textContent,
          html: r.querySelector('.reasoning-text').innerHTML,
          answer: a.dataset.text, content: a.querySelector('.content').textContent,
          calls: [...a.querySelectorAll('[data-role=tool-call]')].map(b => ({
            name: b.dataset.name, args: b.dataset.arguments, open: b.open,
            complete: b.dataset.complete, label: b.querySelector('summary').textContent,
            shown: b.querySelector('code').textContent}))}; }"""

ACTIVE = """() => document.querySelectorAll('[data-role=assistant] script,'
  + ' [data-role=assistant] [onerror], [data-role=assistant] [onclick],'
  + ' [data-role=assistant] a[href^=javascript], [data-role=assistant] iframe,'
  + ' [data-role=assistant] img[src^=http], [data-role=assistant] object').length"""


def open_reasoning(page: Any, index: int) -> None:
    page.locator("[data-role=assistant]").nth(index).locator(
        "[data-role=reasoning-summary]"
    ).click()
    page.wait_for_function(  # rendered in slices: all of it
        "(i) => [...document.querySelectorAll('[data-role=assistant]')].at(i)"
        ".querySelector('[data-role=reasoning]').dataset.rendered === '1'",
        arg=index,
    )


def test_reload_restores_reasoning_and_tool_calls_and_sends_thinking_back(
    make_page: Any,
) -> None:
    p = make_page(settings={"format": "anthropic", "thinking": 2048})
    p.page.add_init_script(
        "window.__copied = []; navigator.clipboard.writeText = (t) =>"
        " { window.__copied.push(t); return Promise.resolve(); };"
    )
    page = p.open()
    p.send("/demo think")
    p.wait_done()
    p.send("/demo tools")
    p.wait_done()
    live = [page.evaluate(SHOWN, 0), page.evaluate(SHOWN, 1)]
    stored = wait_stored(
        page,
        lambda s: (
            len(stored_answers(s)) == 2
            and all(m.get("state") == "completed" for m in stored_answers(s))
            and "tool_calls" in stored_answers(s)[1]
        ),
    )
    kept = stored_answers(stored)
    assert "".join(b["text"] for b in kept[0]["reasoning"]) == THINK_REASONING
    assert kept[0]["reasoning"][0]["signature"]  # the demo signs its thinking as Anthropic does
    assert THINK_REASONING not in kept[0]["text"]

    page = p.reload()
    page.wait_for_function("() => document.querySelectorAll('[data-role=assistant]').length == 2")
    think, tools = page.evaluate(SHOWN, 0), page.evaluate(SHOWN, 1)
    assert think["hidden"] is False and think["open"] is False and think["state"] == "done"
    assert think["summary"] == live[0]["summary"] and think["summary"].startswith("Thought for ")
    assert think["text"] == THINK_REASONING and think["answer"] == THINK_ANSWER
    assert think["html"] == ""  # rendered only once opened
    open_reasoning(page, 0)
    think = page.evaluate(SHOWN, 0)
    assert think["open"] is True and "<strong>Counting the units</strong>" in think["html"]
    assert "Counting the units" not in think["content"]  # never inside the answer itself
    assert tools["calls"] == live[1]["calls"]  # every block as it was, folded
    assert [c["name"] for c in tools["calls"]] == [t.name for t in TOOL_CALLS]
    assert [c["args"] for c in tools["calls"]] == [t.arguments for t in TOOL_CALLS]
    assert all(c["open"] is False and c["complete"] == "1" for c in tools["calls"])
    assert tools["answer"] == TOOLS_ANSWER
    page.locator("[data-role=assistant]").nth(0).locator("[data-role=copy-answer]").click()
    page.wait_for_function("() => window.__copied.length > 0")
    assert page.evaluate("() => window.__copied") == [THINK_ANSWER]

    bodies: list[Any] = []
    page.on("request", lambda r: bodies.append(r.post_data) if r.method == "POST" else None)
    p.send("/demo echo again")
    p.wait_done()
    sent = json.loads(bodies[-1])
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    first_answer = sent["messages"][1]
    block = kept[0]["reasoning"][0]
    assert first_answer["content"][0] == {
        "type": "thinking",
        "thinking": THINK_REASONING,
        "signature": block["signature"],
    }
    assert first_answer["content"][-1] == {"type": "text", "text": THINK_ANSWER}


def write_chat(tmp_path: Path, reasoning: tuple[ReasoningBlock, ...], calls: Any) -> Path:
    conv = Conversation("c-imported", "imported")
    user = conv.add_user("question")
    answer = conv.start_answer(user.id)
    conv.finish(
        answer.id,
        "The answer.",
        "completed",
        reasoning=reasoning,
        thought_ms=3200,
        tool_calls=calls,
    )
    path = tmp_path / "chat.json"
    path.write_text(export_json(conv, {}), encoding="utf-8")
    return path


def test_import_restores_reasoning_and_hostile_values_stay_inert(
    make_page: Any, tmp_path: Path
) -> None:
    hostile_name = '<img src=x onerror="window.__owned=1">'
    saved = write_chat(
        tmp_path,
        (ReasoningBlock(0, XSS_ANSWER, "sig"), ReasoningBlock(1, "", "", True, "opaque")),
        (ToolCall(0, "call_1", hostile_name, XSS_ANSWER), ToolCall(1, "call_2", "ok", '{"a": 1}')),
    )
    p = make_page()
    page = p.open()
    page.set_input_files("[data-role=import]", str(saved))
    page.wait_for_function("() => document.querySelectorAll('[data-role=assistant]').length == 1")
    got = page.evaluate(SHOWN, 0)
    assert got["text"] == XSS_ANSWER and got["answer"] == "The answer."
    assert got["summary"] == "Thought for 3 s (partly hidden by the provider)"
    assert got["open"] is False
    open_reasoning(page, 0)
    hostile, plain = page.evaluate(SHOWN, 0)["calls"]
    assert hostile["name"] == hostile_name and hostile["label"] == "Tool call: " + hostile_name
    assert hostile["shown"] == XSS_ANSWER and hostile["complete"] == "0"  # not JSON: as text
    assert plain["shown"] == '{\n  "a": 1\n}' and plain["open"] is False
    page.locator("[data-role=tool-call] summary").first.click()  # opened: still text
    assert page.evaluate(ACTIVE) == 0
    assert page.evaluate("() => window.__owned") is None
    foreign = [u for u in p.requests if not u.startswith(p.base)]
    assert foreign == []


def test_hidden_reasoning_alone_is_restored_as_hidden(make_page: Any, tmp_path: Path) -> None:
    saved = write_chat(tmp_path, (ReasoningBlock(0, "", "", True, "opaque"),), ())
    p = make_page()
    page = p.open()
    page.set_input_files("[data-role=import]", str(saved))
    page.wait_for_function("() => document.querySelectorAll('[data-role=assistant]').length == 1")
    got = page.evaluate(SHOWN, 0)
    assert got["summary"] == "Reasoning hidden by the provider" and got["text"] == ""
    assert got["calls"] == [] and got["hidden"] is False


def test_an_answer_saved_while_it_streams_keeps_its_reasoning_so_far(make_page: Any) -> None:
    """The in-flight save (every 2 s, for a reattach after a reload) carries the reasoning
    that arrived, not only the text."""
    p = make_page(settings={"format": "anthropic", "headers": "X-Demo-Pace: 1"})
    page = p.open()
    p.send("/demo think")
    stored = wait_stored(
        page,
        lambda s: any(
            m.get("state") == "streaming" and m.get("reasoning") for m in stored_answers(s)
        ),
    )
    kept = next(m for m in stored_answers(stored) if m.get("state") == "streaming")
    so_far = "".join(b["text"] for b in kept["reasoning"])
    assert so_far and THINK_REASONING.startswith(so_far)
    assert so_far not in kept["text"]
    page.click("[data-role=stop]")
    p.wait_done()


def test_a_continued_answer_shows_and_keeps_every_pieces_reasoning_and_tool_calls(
    make_page: Any, sse_server: Any
) -> None:
    """Continue joins the new piece to the cut answer: its reasoning streams on after the
    earlier piece's (shown folded from the start), the earlier tool call stays beside the
    new piece's, and what is kept (and restored after a reload) is both pieces', in order.
    Each piece's stream numbers its calls from 0: kept so, the chat could not be read back."""
    first_r, second_r = "I weigh the first part. ", "Then I weigh the rest."
    call = ToolUse("get_weather", {"city": "Lisbon"})
    later = ToolUse("get_time", {"zone": "WET"})
    sse_server.play(
        Script.answer("The quick brown fox", reasoning=first_r, tool_calls=[call], terminal=False),
        Script.answer(" jumps over the lazy dog.", reasoning=second_r, tool_calls=[later]),
    )
    p = make_page(settings={"relay": sse_server.url, "format": "openai-chat"})
    page = p.open()
    p.send("Tell me")
    msg = p.wait_done()
    assert msg.get_attribute("data-state") == "truncated"
    assert page.evaluate(SHOWN, 0)["text"] == first_r
    msg.query_selector("[data-role=continue]").click()
    page.wait_for_function(
        "() => document.querySelector('[data-role=assistant]').dataset.state !== 'truncated'"
    )
    p.wait_done()
    live = page.evaluate(SHOWN, 0)
    assert live["answer"] == "The quick brown fox jumps over the lazy dog."
    assert live["text"] == first_r + second_r  # every piece's, in order
    assert live["state"] == "done" and not live["open"]
    assert "first part" in live["html"] and "the rest" in live["html"]
    assert [c["name"] for c in live["calls"]] == ["get_weather", "get_time"]
    stored = wait_stored(
        page, lambda s: any(m.get("state") == "completed" for m in stored_answers(s))
    )
    kept = stored_answers(stored)[0]
    assert "".join(b["text"] for b in kept["reasoning"]) == first_r + second_r
    assert [c["name"] for c in kept["tool_calls"]] == ["get_weather", "get_time"]
    assert len({c["index"] for c in kept["tool_calls"]}) == 2
    assert first_r not in kept["text"]
    p.reload()
    back = page.evaluate(SHOWN, 0)
    assert back["text"] == first_r + second_r
    assert [c["name"] for c in back["calls"]] == ["get_weather", "get_time"]
