"""Run for Python code blocks in every engine (Chromium, Firefox, WebKit): a real click on Run
prints the block's output
under it, from a disposable Pyodide in an opaque-origin iframe; Stop ends a loop that never
ends (the sandbox is removed: the page has no interrupt) and the next Run starts afresh.
docs/chat-page.md "Run Python". The Run is the view's in either page mode (the page's
Python only keeps its output): the main-thread mode runs ``tests/test_browser_runner.py``'s
output and kept-output tests (build.py's MAIN_THREAD_MATRIX), in Chromium."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.browser

STATUS = "(i) => [...document.querySelectorAll('.run-status')].at(i)?.textContent || ''"


def ask(chat: Any, code: str) -> None:
    """An answer holding one Python block (the demo model echoes it)."""
    text = f"/demo echo ```python\n{code}\n```"
    chat.page.evaluate(
        "(t) => { const p = document.querySelector('[data-role=prompt]'); p.value = t;"
        " p.dispatchEvent(new Event('input', { bubbles: true })); }",
        text,
    )
    chat.page.press("[data-role=prompt]", "Enter")
    chat.wait_done()


def status_starts(chat: Any, prefix: str, index: int = -1, timeout: float = 120) -> str:
    try:
        return str(
            chat.page.wait_for(
                f"(i, t) => {{ const s = ({STATUS})(i); return s.startsWith(t) && s; }}",
                index,
                prefix,
                timeout=timeout,
            )
        )
    except TimeoutError as e:  # what the status said instead
        raise AssertionError(f"{e}; the status: {chat.page.evaluate(STATUS, index)!r}") from e


def test_run_prints_and_stop_ends_a_loop(open_chat: Any) -> None:
    chat = open_chat()
    ask(chat, "import sys\nprint('hello', sys.version_info[0])\nprint(2 ** 10)")
    assert chat.page.evaluate("() => document.querySelectorAll('iframe').length") == 0
    chat.page.click("[data-role=assistant] .codeblock .run")
    status_starts(chat, "Done in")
    got = chat.page.evaluate("() => document.querySelector('.run-text').textContent")
    assert got == "hello 3\n1024\n"

    ask(chat, "while True:\n    pass")
    run = "[data-role=assistant]:last-of-type .codeblock .run"
    chat.page.click(run)
    status_starts(chat, "Running…")
    chat.page.wait_for("() => new Promise((r) => setTimeout(() => r(true), 1000))")
    chat.page.click(run)  # Stop
    status_starts(chat, "Stopped: the runner restarts for the next run.", timeout=10)
    assert chat.page.evaluate("() => document.querySelectorAll('iframe').length") == 0

    chat.page.click("[data-role=assistant] .codeblock .run")  # the first block again
    status_starts(chat, "Done in", index=0)
    assert chat.page.evaluate("() => document.querySelector('.run-text').textContent") == got
