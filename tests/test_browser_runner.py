"""Run for Python code blocks, in Chromium, as a user does it (docs/chat-page.md "Run Python"):
a real click, and Enter and Space on the focused button. The code runs in a disposable Pyodide
in an opaque-origin iframe (web/runner.html); these tests show that its output and traceback
come back as text, that Stop and the time limit end a run that never ends while the page goes
on answering, and that hostile code reaches nothing: not the page's DOM, not the site's
storage, not the relay or any other host, and no worker of its own. The page's Python runs in
its worker or on the main thread (``PYSSE_PAGE_THREAD=main``): the Run is the view's either way.
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.browser

RUN = "[data-role=assistant] .codeblock .run"
STATUS = "[data-role=assistant] .codeblock .run-status"
TEXT = "[data-role=assistant] .codeblock .run-text"


def answer_with(p: Any, code: str) -> Any:
    """An answer holding one Python block: the demo model echoes it."""
    p.send(f"/demo echo ```python\n{code}\n```")
    return p.wait_done()


def status_starts(page: Any, prefix: str, timeout: float = 120_000, index: int = -1) -> str:
    """The status line of a block's run (the last one's, by default) once it starts so."""
    page.wait_for_function(
        "([s, t, i]) => ([...document.querySelectorAll(s)].at(i)?.textContent || '').startsWith(t)",
        arg=[STATUS, prefix, index],
        timeout=timeout,
    )
    return str(
        page.evaluate(
            "([s, i]) => [...document.querySelectorAll(s)].at(i).textContent", [STATUS, index]
        )
    )


def output(page: Any) -> str:
    return str(page.evaluate("(s) => document.querySelector(s).textContent", TEXT))


def test_run_prints_and_shows_a_traceback_of_the_users_code(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    answer_with(p, 'print("hi from the sandbox")\nimport sys\nprint("err", file=sys.stderr)\n1/0')
    # Nothing of the runner before the first Run: no iframe, no file of it fetched.
    assert page.evaluate("() => document.querySelectorAll('iframe').length") == 0
    assert not [u for u in p.requests if "runner" in u]
    page.click(RUN)  # a real mouse click
    said = status_starts(page, "Failed after")
    assert said.endswith(" s.")
    got = output(page)
    assert got.startswith("hi from the sandbox\nerr\nTraceback (most recent call last):\n")
    assert 'File "<block>", line 4, in <module>\n    1/0' in got
    assert got.endswith("ZeroDivisionError: division by zero\n")
    assert "pysse_runner" not in got and "eval(" not in got  # the runner's frames are cut
    # stderr is marked as such; all of it is text (no element but the spans the host makes)
    stderr = page.evaluate(f"() => document.querySelector('{TEXT} .run-stderr').textContent")
    assert stderr.startswith("err\nTraceback")
    frame = page.evaluate(
        "() => { const f = document.querySelector('iframe.run-sandbox');"
        " return f && [f.getAttribute('sandbox'), f.contentDocument === null]; }"
    )
    assert frame == ["allow-scripts", True]  # opaque: the page cannot reach in, nor it out


def test_a_tap_runs_a_block_on_a_phone(make_page: Any) -> None:
    """On a touch phone (390x844), Run is a target a finger can hit (it was 41x19 px): scrolled
    into view and tapped (touch events, then the click they make), it runs, and the output is
    under it."""
    from conftest import PHONE, TOUCH, tap

    p = make_page(viewport=PHONE, **TOUCH)
    page = p.open()
    tap(page, "[data-role=prompt]")  # (Enter on a touch keyboard is a new line: tap Send)
    page.fill("[data-role=prompt]", '/demo echo ```python\nprint("tapped", 6 * 7)\n```')
    tap(page, "[data-role=send]")
    p.wait_done()
    page.locator(RUN).scroll_into_view_if_needed()
    box = page.locator(RUN).bounding_box()
    assert box and box["width"] >= 44 and box["height"] >= 44  # a thumb's target (style.css)
    tap(page, RUN)
    assert status_starts(page, "Done in").endswith(" s.")
    assert output(page) == "tapped 42\n"


def test_output_is_text_and_bounded(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    answer_with(p, "print('<img src=x onerror=alert(1)>')\nfor i in range(200000): print(i)")
    page.focus(RUN)
    page.keyboard.press("Enter")
    status_starts(page, "Done in")
    got = output(page)
    assert got.startswith("<img src=x onerror=alert(1)>\n0\n1\n")
    assert page.evaluate(f"() => document.querySelectorAll('{TEXT} img').length") == 0
    assert len(got) <= 101_000 and "[output cut: more than 100,000 characters]" in got


def test_stop_and_the_time_limit_end_a_loop_and_the_page_goes_on(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    answer_with(p, "while True:\n    pass")
    page.focus(RUN)
    page.keyboard.press("Enter")
    status_starts(page, "Running…")
    page.wait_for_timeout(1500)  # the loop runs
    frames = page.evaluate("() => window.__frames")
    page.wait_for_timeout(500)
    assert page.evaluate("() => window.__frames") > frames  # the page draws meanwhile
    assert page.text_content(RUN) == "Stop"
    page.keyboard.press(" ")  # Space on the same button: Stop
    status_starts(page, "Stopped: the runner restarts for the next run.", 10_000)
    assert page.evaluate("() => document.querySelectorAll('iframe').length") == 0
    assert page.text_content(RUN) == "Run"
    # The time limit (shortened for the test), then a run that ends, in a new sandbox.
    page.evaluate("() => { window.pysseRunLimitMs = 4000; }")
    page.click(RUN)
    status_starts(page, "Time limit (4 s): stopped; the runner restarts for the next run.")
    p.send("/demo echo ```python\nprint(6 * 7)\n```")
    p.wait_done()
    page.click(f"{RUN} >> nth=-1")
    status_starts(page, "Done in")
    assert (
        page.evaluate("() => [...document.querySelectorAll('.run-text')].at(-1).textContent")
        == "42\n"
    )
    # and the chat still answers
    p.send("/demo echo still here")
    assert p.wait_done().get_attribute("data-text") == "still here"


HOSTILE = """import js
from pyodide.http import pyfetch
print("document:", hasattr(js, "document"))
print("Worker:", getattr(js, "Worker", None), getattr(js, "SharedWorker", None))
for name in ("localStorage", "sessionStorage"):
    print(name + ":", hasattr(js, name))
