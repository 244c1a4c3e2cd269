"""Streaming markdown in Chromium: the Turn applies each Update with appends only, so the DOM
nodes of settled rows and items are the very same objects from the frame they appear to the
end of the answer (issue 15), and a long code block is highlighted once when it closes."""

from __future__ import annotations

import json
import random
import time
from typing import Any

import pytest

from conftest import in_store, wait_until
from pysse.render import render
from pysse.server.demo import answer_for, split_deltas
from pysse.testing import Script, ScriptServer

pytestmark = pytest.mark.browser

LAST = "[...document.querySelectorAll('[data-role=assistant]')].at(-1)"


def normalized(page: Any, html: str) -> str:
    return str(
        page.evaluate(
            "(h) => { const d = document.createElement('div'); d.innerHTML = h; "
            "return d.innerHTML; }",
            html,
        )
    )


@pytest.mark.parametrize(("command", "sel"), [("/demo table", "tbody tr"), ("/demo list", "li")])
def test_settled_rows_are_never_replaced(make_page: Any, command: str, sel: str) -> None:
    p = make_page(settings={"headers": "X-Demo-Pace: 1"})
    page = p.open()
    # Any element removed from the answer while it streams is recorded.
    page.evaluate(
        """() => { window.__removed = 0;
          new MutationObserver((ms) => { for (const m of ms) for (const n of m.removedNodes)
            if (n.__pysseMark !== undefined) window.__removed++; })
          .observe(document.querySelector('[data-role=log]') || document.body,
                   {childList: true, subtree: true}); }"""
    )
    p.send(command)
    page.wait_for_function(
        f"() => {{ const m = {LAST}; "
        f"return m && m.querySelectorAll('.settled {sel}').length >= 80; }}",
        timeout=60_000,
    )
    marked = page.evaluate(
        f"""() => {{ const m = {LAST};
          const rows = [...m.querySelectorAll('.settled {sel}')].slice(0, 60);
          rows.forEach((r, i) => {{ r.__pysseMark = i; }});
          window.__rows = rows;
          return {{n: rows.length, streaming: m.dataset.state === 'streaming'}}; }}"""
    )
    assert marked == {"n": 60, "streaming": True}  # marked mid-stream
    msg = p.wait_done()
    assert msg.get_attribute("data-state") == "completed"
    res = page.evaluate(
        f"""() => {{ const m = {LAST};
          const rows = [...m.querySelectorAll('.settled {sel}')];
          return {{total: rows.length, removed: window.__removed,
                   same: window.__rows.every((r, i) => rows[i] === r && r.isConnected
                                                      && r.__pysseMark === i)}}; }}"""
    )
    assert res == {"total": 500, "removed": 0, "same": True}
    text = answer_for(command)
    assert msg.get_attribute("data-text") == text
    shown = msg.evaluate("(m) => m.querySelector('.settled').innerHTML")
    assert shown == normalized(page, render(text))


def test_long_code_block_is_highlighted_once_when_it_closes(
    make_page: Any, sse_server: ScriptServer
) -> None:
    # The demo's code answer, held before its closing fence until the open block has been
    # looked at (the demo streamed it in about 1 s: a busy page could be looked at too late).
    text = answer_for("/demo code")
    cut = text.rindex("```")
    head = split_deltas(text[:cut], random.Random(1), 1, 40)
    held = len(Script.answer(head, terminal=False).sent)
    script = Script.answer([*head, text[cut:]]).chunked("random", sizes=(200, 1400), seed=1)
    sse_server.play(script.stall(after_byte=held))
    p = make_page(settings={"relay": sse_server.url, "format": "openai-chat"})
    page = p.open()
    p.send("code please")
    page.wait_for_function(
        f"() => {{ const m = {LAST}; return m && m.querySelector('.codeblock.incomplete') "
        "&& m.querySelector('.codeblock code').textContent.split('\\n').length > 40; }",
        timeout=60_000,
    )
    assert page.evaluate(f"() => {LAST}.querySelector('.codeblock [class^=hl-]')") is None
    # Open, its lines are in blocks of at most 32 (the browser lays out the new lines, not the
    # whole fence), and read as text they are exactly the lines that came, in order.
    blocks = page.evaluate(
        f"""() => {{ const code = {LAST}.querySelector('.codeblock code');
          return {{text: code.innerText,
                   lines: [...code.children].map((b) => b.className === 'lines'
                                                 && b.textContent.split('\\n').length)}}; }}"""
    )
    assert all(blocks["lines"]) and max(blocks["lines"]) <= 32 and len(blocks["lines"]) >= 2
    body = text[text.index("\n", text.index("```")) + 1 : cut]
    assert body.startswith(blocks["text"].rstrip("\n")) and len(blocks["text"].splitlines()) > 40
    # Its highlighted form comes in blocks, one a frame (never the whole fence restyled and
    # laid out in one task): the frames in which highlighted blocks went in are counted.
    page.evaluate(SWAP_FRAMES)
    sse_server.last_request.release()
    msg = p.wait_done()
    assert msg.query_selector(".codeblock.incomplete") is None
    assert msg.query_selector(".codeblock .hl-k") is not None
    shown = msg.evaluate("(m) => m.querySelector('.settled').innerHTML")
    assert shown == normalized(page, render(text))
    frames = page.evaluate("() => window.__swapFrames")
    lines = len(body.split("\n"))
    assert len(frames) >= lines // 32 and max(frames.values()) == 1, frames


