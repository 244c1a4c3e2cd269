"""Faults stay where they happen (issue #40): an exception in one answer's render, one event's
handler or one spawned action ends that piece of work alone, reported in the console and
counted in the page's stats; the page's Python goes on, and only a fatal error of the runtime
is a death (``test_browser_worker.py`` kills it for real). Each fault is injected into the
page's Python through ``pysse.py``, as the issue measured it."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from conftest import py, settled, stored_answers, wait_stored

pytestmark = pytest.mark.browser

NOTICES = "() => [...document.querySelectorAll('[data-role=notice]')].map((n) => n.textContent)"

BREAK_RENDER = """from pysse.call.call import ChatCall
_render = ChatCall.render
def render(self):
    if "boom" in self.session.text:
        raise ValueError("injected: cannot draw a boom")
    _render(self)
ChatCall.render = render
True"""

STATES = "[t.state for t in app.answers.turns]"


def console_errors(p: Any) -> list[str]:
    """The page's and its worker's console errors, from now on."""
    found: list[str] = []
    p.page.on("console", lambda m: found.append(m.text) if m.type == "error" else None)
    return found


def faults(page: Any) -> int:
    return int(json.loads(page.evaluate("() => pysse.stats()"))["faults"])


def wait_py(page: Any, code: str, want: Any, timeout: float = 60) -> None:
    """Poll the page's Python until ``code``'s value is ``want``."""
    deadline = time.monotonic() + timeout
    while (got := py(page, code)) != want:
        assert time.monotonic() < deadline, f"{code}: {got!r}, never {want!r}"
        time.sleep(0.1)


def alive(page: Any) -> None:
    """The page's Python was never restarted: still ready, nothing said about stopping."""
    assert page.evaluate("() => document.body.dataset.ready") == "1"
    assert not [n for n in page.evaluate(NOTICES) if "stopped" in n]
    assert page.evaluate("() => pysse.view.closed") is None  # (the first view, still open)


def test_a_render_that_raises_ends_that_answer_alone(make_page: Any) -> None:
    """The issue's case: ``ChatCall.render`` raises for one answer. That answer ends as an
    error with its text and a sentence saying what happened, and is stored so; an answer
    streaming in another chat at the same time goes on to its end; the page's Python is not
    restarted and the console names the error. (Before: 'the page's Python stopped', every
    answer ended, the worker restarted.)"""
    p = make_page(settings={"headers": "X-Demo-Pace: 0.2"})
    errors = console_errors(p)
    page = p.open()
    assert py(page, BREAK_RENDER) is True
    p.send("/demo slow")
    page.wait_for_function(
        "() => (document.querySelector('[data-role=assistant] .settled') || {}).textContent?.length > 20"
    )
    page.click("[data-role=new-chat]")
    p.send("/demo echo a boom here")
    art = p.wait_done()
    assert art.get_attribute("data-state") == "error"
    text = art.get_attribute("data-text") or ""
    assert "a boom here".startswith(text) and "boom" in text  # what came before the fault
    status = art.query_selector(".status").inner_text()
    assert "could not show this answer" in status and "ValueError" in status
    assert "Copy still works" in status
    assert py(page, STATES) == ["streaming", "error"]  # the other chat's goes on
    alive(page)
    assert faults(page) == 1
    assert any("injected: cannot draw a boom" in e for e in errors), errors
    stored = wait_stored(page, lambda s: any(m.get("state") == "error" for m in stored_answers(s)))
    (kept,) = [m for m in stored_answers(stored) if m.get("state") == "error"]
    assert kept["text"] == text
    wait_py(page, f"{STATES}[0]", "completed")
    page.click("[data-role=chat-open] >> text=/demo slow")
    settled(page)
    first = page.wait_for_selector("[data-role=assistant][data-state=completed]")
    assert len(first.get_attribute("data-text") or "") > 1000
    alive(page)


def test_an_event_handler_that_raises_ends_that_handler_alone(make_page: Any) -> None:
    """A click handler that raises: the page's own handler of the same click still runs, the
    fault is counted and named in the console, and the page goes on."""
    p = make_page()
    errors = console_errors(p)
    page = p.open()
    py(
        page,
        """btn = app.doc.querySelector('[data-role=theme]')
def boom(event):
    raise RuntimeError("injected: a click handler")
btn.addEventListener('click', boom)
True""",
    )
    p.click("[data-role=theme]")
    assert page.evaluate("() => document.documentElement.dataset.theme") == "light"
    assert faults(page) == 1
    assert any("injected: a click handler" in e for e in errors), errors
    p.send("/demo echo still here")
    assert p.wait_done().get_attribute("data-text") == "still here"
    alive(page)


def test_a_spawned_action_that_raises_ends_that_action_alone(make_page: Any) -> None:
    p = make_page()
    errors = console_errors(p)
    page = p.open()
    py(
        page,
        """from pysse.app.platform import spawn
async def boom():
    raise RuntimeError("injected: an action")
spawn(boom())
True""",
    )
    wait_py(page, "import json\njson.loads(app.stats())['faults']", 1)
    assert any("injected: an action" in e for e in errors), errors
    p.send("/demo echo still here")
    assert p.wait_done().get_attribute("data-text") == "still here"
    alive(page)


def test_an_exception_out_of_the_message_handler_is_an_error_not_a_death(
    make_page: Any,
) -> None:
    """The second line: were ``host.receive`` itself to raise, the worker's script catches it
    and tells the page an error (counted, logged), not a death: no restart, and the page
    works again once the handler does."""
    p = make_page(thread="worker")
    errors = console_errors(p)
    page = p.open()
    py(
        page,
        """_receive = host.receive
def receive(message):
    host.receive = _receive
    raise RuntimeError("injected: the message handler")
host.receive = receive
True""",
    )
    page.raw.click("[data-role=theme]")  # (its frame message meets the broken handler)
    page.wait_for_function("() => pysse.view.stats.pythonErrors === 1")
    assert any("injected: the message handler" in e for e in errors), errors
    p.send("/demo echo still here")
    assert p.wait_done().get_attribute("data-text") == "still here"
    alive(page)
