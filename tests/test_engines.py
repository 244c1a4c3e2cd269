"""The engine matrix (issue #27): the page in Chromium, Firefox and WebKit through one driver
interface (``tests/engines/``). Every test here runs in each engine; the Chromium-only suite
(``test_browser*.py``) goes deeper where only Chromium's tooling reaches (request routing,
CDP throttling, traces, many viewports). What runs where: ``docs/engines.md``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageChops

from engines.probe import AXE_PATH
from pysse import ChatStream
from pysse.server.demo import RICH_ANSWER, THINK_ANSWER, THINK_REASONING, TOOL_CALLS, XSS_ANSWER

pytestmark = pytest.mark.browser

FORMATS = ["openai-chat", "openai-responses", "anthropic", "gemini", "auto"]
FROZEN = "() => pysse.py('import gc; gc.get_freeze_count()')"


def test_boots_from_the_snapshot_with_its_heap_check_and_answers_in_every_format(
    open_chat: Any,
) -> None:
    chat = open_chat(path="/?boot=snapshot")
    # The snapshot was used: its fresh-heap check (web/boot.js undoDelta) passed in this engine.
    assert chat.page.evaluate("() => window.pysseBoot") == {
        "path": "snapshot",
        "snapshotError": None,
    }
    assert chat.page.evaluate(FROZEN) > 10_000  # what boot imported is out of the GC's sight
    for i, fmt in enumerate(FORMATS):
        chat.page.evaluate(
            "(f) => { const s = document.querySelector('[data-role=format]'); s.value = f;"
            " s.dispatchEvent(new Event('change', { bubbles: true })); }",
            fmt,
        )
        chat.send("hello")
        msg = chat.wait_done(i)
        assert (fmt, msg["state"], msg["text"]) == (fmt, "completed", RICH_ANSWER)
        turn = chat.stats()["turns"][i]
        assert turn["format"] == (fmt if fmt != "auto" else "openai-chat")


def test_boots_a_site_without_a_snapshot(open_chat: Any, plain_server: Any) -> None:
    chat = open_chat(base=plain_server.url)
    assert chat.page.evaluate("() => window.pysseBoot") == {"path": "plain", "snapshotError": None}
    assert chat.page.evaluate(FROZEN) > 10_000
    chat.send("/demo echo plain boot")
    assert chat.wait_done()["text"] == "plain boot"


def test_stop_keeps_the_partial_text_and_nothing_arrives_after(open_chat: Any) -> None:
    chat = open_chat({"headers": "X-Demo-Pace: 1"})
    chat.send("/demo slow")
    chat.page.wait_for(
        "() => document.querySelector('[data-role=assistant] .content').textContent.length > 20"
    )
    chat.page.click("[data-role=stop]")
    msg = chat.wait_done()
    assert msg["state"] == "aborted"
    text = msg["text"]
    assert len(text) > 5 and RICH_ANSWER.startswith(text)
    assert chat.page.evaluate("() => document.querySelector('[data-role=stop]').disabled")
    chat.send("/demo echo after stop")  # the page goes on
    assert chat.wait_done()["text"] == "after stop"
    assert chat.message(0)["text"] == text


def test_a_drop_ends_truncated_after_asking_the_relay(open_chat: Any) -> None:
    # The demo's upstream ends without [DONE]: the body itself ends cleanly, in every engine.
    # The page asks the relay for more (an early clean end may be a cut: issue #27), the
    # relay has nothing, and the answer is truncated with exactly the text that arrived.
    chat = open_chat()
    chat.send("/demo drop")
    msg = chat.wait_done()
    assert msg["state"] == "truncated"
    assert "the connection closed before data: [DONE]" in msg["status"]
    assert msg["resumes"] == 1  # the one resume that found the answer ended there
    cs = ChatStream()
    cs.feed(chat.raw())
    cs.close()
    assert msg["text"] == cs.text and RICH_ANSWER.startswith(msg["text"]) != (msg["text"] == "")
    assert msg["text"] != RICH_ANSWER


def test_demo_cut_resumes_to_the_same_text_as_uncut(open_chat: Any) -> None:
    # The relay closes the page's connection without the chunked terminator: Chromium's read
    # rejects, WebKit's ends cleanly (done: true). Both must resume.
    chat = open_chat({"headers": "X-Demo-Pace: 1"})
    # "Reconnecting" lasts one backoff (~250 ms): recorded as it happens, not polled for (a
    # poll every 0.1 s plus a driver round trip could miss it, and then wait for ever).
    chat.page.evaluate(
        """() => { window.__reconnecting = [];
        new MutationObserver((ms) => ms.forEach((m) =>
            window.__reconnecting.push(m.target.dataset.reconnecting || '')))
          .observe(document.querySelector('[data-role=log]'),
            { attributes: true, subtree: true, attributeFilter: ['data-reconnecting'] }); }"""
    )
    chat.send("/demo cut")
    msg = chat.wait_done()
    assert "1" in chat.page.evaluate("() => window.__reconnecting")  # it said so meanwhile
    assert (msg["state"], msg["resumes"]) == ("completed", 1)
    assert msg["text"] == RICH_ANSWER


def test_a_reload_mid_answer_reattaches_and_completes(open_chat: Any) -> None:
    chat = open_chat({"headers": "X-Demo-Pace: 0.4"})
    chat.send("/demo slow")
    answer_id = chat.page.wait_for(
        "() => { const m = document.querySelector('[data-role=assistant]');"
        " return m && m.dataset.answerId && m.querySelector('.content').textContent.length > 30"
        " && m.dataset.answerId; }"
    )
    chat.page.wait_for(SAVED_IN_FLIGHT, answer_id)
    chat.reload()
    msg = chat.wait_done(timeout=120)
    assert msg["answerId"] == answer_id
    assert (msg["state"], msg["text"]) == ("completed", RICH_ANSWER)


# True once IndexedDB holds the answer in flight with its id (what a reload reattaches from).
SAVED_IN_FLIGHT = """async (id) => {
  const db = await new Promise((ok, no) => {
    const r = indexedDB.open("pysse"); r.onsuccess = () => ok(r.result); r.onerror = no; });
  try {
    const bodies = await new Promise((ok, no) => {
      const r = db.transaction("bodies").objectStore("bodies").getAll();
      r.onsuccess = () => ok(r.result); r.onerror = no; });
    return bodies.some((b) => JSON.stringify(b).includes(id));
  } finally { db.close(); }
}"""


# The last answer's reasoning disclosure and tool-call blocks, as shown.
SHOWN_EXTRAS = """() => { const a = [...document.querySelectorAll('[data-role=assistant]')].at(-1);
  const r = a.querySelector('[data-role=reasoning]');
  return {reasoning: r.dataset.text, open: r.open, summary: r.querySelector('summary').textContent,
    tools: [...a.querySelectorAll('[data-role=tool-call]')].map((b) =>
      [b.dataset.name, b.dataset.arguments, b.dataset.complete])}; }"""

# The message the search opened, and the text the CSS highlight marks in it (every engine
# here has CSS.highlights: Chromium, Firefox ESR, WebKitGTK).
SEARCH_HIT = """() => { const el = document.querySelector('[data-search-hit]');
  const h = CSS.highlights.get('pysse-search');
  return el && h && {text: el.dataset.text, marked: [...h].map((r) => r.toString())}; }"""


def test_reasoning_tool_calls_and_search_across_chats(open_chat: Any) -> None:
    """Issue #23 in this engine: the reasoning folds into its summary apart from the answer,
    tool calls show their exact arguments, and a search finds the answer in another chat,
    opens it and marks the term (reasoning, which holds it too, is not searched)."""
    chat = open_chat()
    chat.send("/demo think")
    msg = chat.wait_done()
    assert (msg["state"], msg["text"]) == ("completed", THINK_ANSWER)
    shown = chat.page.evaluate(SHOWN_EXTRAS)
    assert shown["reasoning"] == THINK_REASONING and shown["open"] is False
    assert shown["summary"].startswith("Thought for ")
    chat.send("/demo tools")
    chat.wait_done()
    shown = chat.page.evaluate(SHOWN_EXTRAS)
    assert shown["tools"] == [[t.name, t.arguments, "1"] for t in TOOL_CALLS]
    chat.page.click("[data-role=new-chat]")
    chat.send("/demo echo a chat without the word")
    chat.wait_done()
    assert "sevens" in THINK_ANSWER and "sevens" in THINK_REASONING
    chat.page.type("[data-role=search]", "SEVENS")
    chat.page.wait_for(
        "() => document.querySelector('[data-role=search-results]').dataset.term === 'SEVENS'"
    )
    count = chat.page.evaluate(
        "() => document.querySelector('[data-role=search-count]').textContent"
    )
    assert count == "1 chat"
    chat.page.click("[data-role=search-result]")
    hit = chat.page.wait_for(SEARCH_HIT)  # marked once the message is scrolled to and shown
    assert hit == {"text": THINK_ANSWER, "marked": ["sevens"]}


def test_math_renders_as_mathml(open_chat: Any) -> None:
    chat = open_chat()
    chat.send("/demo math")
    assert chat.wait_done()["state"] == "completed"
    found = chat.page.evaluate(
        "() => { const m = document.querySelector('[data-role=assistant]');"
        " return { math: m.querySelectorAll('math').length,"
        " block: m.querySelectorAll('math[display=block]').length,"
        " tasks: m.querySelectorAll('input[type=checkbox]').length }; }"
    )
    assert found["math"] >= 3 and found["block"] >= 1 and found["tasks"] >= 1, found


def test_hostile_markdown_runs_and_loads_nothing(open_chat: Any) -> None:
    chat = open_chat()
    chat.page.evaluate(
        "() => { window.__loads = []; new PerformanceObserver((l) => { for (const e of"
        " l.getEntries()) window.__loads.push(e.name); }).observe({ type: 'resource' }); }"
    )
    chat.send("/demo xss")
    assert chat.wait_done()["text"] == XSS_ANSWER
    found = chat.page.evaluate(
        "() => { const m = document.querySelector('[data-role=assistant]');"
        " return { pwned: window.__pwned ?? null, bad: m.querySelectorAll('script, iframe, img').length,"
        " hrefs: [...m.querySelectorAll('a')].map((a) => a.getAttribute('href')),"
        " loads: window.__loads }; }"
    )
    assert found["pwned"] is None and found["bad"] == 0
    assert all(re.match(r"^https?:", h or "") for h in found["hrefs"]), found["hrefs"]
    assert [u for u in found["loads"] if not u.startswith(chat.base)] == []


def test_a_deeply_nested_payload_is_an_error_and_the_page_goes_on(open_chat: Any) -> None:
    chat = open_chat()
    chat.send("/demo deep")
    msg = chat.wait_done()
    assert msg["state"] == "error" and "nested more than 128 levels deep" in msg["status"]
    assert msg["text"] and RICH_ANSWER.startswith(msg["text"])
    chat.send("/demo echo still alive")
    assert chat.wait_done()["text"] == "still alive"


def test_a_long_table_settles_row_by_row(open_chat: Any) -> None:
    chat = open_chat({"headers": "X-Demo-Pace: 0.2"})
    chat.send("/demo table")
    msg = chat.wait_done(timeout=180)
    assert msg["state"] == "completed"
    rows = chat.page.evaluate(
        "() => document.querySelectorAll('[data-role=assistant] table tbody tr').length"
    )
    assert rows == 500
    # One render per frame at most, however fast the rows came.
    assert 1 <= msg["renders"] <= chat.page.evaluate("() => window.__frames") + 1


def test_the_inspector_shows_chunks_events_and_timing(open_chat: Any) -> None:
    chat = open_chat({"headers": "X-Demo-Pace: 1"})
    chat.send("/demo echo Hello, inspector — 東京 🙂")
    chat.wait_done()
    turn = chat.stats()["turns"][0]
    chat.page.click("[data-role=assistant] [data-role=inspect]")
    chat.page.wait_for("() => !document.querySelector('[data-role=inspector]').hidden")
    rows = chat.page.evaluate(
        "() => document.querySelectorAll('[data-role=insp-chunks] tbody tr').length"
    )
    assert rows == turn["chunks"] >= 2
    chat.page.click("[data-tab=events]")
    events = chat.page.wait_for(
        "() => [...document.querySelectorAll('[data-role=insp-events] tbody tr')]"
        ".map((r) => r.textContent)"
    )
    assert len(events) == turn["sse_events"] and "[DONE]" in events[-1]
    chat.page.press("[data-tab=events]", "Escape")
    chat.page.wait_for("() => document.querySelector('[data-role=inspector]').hidden")


AXE_RUN = """async (src) => {
  if (!window.axe) await new Promise((ok, no) => {
    const s = document.createElement('script'); s.src = src; s.onload = ok; s.onerror = no;
    document.head.append(s); });
  const r = await axe.run(document, { resultTypes: ['violations'] });
  return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
}"""


def test_no_serious_axe_violations(open_chat: Any) -> None:
    chat = open_chat()
    found = {"empty": chat.page.evaluate(AXE_RUN, AXE_PATH)}
    chat.send("hello")
    chat.wait_done()
    chat.send("/demo 401")
    chat.wait_done()
    found["answers"] = chat.page.evaluate(AXE_RUN, AXE_PATH)
    chat.page.click("[data-role=assistant] [data-role=inspect]")
    chat.page.wait_for("() => !document.querySelector('[data-role=inspector]').hidden")
    found["inspector"] = chat.page.evaluate(AXE_RUN, AXE_PATH)
    assert {k: v for k, v in found.items() if v} == {}


MIDDLE = """() => { const l = document.querySelector('[data-role=log]'), r = l.getBoundingClientRect();
  const el = document.elementFromPoint(r.left + r.width / 2, r.top + l.clientHeight / 2);
  window.__middle = el; return el.getBoundingClientRect().top; }"""


@pytest.mark.parametrize("anchoring", ["engine", "page"])
def test_a_reader_scrolled_up_keeps_their_place(open_chat: Any, anchoring: str) -> None:
    # WebKit has no CSS scroll anchoring (overflow-anchor): there the page holds the view
    # itself. "page" turns the engine's anchoring off everywhere and the page's on, so the
    # page's own hold is proven in every engine; in WebKit both runs are the page's.
    chat = open_chat({"headers": "X-Demo-Pace: 40"}, width=800, height=500)
    native = chat.page.evaluate("() => CSS.supports('overflow-anchor', 'auto')")
    assert native == (chat.engine != "webkit")  # the engine difference itself
    if anchoring == "page":
        chat.page.evaluate(
            "() => { document.querySelector('[data-role=log]').style.overflowAnchor = 'none';"
            " pysse.view.hold.native = false; }"
        )
    chat.send("/demo long")
    chat.page.wait_for(
        "() => { const l = document.querySelector('[data-role=log]');"
        " return l.scrollHeight > l.clientHeight * 3; }"
    )
    # The reader scrolls 400 px up (a wheel gesture, then the scroll it makes).
    chat.page.evaluate(
        "() => { const l = document.querySelector('[data-role=log]');"
        " l.dispatchEvent(new WheelEvent('wheel', { deltaY: -400, bubbles: true }));"
        " l.scrollTop = l.scrollTop - 400; }"
    )
    chat.page.wait_for("() => !document.querySelector('[data-role=jump]').hidden")
    top = chat.page.evaluate(MIDDLE)
    renders = chat.message()["renders"]
    # Content above the view changes height (as a table re-flowing or an image loading
    # there does), then the answer goes on rendering.
    chat.page.evaluate(
        "() => { document.querySelector('[data-role=log] .msg.user').style.paddingTop = '120px'; }"
    )
    chat.page.wait_for(
        "(n) => Number(document.querySelector('[data-role=assistant]').dataset.renders) > n + 2",
        renders,
    )
    moved = chat.page.evaluate("() => window.__middle.getBoundingClientRect().top") - top
    assert abs(moved) <= 1, f"{chat.engine}: the text the reader was on moved {moved:+.1f} px"
    assert chat.message()["state"] == "streaming"  # (the answer was still growing meanwhile)
    if anchoring == "page" or chat.engine == "webkit":
        assert chat.page.evaluate("() => pysse.view.hold.corrections") >= 1
    chat.page.click("[data-role=stop]")


def test_an_open_fences_blocks_of_lines_lay_out_and_read_as_its_text(open_chat: Any) -> None:
    # dom_writer.js puts an open fence's lines in blocks of 32 (display: block, each block's
    # last line feed left to its end) so that the browser lays out the new lines only. With
    # the page's own CSS and without any (an embedder's page: examples/worker), in this
    # engine, that must look and read exactly as the plain text: batches of lines of every
    # size, blank and blank-looking lines where blocks meet.
    chat = open_chat()
    shown = chat.page.evaluate(
        """async () => {
          const { DomWriter } = await import('./dom_writer.js');
          const esc = (t) => t.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
          const lines = Array.from({length: 90}, (_, i) =>
            (i % 7 === 3 ? '' : i % 11 === 5 ? '   ' : `line ${i} <x> & "y"`) + '\\n');
          const msg = () => {
            const m = document.createElement('div');
            m.className = 'msg assistant';
            m.innerHTML = '<div class="content"></div>';
            document.body.append(m);
            return m;
          };
          const open = '<div class="codeblock incomplete"><div class="code-head"></div>'
            + '<pre tabindex="0"><code></code></pre></div>';
          const plain = msg();
          plain.firstChild.innerHTML = open.replace('<code>', '<code>' + esc(lines.join('')) + 'partial');
          const streamed = msg();
          const writer = new DomWriter(streamed.firstChild);
          writer.apply({ops: [[0, open, true, false]], tails: ['', '']});
          for (let i = 0, n = 1; i < lines.length; i += n, n = (n * 5) % 13 + 1) {
            writer.apply({ops: [[1, esc(lines.slice(i, i + n).join('')), false, false]],
                          tails: ['', 'par']});
          }
          writer.apply({ops: [], tails: ['', 'partial']});
          const of = (m) => [m.querySelector('pre').getBoundingClientRect().height,
                             m.querySelector('code').innerText, m.querySelectorAll('.lines').length];
          const out = [of(plain), of(streamed)];
          // an embedder's page has none of the page's CSS: the blocks must not need it
          const sheets = [...document.styleSheets];
          for (const sheet of sheets) sheet.disabled = true;
          out.push(of(plain), of(streamed));
          for (const sheet of sheets) sheet.disabled = false;
          plain.remove(); streamed.remove();
          return out;
        }"""
    )
    (plain_height, plain_text, _), (streamed_height, streamed_text, blocks) = shown[:2]
    assert blocks >= 3 and plain_height > 500
    assert (streamed_height, streamed_text) == (plain_height, plain_text)
    (bare_height, bare_text, _), (bare_streamed_height, bare_streamed_text, _) = shown[2:]
    assert bare_text == plain_text and bare_height > 500  # (the sheets were off)
    assert (bare_streamed_height, bare_streamed_text) == (bare_height, bare_text)


def test_contained_list_items_and_table_cells_look_as_without_containment(
    open_chat: Any, tmp_path: Path
) -> None:
    # style.css keeps each tight list item's layout and paint to itself (its clip widened past
    # the marker where the engine can) and draws a table's borders as separate ones: both only
    # for speed. In this engine, with the page's own CSS, the answer must look exactly as it
    # does with plain collapsed borders and no containment: every marker, number, checkbox
    # and border where it was.
    chat = open_chat(width=700, height=500)
    html = (
        "<ul><li>plain item <strong>one</strong></li><li>item two<ul><li>nested</li></ul></li></ul>"
        "<ol start='998'><li>numbered</li><li>numbered <code>two</code></li><li>three</li></ol>"
        "<ul class='contains-task-list'><li class='task-list-item'>"
        "<input class='task-list-item-checkbox' type='checkbox' disabled checked> done</li></ul>"
        "<table><thead><tr><th>a</th><th>b</th></tr></thead>"
        "<tbody><tr><td>1</td><td>two</td></tr><tr><td>3</td><td>four</td></tr></tbody></table>"
    )
    chat.page.evaluate(
        """(html) => {
          document.activeElement?.blur();
          const m = document.createElement('div');
          m.className = 'msg assistant';
          m.innerHTML = '<div class="content"><div class="settled"></div></div>';
          m.querySelector('.settled').innerHTML = html;
          document.body.replaceChildren(m);
        }""",
        html,
    )
    plain = """() => document.head.insertAdjacentHTML('beforeend', `<style>
      .msg .settled li:not(:has(> p)) { contain: none !important; overflow-clip-margin: 0 !important; }
      .msg .content table { border-collapse: collapse !important; }
      .msg .content th, .msg .content td { border: 1px solid var(--line) !important; }
    </style>`)"""
    shots = []
    for step in ("contained", "again", "plain"):
        if step == "plain":
            chat.page.evaluate(plain)
        chat.page.evaluate(
            "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
        )
        chat.page.screenshot(str(tmp_path / f"{step}.png"))
        shots.append(Image.open(tmp_path / f"{step}.png").convert("L"))
    assert ImageChops.difference(shots[0], shots[1]).getbbox() is None  # the page is still
    # Text may be antialiased a little differently (seen: up to 61 of 255 in Chromium, 41 in
    # WebKit); a marker, a number, a checkbox or a border missing or moved is ~200.
    worst = ImageChops.difference(shots[0], shots[2]).getextrema()[1]
    assert worst < 110, f"{chat.engine}: the containment changed how the answer looks ({worst})"
