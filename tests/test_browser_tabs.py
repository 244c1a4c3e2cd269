"""Two tabs of the page, one answer (issue #40, Chromium): an answer streaming in one tab shows
in the other as it is saved, and when the tab streaming it reloads mid-answer, exactly one tab
resumes it from the relay. (Lists, merges and deletes in three engines:
``tests/test_engines_tabs.py``.)"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import READY_MS
from pysse.server.demo import RICH_ANSWER

pytestmark = pytest.mark.browser

LAST = """() => { const a = [...document.querySelectorAll('[data-role=assistant]')].at(-1);
  return a ? { state: a.dataset.state, status: a.querySelector('.status').textContent,
    text: a.dataset.text || '' } : null; }"""


def twin(p: Any) -> Any:
    """The page again, in another tab of the same profile (one chat store)."""
    tab = p.ctx.new_page()
    tab.on("pageerror", lambda e: p.errors.append(f"tab 2: {e}"))
    tab.goto(p.url)
    tab.wait_for_selector("body[data-ready='1']", timeout=READY_MS)
    return tab


def test_an_answer_streaming_in_one_tab_shows_in_the_other_and_one_tab_resumes_it(
    make_page: Any,
) -> None:
    p = make_page(settings={"headers": "X-Demo-Pace: 1"})
    a = p.open()
    p.send("/demo echo hello")
    p.wait_done()
    b = twin(p)
    resumes: list[str] = []
    p.ctx.on("request", lambda r: resumes.append(r.url) if "answer=" in r.url else None)
    p.send("/demo slow")
    # B shows it streaming there, as A saves it (every 2 s), and never asks the relay
    b.wait_for_function(
        f"() => {{ const m = ({LAST})(); return m && m.state === 'streaming'"
        " && m.status.includes('another tab') && m.text.length > 30; }",
        timeout=30_000,
    )
    # A reloads mid-answer: its lock goes; one tab (B, or A once it is back) resumes it
    a.reload()
    a.wait_for_selector("body[data-ready='1']", timeout=READY_MS)
    for tab in (a, b):
        tab.wait_for_function(
            f"() => {{ const m = ({LAST})(); return m && m.state === 'completed'; }}",
            timeout=120_000,
        )
        assert tab.evaluate(LAST)["text"] == RICH_ANSWER
    assert len([u for u in resumes if "answer=" in u and "DELETE" not in u]) == 1, resumes
