"""The page's model DOM (``pysse.view``): handles, ops, selectors, parsing, events."""

from __future__ import annotations

import asyncio
import gc
import json

import pytest

from pysse.view import Document, Ops
from pysse.view.fragment import Element as Parsed
from pysse.view.fragment import parse
from pysse.view.select import SelectorError, compile_selector

PAGE = (
    '<body data-x="1"><main class="log" data-role="log"></main>'
    '<input data-role="prompt" value="hi"><select data-setting="theme"><option value="a">A'
    '</option><option value="b" selected>B</option></select>'
    '<template id="t"><article class="msg" data-role="user"><div class="content"></div>'
    '<footer><button data-role="edit">Edit</button></footer></article></template></body>'
)


def names(items: list[list[object]]) -> list[object]:
    return [op[0] for op in items]


def test_the_page_is_numbered_in_document_order_with_template_content_as_children() -> None:
    doc = Document(PAGE)
    assert doc.documentElement.handle == 1 and doc.body.handle == 2
    order = [el.tag for el in sorted(doc._elements.values(), key=lambda e: e.handle)]
    assert order == [
        "html", "body", "main", "input", "select", "option", "option", "template",
        "article", "div", "footer", "button",
    ]  # fmt: skip
    assert not doc.ops  # building the model from the page records nothing


def test_form_values_start_as_the_page_has_them() -> None:
    doc = Document(PAGE)
    assert doc.querySelector("[data-role=prompt]").value == "hi"  # type: ignore[union-attr]
    assert doc.querySelector("[data-setting=theme]").value == "b"  # type: ignore[union-attr]


def test_writes_are_ops_and_reads_come_from_the_model() -> None:
    doc = Document(PAGE)
    log = doc.querySelector("[data-role=log]")
    assert log is not None
    art = doc.createElement("article")
    art.dataset.answerId = "a1"
    art.hidden = True
    art.textContent = "x < y"
    log.appendChild(art)
    items, _ = doc.ops.take()
    h = art.handle
    assert items == [
        ["new", h, "article"],
        ["attr", h, "data-answer-id", "a1"],
        ["attr", h, "hidden", ""],
        ["text", h, "x < y"],
        ["insert", log.handle, h, None],
    ]
    assert art.dataset.answerId == "a1" and art.hidden and art.textContent == "x < y"
    assert log.querySelector("article[data-answer-id=a1]") is art
    art.setAttribute("data-answer-id", "a1")  # no change: no op
    assert not doc.ops


def test_cloning_a_template_numbers_the_copy_as_the_view_will() -> None:
    doc = Document(PAGE)
    template = doc.querySelector("#t")
    assert template is not None and template.content is not None
    src = template.content.firstElementChild
    assert src is not None
    copy = src.cloneNode(True)
    items, _ = doc.ops.take()
    assert items == [["clone", copy.handle, src.handle, 4]]
    assert copy.querySelector("[data-role=edit]").textContent == "Edit"  # type: ignore[union-attr]
    assert doc.querySelector("[data-role=edit]") is None  # template content is not the page


def test_inner_html_is_parsed_and_numbered_but_opaque_content_is_not() -> None:
    doc = Document(PAGE)
    log = doc.querySelector("main")
    assert log is not None
    log.innerHTML = '<ul><li data-chat="c1"><button data-role="chat-open">a</button></li></ul>'
    items, _ = doc.ops.take()
    (op,) = items
    assert op[:2] == ["html", log.handle] and op[4] == 3
    btn = log.querySelector("li[data-chat=c1] [data-role=chat-open]")
    assert btn is not None and btn.handle == op[3] + 2
    assert btn.closest("li[data-chat]") is log.children[0].children[0]
    log.opaque = True
    log.innerHTML = "<p>answer</p>"
    assert doc.ops.take()[0] == [["html", log.handle, "<p>answer</p>", 0, 0]]
    assert log.querySelector("p") is None


