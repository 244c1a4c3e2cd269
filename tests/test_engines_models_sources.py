"""The model picker and an answer's sources in every engine (issue #43), with the page's
Python in its worker and on the main thread: the picker fills itself from the demo relay's
``GET /v1/models``; a model chosen there (the engines' native menus cannot be driven, so the
test sets the ``<select>`` as a choice does and fires ``change``) is the one the answer's
footer names; ``/demo cite`` shows its three http(s) sources under the answer and their
numbered marks after the cited words, never the ``javascript:`` one; after a reload the
chat keeps its choice and the marks are drawn again."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.browser

PICKER = "[data-role=model-picker]"

CHOOSE = """(label) => { const s = document.querySelector('[data-role=model-picker]');
  const o = [...s.options].find((x) => x.textContent === label);
  if (!o) return false;
  s.value = o.value; s.dispatchEvent(new Event('change', { bubbles: true })); return true; }"""

SEEN = """() => { const a = [...document.querySelectorAll('[data-role=assistant]')].at(-1);
  const m = a && a.querySelector('[data-role=model]');
  const s = document.querySelector('[data-role=model-picker]');
  return a && {
    model: m && !m.hidden ? m.textContent : null,
    marks: [...a.querySelectorAll('.settled .cite-mark a')].map((l) => [l.textContent, l.getAttribute('href')]),
    sources: [...a.querySelectorAll('[data-role=sources] ol > li a')].map((l) => l.getAttribute('href')),
    js: document.querySelectorAll('a[href^="javascript"]').length,
    chosen: s.options[s.selectedIndex].textContent }; }"""

# The open chat's last stored answer, completed with its sources (what a reload shows). The
# test reloads once it is stored, as a person would not know to wait. (Only the open chat: a
# WebKit session shares one store between its windows, cleared per test, and a window of an
# earlier test may still write to it as it closes.)
STORED = """() => new Promise((resolve, reject) => {
  const open = indexedDB.open("pysse");
  open.onsuccess = () => { const t = open.result.transaction(["meta", "bodies"]);
    t.objectStore("meta").get("current").onsuccess = (e) => {
      t.objectStore("bodies").get(e.target.result || "").onsuccess = (b) => { open.result.close();
        const body = b.target.result;
        const a = body ? JSON.parse(body).messages.filter((m) => m.role === "assistant").at(-1) : null;
        resolve(!!a && a.state === "completed" && (a.citations || []).length === 3); }; }; };
  open.onerror = () => reject(open.error); })"""

WANT_LINKS = [
    "https://example.org/sse",
    "https://docs.example.com/chat?lang=en",
    "http://example.net/reconnect",
]


@pytest.mark.parametrize("path", ["/", "/?thread=main"])
def test_a_chosen_model_and_its_sources(open_chat: Any, path: str) -> None:
    chat = open_chat(path=path)
    chat.page.wait_for(
        f"() => [...document.querySelectorAll('{PICKER} option')]"
        ".some((o) => o.textContent === 'demo-openai-responses')",
        timeout=60,
    )
    assert chat.page.evaluate(CHOOSE, "demo-openai-responses")
    chat.send("/demo cite")
    chat.wait_done()
    got = chat.page.wait_for(f"() => {{ const s = ({SEEN})(); return s.marks.length === 3 && s; }}")
    assert got["model"] == "demo-openai-responses"  # the demo answers as the model asked for
    assert got["sources"] == WANT_LINKS and got["js"] == 0
    assert got["marks"] == [[str(i + 1), url] for i, url in enumerate(WANT_LINKS)]
    chat.page.wait_for(STORED, timeout=60)
    chat.reload()
    again = chat.page.wait_for(
        f"() => {{ const s = ({SEEN})(); return s && s.marks.length === 3 && s; }}", timeout=60
    )
    assert again["marks"] == got["marks"] and again["sources"] == WANT_LINKS
    assert again["chosen"] == "demo-openai-responses"  # the chat kept its choice
