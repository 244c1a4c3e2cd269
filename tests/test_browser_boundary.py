"""The boundary between the page's Python (in its worker, outside the page's meta CSP) and the
view that applies its ops (web/view.js; docs/security.md, "The boundary"): only the ops'
vocabulary is applied, a refused op is reported, and a view that no longer agrees with its
Python stops and restarts it rather than land ops on the wrong elements. Each op is injected
into the page's Python through ``pysse.py``."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import beside_python, py

pytestmark = pytest.mark.browser

VIEW_ERROR = "() => document.body.dataset.viewError || ''"

# Each: the ops Python sends (``B``: the body's handle, ``N``: a fresh handle), and a check
# in the page that nothing happened.
REFUSED = {
    "an event handler attribute": (
        '[["attr", B, "onclick", "document.title = 1"]]',
        "() => !document.body.hasAttribute('onclick')",
    ),
    "a style attribute": (
        '[["attr", B, "style", "background: red"]]',
        "() => !document.body.hasAttribute('style')",
    ),
    "a javascript: link": (
        '[["new", N, "a"], ["attr", N, "href", "javascript:alert(1)"],'
        ' ["attr", N, "id", "pwn"], ["insert", B, N, None]]',
        "() => !document.getElementById('pwn').hasAttribute('href')",
    ),
    "a script element": (
        '[["new", N, "script"]]',
        "() => !document.querySelector('script:not([src]):not([type])')",
    ),
    "a property other than value": (
        '[["prop", B, "innerHTML", "<b id=pwn>x</b>"]]',
        "() => !document.getElementById('pwn')",
    ),
    "a style property the page never sets": (
        '[["style", B, "backgroundImage", "url(https://example.test/x)"]]',
        "() => !document.body.style.backgroundImage",
    ),
    "HTML into <html>": (
        '[["html", 1, "<head><meta http-equiv=refresh content=60 name=pwn></head>", N, 0]]',
        "() => !document.querySelector('meta[name=pwn]')",
    ),
    "an attached image's bytes as SVG": (
        '[["new", N, "img"], ["attr", N, "id", "pwn"], ["insert", B, N, None],'
        " [\"src\", N, b\"<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'/>\","
        ' "image/svg+xml"]]',
        "() => !document.getElementById('pwn').src",
    ),
    "a localStorage key not the page's": (
        '[["store", "other.key", "x"]]',
        "() => localStorage.getItem('other.key') === null",
    ),
}


def send_ops(page: Any, ops: str) -> None:
    py(
        page,
        f"""B = app.doc.body.handle
N = app.doc._take()
None_ = None
for op in {ops.replace("None", "None_")}:
    app.doc.ops.add(op)
True""",
    )


@pytest.mark.parametrize("case", list(REFUSED))
def test_the_view_refuses_an_op_outside_its_vocabulary(make_page: Any, case: str) -> None:
    ops, nothing_happened = REFUSED[case]
    p = make_page()
    page = p.open()
    send_ops(page, ops)
    page.wait_for_function(VIEW_ERROR)
    assert page.evaluate(VIEW_ERROR).startswith("refused")
    assert page.evaluate(nothing_happened)
    page.evaluate("() => { delete document.body.dataset.viewError; }")  # (this test's doing)
    p.send("/demo echo still works")  # the refused op was skipped, nothing else
    assert p.wait_done().get_attribute("data-text") == "still works"


@pytest.mark.parametrize(
    "ops",
    [
        '[["new", N, "div"], ["insert", B, N, 99999]]',  # an unknown ref
        '[["new", N, "div"], ["replace", 99999, N]]',  # an unknown element replaced
        '[["clone", N, B, 1]]',  # a count that does not match
    ],
    ids=["insert", "replace", "count"],
)
def test_a_view_that_disagrees_with_its_python_restarts_it(make_page: Any, ops: str) -> None:
    """Before: the op landed elsewhere (appended at the end; the text "undefined"; a count
    logged and the ops went on). Now nothing more is applied and Python starts again."""
    p = make_page(thread="worker")
    errors: list[str] = []
    p.page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page = p.open()
    send_ops(page, ops)
    page.wait_for_function("() => document.body.dataset.ready === ''")
    page.wait_for_selector("body[data-ready='1']", timeout=120_000)
    assert any("disagree" in e for e in errors), errors
    assert "undefined" not in page.evaluate("() => document.body.textContent")
    p.send("/demo echo alive again")
    assert p.wait_done().get_attribute("data-text") == "alive again"


def test_a_closed_view_applies_no_late_ops(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    page.evaluate(
        """() => { const v = pysse.view; v.close();
        v.receive({ t: "ops", ops: '[["attr", 2, "data-late", "1"]]', blobs: [], seq: 0 }); }"""
    )
    assert page.evaluate("() => document.body.dataset.late") is None


FORM = """() => new Promise((done) => {
  document.addEventListener("securitypolicyviolation", (e) => done(e.violatedDirective), { once: true });
  const form = document.createElement("form");
  form.action = "/elsewhere";
  form.method = "post";
  document.body.appendChild(form);
  form.submit();
  setTimeout(() => done("submitted"), 3000);
})"""


def test_the_pages_policy_sends_no_form_anywhere(make_page: Any) -> None:
    """``form-action 'none'``: HTML that reached the page (a cached answer, say) cannot post
    what the reader types to another site; the CSP had no form-action."""
    p = make_page()
    page = p.open()
    assert page.evaluate(FORM) == "form-action"
    assert not [u for u in p.requests if u.endswith("/elsewhere")]
    page.evaluate("() => document.querySelector('form').remove()")


OTHER_RELAY = """() => { const t = JSON.parse(localStorage.getItem('pysse.next.v1'));
  t.made_for.relay = 'https://another.test/v1/chat/completions';
  localStorage.setItem('pysse.next.v1', JSON.stringify(t)); }"""


def test_a_kept_template_goes_only_to_the_relay_it_was_made_for(
    make_page: Any, sse_server: Any
) -> None:
    """The request kept for the next visit was made for one relay; the saved relay says
    another now: a message typed while the page starts waits for Python (which sends it
    where the settings say), no early request goes out. (Before: the template was used
    whatever the relay now was.)"""
    from pysse.testing import Script

    sse_server.play(Script.answer("first answer", "openai-chat"))
    p = make_page(thread="worker", settings={"relay": sse_server.url, "format": "openai-chat"})
    page = p.open()
    p.send("first question")
    p.wait_done()
    page.wait_for_function("() => !!localStorage.getItem('pysse.next.v1')")
    page.evaluate(OTHER_RELAY)  # (as if the setting changed since it was made)
    sse_server.play(Script.answer("sent by Python", "openai-chat"))
    page.reload(wait_until="commit")
    page.wait_for_selector("body[data-booting='1']")
    page.fill("[data-role=prompt]", "typed while it starts")
    page.press("[data-role=prompt]", "Enter")
    page.wait_for_selector("body[data-ready='1']", timeout=120_000)
    assert p.wait_done().get_attribute("data-text") == "sent by Python"
    assert beside_python(page, "globalThis.pysseEarly.length") == 0
