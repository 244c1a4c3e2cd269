"""Long chats shown again (issue #28), in Chromium: a chat's answers are placeholders at once
and rendered afterwards, newest first; each ends exactly as a one-shot render of its markdown;
a reload takes them from the HTML cache, keyed by the renderer, the image-host policy and the
text; an import always renders from markdown; a chat opened from the welcome screen shows its
end."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import in_store, wait_until
from pysse.chats.conversation import Conversation
from pysse.chats.files import export_json
from pysse.server.demo import MATH_ANSWER, RICH_ANSWER

pytestmark = pytest.mark.browser

# Every answer the page renders is recorded in the order its placeholder became content, with
# how many were still waiting at that moment.
ORDER_JS = """window.__rendered = [];
document.addEventListener('DOMContentLoaded', () => {
  new MutationObserver((list) => { for (const m of list) {
    if (m.attributeName === 'data-pending' && !m.target.hasAttribute('data-pending'))
      window.__rendered.push([m.target.dataset.id,
        document.querySelectorAll('[data-pending]').length]);
  } }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-pending'] });
});"""

# The one-shot render of each answer's text (the page's own renderer and policy), parsed by
# the browser the same way, against what is on screen.
SAME_AS_ONE_SHOT_JS = """async () => {
  const arts = [...document.querySelectorAll('[data-role=assistant]')];
  const texts = JSON.stringify(arts.map((a) => a.dataset.text));
  const html = await pysse.py(`import json
from pysse.render.markdown import render
from pysse.app.settings import image_hosts
[render(t, app.md_for(image_hosts(app.settings))) for t in json.loads(${JSON.stringify(texts)})]`);
  const bad = [];
  arts.forEach((art, i) => {
    const div = document.createElement('div');
    div.innerHTML = html[i];
    if (div.innerHTML !== art.querySelector('.settled').innerHTML) bad.push(art.dataset.id);
  });
  return bad;
}"""


def chat_json(n: int, extra: dict[str, Any] | None = None) -> str:
    conv = Conversation("crestore")
    for i in range(n):
        user = conv.add_user(f"question {i}")
        answer = conv.start_answer(user.id)
        text = f"# Answer {i}\n\n" + (MATH_ANSWER if i % 3 == 0 else RICH_ANSWER)
        conv.finish(answer.id, text, "completed")
    doc = json.loads(export_json(conv, {}))
    for m in doc["messages"]:
        m.update(extra or {})
    return json.dumps(doc)


def answer_ids(page: Any) -> list[str]:
    return [
        str(i)
        for i in page.eval_on_selector_all(
            "[data-role=assistant]", "els => els.map((e) => e.dataset.id)"
        )
    ]


def wait_all_rendered(page: Any, n: int) -> None:
    page.wait_for_function(
        "(n) => document.querySelectorAll('[data-role=assistant]').length === n"
        " && !document.querySelector('[data-pending]')",
        arg=n,
        timeout=120_000,
    )


def restored_counts(page: Any) -> tuple[int, int]:
    r = json.loads(page.evaluate("pysse.stats()"))["restored"]
    return int(r["from_cache"]), int(r["from_markdown"])


def wait_cached(page: Any, n: int, timeout: float = 60) -> None:
    """Wait until the HTML cache holds ``n`` answers (each written after its render, in a
    task of its own: a reload before they land renders them from markdown again)."""
    deadline = time.monotonic() + timeout
    while (got := len(in_store(page, "pysseStore.keys('html')"))) < n:
        assert time.monotonic() < deadline, f"the cache holds {got} answers, not {n}"
        time.sleep(0.1)


HERE = """from pysse.render import lazy
NEEDED = [("math", "latex2mathml"), *(("lexer", name) for name in ("python", "html"))]
for r in NEEDED:
    lazy.REGISTRY.request(r)
not any(lazy.REGISTRY.pending(r) for r in NEEDED)"""


def with_resources(page: Any) -> None:
    """The lazy bundles these answers need, here before the order is measured (an answer
    waiting for its lexer goes after the next one: that order is the bundles', not this
    test's)."""
    wait_until(page, "(code) => pysse.py(code)", HERE, timeout=60)


def import_chat(page: Any, path: Path, n: int) -> None:
    page.set_input_files("[data-role=import]", str(path))
    wait_all_rendered(page, n)


def test_a_reopened_chat_renders_newest_first_and_as_a_one_shot_render(
    make_page: Any, tmp_path: Path
) -> None:
    n = 24
    path = tmp_path / "long.json"
    path.write_text(chat_json(n))
    p = make_page()
    p.page.add_init_script(ORDER_JS)
    page = p.open()
    with_resources(page)
    import_chat(page, path, n)
    ids = answer_ids(page)
    rendered = page.evaluate("window.__rendered")
    assert [r[0] for r in rendered] == ids[::-1]  # newest first, every one once
    assert rendered[0][1] > 0  # the newest was on screen while the rest waited
    assert page.evaluate(SAME_AS_ONE_SHOT_JS) == []
    assert restored_counts(page) == (0, n)  # an import is rendered from its markdown
    wait_cached(page, n)  # the cache's writes land (was: 500 ms)

    p.reload()
    with_resources(page)
    wait_all_rendered(page, n)
    rendered = page.evaluate("window.__rendered")
    assert [r[0] for r in rendered] == ids[::-1]
    assert rendered[0][1] > 0
    assert page.evaluate(SAME_AS_ONE_SHOT_JS) == []
    assert restored_counts(page) == (n, 0)  # a reload parses none of them again


def test_the_cache_is_keyed_by_the_image_host_policy(make_page: Any, tmp_path: Path) -> None:
    n = 6
    path = tmp_path / "c.json"
    path.write_text(chat_json(n))
    p = make_page()
    # (after the fixture's own settings, which every load writes again)
    p.page.add_init_script(
        """if (sessionStorage.getItem('hosts')) {
        const s = JSON.parse(localStorage.getItem('pysse.settings.v1'));
        s.image_hosts = sessionStorage.getItem('hosts');
        localStorage.setItem('pysse.settings.v1', JSON.stringify(s)); }"""
    )
    page = p.open()
    import_chat(page, path, n)
    wait_cached(page, n)
    p.reload()
    wait_all_rendered(page, n)
    assert restored_counts(page) == (n, 0)
    page.evaluate("() => sessionStorage.setItem('hosts', 'img.example')")
    p.reload()
    wait_all_rendered(page, n)
    assert restored_counts(page) == (0, n)  # another policy: rendered again
    assert page.evaluate(SAME_AS_ONE_SHOT_JS) == []


def test_an_import_never_uses_html_from_the_file(make_page: Any, tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(chat_json(3, {"html": "<img src=x onerror=alert(1)>", "rendered": "<b>x</b>"}))
    p = make_page()
    page = p.open()
    import_chat(page, path, 3)
    assert page.locator("[data-role=log] img").count() == 0
    assert restored_counts(page) == (0, 3)
    assert page.evaluate(SAME_AS_ONE_SHOT_JS) == []


def test_a_chat_opened_from_the_welcome_screen_shows_its_end(
    make_page: Any, tmp_path: Path
) -> None:
    n = 12
    path = tmp_path / "c.json"
    path.write_text(chat_json(n))
    p = make_page()
    page = p.open()
    assert page.get_attribute("body", "data-empty") == "1"
    import_chat(page, path, n)
    page.wait_for_function(
        """() => { const log = document.querySelector('[data-role=log]');
        return log.scrollHeight - log.scrollTop - log.clientHeight < 8; }"""
    )
    last = page.locator("[data-role=assistant]").last
    box, view = last.bounding_box(), page.locator("[data-role=log]").bounding_box()
    assert box is not None and view is not None
    assert box["y"] < view["y"] + view["height"]  # the newest answer is in view
    assert box["y"] + box["height"] > view["y"]