def test_parsing_adds_the_tbody_a_browser_adds() -> None:
    (table,) = parse("<table><tr><td>1</td></tr><tr><td>2</td></tr></table>")
    assert isinstance(table, Parsed)
    (body,) = table.children
    assert isinstance(body, Parsed) and body.tag == "tbody" and len(body.children) == 2


def test_moving_and_removing_elements() -> None:
    doc = Document(PAGE)
    log = doc.querySelector("main")
    assert log is not None
    a, b = doc.createElement("p"), doc.createElement("p")
    log.append(a, b)
    log.insertBefore(b, a)
    assert log.children == [b, a]
    c = doc.createElement("p")
    a.replaceWith(c)
    assert log.children == [b, c] and a.parent is None and not a.isConnected
    b.remove()
    assert log.children == [c] and c.isConnected
    items, _ = doc.ops.take()
    assert names(items) == ["new", "new", "insert", "insert", "insert", "new", "replace", "remove"]


def test_an_element_python_drops_is_dropped_in_the_view() -> None:
    doc = Document(PAGE)
    el = doc.createElement("p")
    h = el.handle
    del el
    gc.collect()
    items, _ = doc.ops.take()
    assert items[-1] == ["drop", [h]]


def test_events_mirror_form_values_and_stop_propagation_ends_the_event() -> None:
    doc = Document(PAGE)
    prompt = doc.querySelector("[data-role=prompt]")
    body = doc.body
    assert prompt is not None
    seen: list[str] = []
    prompt.addEventListener("input", lambda e: seen.append(f"prompt {e.target.value}"))  # type: ignore[union-attr]

    def stop(e: object) -> None:
        seen.append("body")
        e.stopPropagation()  # type: ignore[attr-defined]

    body.addEventListener("input", stop)
    body.addEventListener("input", lambda e: seen.append("never"))
    listens = [op for op in doc.ops.take()[0] if op[0] == "listen"]
    assert listens == [
        ["listen", prompt.handle, "input", False, None],
        ["listen", 2, "input", False, None],
    ]
    record = {"type": "input", "t": prompt.handle, "e": 7, "value": "new"}
    doc.dispatch({**record, "h": prompt.handle})
    doc.dispatch({**record, "h": body.handle})
    doc.dispatch({**record, "h": prompt.handle, "e": 7})  # the same event again: stopped
    assert seen == ["prompt new", "body"]
    assert prompt.value == "new"


def test_a_call_is_answered_by_its_reply() -> None:
    async def run() -> object:
        doc = Document(PAGE)
        future = doc.call("confirm", "Delete?")
        (op,) = doc.ops.take()[0]
        assert op[0] == "call" and op[2:] == ["confirm", ["Delete?"]]
        doc.dispatch({"type": "reply", "id": op[1], "value": True})
        return await future

    assert asyncio.run(run()) is True


def test_selectors_outside_the_subset_are_refused() -> None:
    for bad in ("a:hover", "a + b", "a ~ b", "[x^=y]"):
        with pytest.raises(SelectorError):
            compile_selector(bad)
    doc = Document(PAGE)
    assert doc.querySelector("body > main.log") is not None
    assert doc.querySelector("body > article") is None
    assert len(doc.querySelectorAll("option, main")) == 3


def test_ops_are_taken_within_a_budget_and_bytes_travel_beside_the_json() -> None:
    ops = Ops()
    for i in range(10):
        ops.add(["text", i, "x" * 100])
    ops.add(["download", "a.sse", b"\x00\x01", "text/event-stream"])
    first, _ = ops.take(budget=300)
    assert len(first) == 2
    rest, blobs = ops.take()
    assert len(rest) == 9 and rest[-1][2] == {"$blob": 0} and blobs == [b"\x00\x01"]
    assert json.loads(Ops.encode(rest))[0] == ["text", 2, "x" * 100]