try:
    js.indexedDB.open("pysse")
    print("indexedDB: opened")
except Exception as e:
    print("indexedDB: refused", type(e).__name__)
for url in ("RELAY/v1/chat/completions", "http://example.com/", "site.json"):
    try:
        await pyfetch(url)
        print("fetch: reached", url)
    except Exception as e:
        print("fetch: refused")
blocks = []  # a memory bomb: 128 MiB at a time, until the wasm heap can grow no more
while True:
    blocks.append(bytearray(2 ** 27))
"""


def test_hostile_code_reaches_nothing(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    relay = page.evaluate("() => location.origin")
    answer_with(p, HOSTILE.replace("RELAY", relay))
    page.click(RUN)
    status_starts(page, "Failed after")
    got = output(page).splitlines()
    assert got[:5] == [
        "document: False",
        "Worker: None None",
        "localStorage: False",
        "sessionStorage: False",
        got[4],
    ]
    assert got[4].startswith("indexedDB: refused"), got
    assert got[5:8] == ["fetch: refused"] * 3, got
    assert got[-1] == "MemoryError", got
    # The sandbox asked the page for nothing but the Pyodide files (the page's own requests).
    assert not [u for u in p.requests if "chat/completions" in u and u.count("/v1/") > 1]
    assert not [u for u in p.requests if "example.com" in u]


FLOOD = """import js
message = js.JSON.parse('{"t": "out", "id": 1, "stream": "stdout", "text": "x"}')
for i in range(100000):  # the sandbox's own messages, posted past the runner
    js.postMessage(message)
"""


def test_a_flood_of_messages_reaches_the_page_bounded(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    answer_with(p, FLOOD)
    page.click(RUN)  # the first run: its id is 1
    status_starts(page, "Done in")
    assert output(page) == "x" * 2000  # at most 2,000 messages a run pass the sandbox's page


def test_a_run_s_output_is_kept_with_the_answer_through_a_reload(make_page: Any) -> None:
    """The output is stored with the answer (chats/runs.py): after a reload it is under its
    block again, as text, and the next Run replaces it."""
    from conftest import stored_answers, wait_stored

    p = make_page()
    page = p.open()
    answer_with(p, 'print("<b>kept</b>", 6 * 7)')
    page.keyboard.press("Tab")  # (the keyboard too: focus the button, press Enter)
    page.focus(RUN)
    page.keyboard.press("Enter")
    said = status_starts(page, "Done in")
    assert output(page) == "<b>kept</b> 42\n"
    stored = wait_stored(page, lambda s: bool((stored_answers(s) or [{}])[0].get("runs")))
    assert stored_answers(stored)[0]["runs"] == [
        {"block": 0, "status": said, "text": "<b>kept</b> 42\n"}
    ]
    p.reload()
    page.wait_for_selector("[data-role=assistant] .codeblock .run-output")
    assert status_starts(page, "Done in") == said
    assert output(page) == "<b>kept</b> 42\n"
    assert page.evaluate("(s) => document.querySelector(s).querySelectorAll('b').length", TEXT) == 0
    page.evaluate(  # every status the next run shows (its start can be too quick to poll)
        "(s) => { window.__said = []; const el = document.querySelector(s);"
        " new MutationObserver(() => window.__said.push(el.textContent))"
        ".observe(el, {childList: true, characterData: true, subtree: true}); }",
        STATUS,
    )
    page.click(RUN)
    page.wait_for_function(
        "() => window.__said.length > 1 && window.__said.at(-1).startsWith('Done in')",
        timeout=120_000,
    )
    assert not page.evaluate("() => window.__said[0].startsWith('Done')")  # a new run
    assert page.evaluate("() => document.querySelectorAll('.run-output').length") == 1
    assert output(page) == "<b>kept</b> 42\n"