# Counts, per animation frame, the highlighted blocks of lines put into the page.
SWAP_FRAMES = """() => { window.__swapFrames = {};
  new MutationObserver((records) => { for (const r of records) for (const n of r.addedNodes) {
    if (n.nodeType === 1 && n.classList.contains('lines') && n.querySelector('[class^=hl-]')) {
      window.__swapFrames[window.__frames] = (window.__swapFrames[window.__frames] || 0) + 1; }
  } }).observe(document, { subtree: true, childList: true }); }"""


def test_an_answer_that_ends_inside_a_fence_ends_as_a_one_shot_render(
    make_page: Any, sse_server: ScriptServer
) -> None:
    # Its lines streamed in blocks (dom_writer.js); the fence never closes, so nothing replaces
    # them: they are joined back into the one text node a one-shot render has.
    text = answer_for("/demo code")
    text = text[: text.rindex("```")] + "tail of a last line"
    sse_server.play(Script.answer(split_deltas(text, random.Random(2), 1, 40)).paced(0.002))
    p = make_page(settings={"relay": sse_server.url, "format": "openai-chat"})
    page = p.open()
    p.send("code, cut")
    msg = p.wait_done()
    assert msg.query_selector(".codeblock.incomplete code .lines") is None
    shown = msg.evaluate("(m) => m.querySelector('.settled').innerHTML")
    assert shown == normalized(page, render(text))


def test_a_restored_answers_long_fence_goes_in_a_block_a_frame(
    make_page: Any, tmp_path: Any
) -> None:
    """An imported answer (rendered from its text) and, after a reload, the same answer from
    the HTML cache (one op): their long fence's highlighted lines go in a block a frame, as
    when it closed while streaming; the final HTML is the one-shot render's."""
    from pysse.chats.conversation import Conversation
    from pysse.chats.files import export_json

    text = "Here:\n\n" + answer_for("/demo code")
    conv = Conversation("cfence")
    user = conv.add_user("code please")
    conv.finish(conv.start_answer(user.id).id, text, "completed")
    path = tmp_path / "fence.json"
    path.write_text(json.dumps(json.loads(export_json(conv, {}))))
    p = make_page()
    page = p.open()
    wait_until(page, "(code) => pysse.py(code)", LEXER_HERE)  # (else it renders plain first)
    page.evaluate(SWAP_FRAMES)
    page.set_input_files("[data-role=import]", str(path))
    msg = p.wait_done()
    page.wait_for_function(
        "() => !document.querySelector('[data-pending]') && !pysseSwapsPending()"
    )
    assert msg.evaluate("(m) => m.querySelector('.settled').innerHTML") == normalized(
        page, render(text)
    )
    frames = page.evaluate("() => window.__swapFrames")
    assert len(frames) >= 300 // 32 and max(frames.values()) == 1, frames
    # after a reload, from the HTML cache (one op puts the answer's HTML in): the same
    deadline = time.monotonic() + 60  # the HTML cache's write lands (a task after the render)
    while len(in_store(page, "pysseStore.keys('html')")) < 1:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    p.page.add_init_script(SWAP_FRAMES.replace("() => {", "(() => {", 1) + ")()")
    p.reload()
    page.wait_for_function(
        "() => !document.querySelector('[data-pending]') && !pysseSwapsPending()"
    )
    assert json.loads(page.evaluate("pysse.stats()"))["restored"]["from_cache"] == 1
    msg = p.answers()[-1]
    assert msg.evaluate("(m) => m.querySelector('.settled').innerHTML") == normalized(
        page, render(text)
    )
    frames = page.evaluate("() => window.__swapFrames")
    assert len(frames) >= 300 // 32 and max(frames.values()) == 1, frames


LEXER_HERE = """from pysse.render import lazy
lazy.REGISTRY.request(("lexer", "python"))
not lazy.REGISTRY.pending(("lexer", "python"))"""
