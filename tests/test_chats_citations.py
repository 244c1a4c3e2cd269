"""An answer's sources kept with the chat (issue #43): only http(s) ones, each URL once,
capped; through storage and export/import JSON, Markdown ("Sources:") and HTML; a hostile
file (a javascript: URL, wrong types, too long, too many) is refused naming the field when
imported, and read leniently from the store with the sources dropped and said so."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pysse import ChatStream, Citation
from pysse.chats.conversation import Conversation, ImportError_
from pysse.chats.files import export_json, parse_import
from pysse.chats.html_export import export_html
from pysse.chats.message_extras import MAX_CITATIONS, MAX_TITLE, MAX_URL
from pysse.render import render
from pysse.server.demo import CITATIONS, plan


def demo_cs() -> ChatStream:
    cs = ChatStream("gemini")
    cs.feed(plan("gemini", "/demo cite", seed=1).body)
    cs.close()
    return cs


def chat_with(citations: tuple[Citation, ...], text: str = "Cited.") -> Conversation:
    conv = Conversation("c1", tag="")  # (no tab tag: ids m1, m2)
    user = conv.add_user("sources?")
    answer = conv.start_answer(user.id)
    conv.finish(answer.id, text, "completed", citations=citations)
    return conv


def round_trip(conv: Conversation) -> Conversation:
    got, _ = parse_import(export_json(conv, {}), set())
    return got


def test_the_demo_answers_sources_are_kept_http_only_and_survive_export_and_import() -> None:
    cs = demo_cs()
    conv = chat_with(cs.citations, cs.text)
    kept = conv.messages["m2"].citations
    assert [c.url for c in kept] == [c.url for c in CITATIONS if c.linkable]
    assert all(c.title and c.text for c in kept)
    got = round_trip(conv).messages["m2"]
    assert got.citations == kept and got.text == cs.text
    stored = Conversation.from_json(json.loads(json.dumps(conv.to_json())), strict=False)
    assert stored.messages["m2"].citations == kept and not stored.dropped


def test_each_url_once_a_later_title_filling_an_empty_one_and_caps_on_the_way_in() -> None:
    many = tuple(Citation(f"https://s{i}.example/", "t") for i in range(MAX_CITATIONS + 5))
    conv = chat_with(
        (
            Citation(" https://a.example/x ", "", "first span", 0, 5),
            Citation("https://a.example/x", "A title", "second span", 6, 9),
            Citation("https://b.example/", "B" * (MAX_TITLE + 50)),
            Citation("https://c.example/" + "x" * MAX_URL, "too long: dropped, never cut"),
            Citation("", "A document", "no URL"),
            Citation("ftp://files.example/x", "ftp"),
            Citation("https:///no-host", "no host"),
            *many,
        )
    )
    kept = conv.messages["m2"].citations
    assert kept[0] == Citation("https://a.example/x", "A title", "first span", 0, 5)
    assert kept[1].title == "B" * MAX_TITLE
    assert len(kept) == MAX_CITATIONS and kept[2].url == "https://s0.example/"
    assert round_trip(conv).messages["m2"].citations == kept


def test_an_old_file_without_sources_still_imports() -> None:
    conv = chat_with(())
    assert "citations" not in conv.to_json()["messages"][1]
    assert round_trip(conv).messages["m2"].citations == ()


def hostile(**fields: Any) -> str:
    doc = chat_with((Citation("https://ok.example/", "ok"),)).to_json()
    doc["messages"][1].update(fields)
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("fields", "names"),
    [
        ({"citations": "https://a.example/"}, "message 1 'citations' must be a list"),
        ({"citations": [1]}, "message 1 'citations' item 0 is not an object"),
        ({"citations": [{"url": "javascript:alert(1)"}]}, "citation 0 'url' must be an http"),
        ({"citations": [{"url": " JavaScript:alert(1)"}]}, "citation 0 'url' must be an http"),
        ({"citations": [{"url": "data:text/html,<script>x</script>"}]}, "must be an http"),
        ({"citations": [{"url": 5}]}, "citation 0 'url' must be text"),
        ({"citations": [{"url": "https://a.example/", "title": ["x"]}]}, "'title' must be text"),
        ({"citations": [{"url": "https://a/" + "x" * MAX_URL}]}, "'url' is longer than"),
        ({"citations": [{"url": "https://a/", "text": "x" * 9999}]}, "'text' is longer than"),
        ({"citations": [{"url": "https://a/"}] * (MAX_CITATIONS + 1)}, "at most 100"),
    ],
)
def test_a_hostile_file_is_refused_naming_the_field(fields: dict[str, Any], names: str) -> None:
    with pytest.raises(ImportError_, match=names):
        parse_import(hostile(**fields), set())


def test_the_store_read_leniently_drops_bad_sources_and_says_so() -> None:
    doc = json.loads(hostile(citations=[{"url": "javascript:alert(1)", "title": "x"}]))
    conv = Conversation.from_json(doc, strict=False)
    assert conv.messages["m2"].citations == () and conv.messages["m2"].text == "Cited."
    assert any("must be an http(s) link" in d and "sources dropped" in d for d in conv.dropped)


def test_odd_offsets_are_ignored_not_refused() -> None:
    text = hostile(citations=[{"url": "https://a.example/", "start": 9, "end": 2}])
    got = parse_import(text, set())[0].messages["m2"].citations
    assert got == (Citation("https://a.example/", ""),)


def test_markdown_export_lists_the_sources_as_text_links() -> None:
    conv = chat_with(
        (
            Citation("https://a.example/p?q=1 2", "A [tricky] *title*"),
            Citation("https://b.example/", ""),
            Citation("javascript:alert(1)", "evil"),
        )
    )
    md = conv.to_markdown()
    assert (
        "Sources:\n\n1. [A \\[tricky\\] \\*title\\*](<https://a.example/p?q=1%202>) (a.example)"
        in md
    )
    assert "2. [b.example](<https://b.example/>) (b.example)" in md
    assert "javascript" not in md and "evil" not in md


def test_html_export_lists_the_sources_escaped_with_their_hosts() -> None:
    conv = chat_with(
        (
            Citation('https://a.example/"><script>x</script>', "<b>Bold</b> & co"),
            Citation("javascript:alert(1)", "evil"),
        )
    )
    page = export_html(conv, "", render)
    assert '<section class="sources" aria-label="Sources">' in page
    assert 'href="https://a.example/&quot;&gt;&lt;script&gt;x&lt;/script&gt;"' in page
    assert 'rel="noopener noreferrer nofollow"' in page
    assert "&lt;b&gt;Bold&lt;/b&gt; &amp; co</a>" in page
    assert '<span class="source-host" dir="ltr">a.example</span>' in page
    assert "javascript:" not in page and "evil" not in page and "<script>x" not in page


SECTION = (
    '<body><section data-role="sources" hidden><h3>Sources</h3><ol></ol></section>'
    '<section data-role="later" hidden><h3>Sources</h3><ol></ol></section></body>'
)


def _shown(el: Any) -> list[tuple[str, str, str]]:
    return [
        (li.querySelector("a").getAttribute("href"), li.querySelector("a").textContent,
         li.querySelector(".source-host").textContent)
        for li in el.querySelectorAll("li")
    ]  # fmt: skip


def test_the_sources_view_adds_only_new_http_sources_as_text() -> None:
    from pysse.call.extras_view import SourcesView
    from pysse.view import Document

    doc = Document(SECTION)
    el = doc.body.querySelector("[data-role=sources]")
    view = SourcesView(el)
    view.render(())
    assert el.hidden  # no source: no list
    first = (Citation("javascript:alert(1)", "evil"), Citation("https://a.example/", "<b>A</b>"))
    view.render(first)
    assert not el.hidden and _shown(el) == [("https://a.example/", "<b>A</b>", "a.example")]
    link = el.querySelector("a")
    assert link.getAttribute("rel") == "noopener noreferrer nofollow"
    assert link.getAttribute("target") == "_blank" and not link.querySelector("b")
    view.render((*first, Citation("https://a.example/", "again"), Citation("http://b.example/")))
    assert _shown(el) == [
        ("https://a.example/", "<b>A</b>", "a.example"),
        ("http://b.example/", "b.example", "b.example"),  # no title: its host
    ]
    # A continued answer: a new view over the same list adds after what it shows.
    again = SourcesView(el)
    again.render((*first, Citation("http://b.example/"), Citation("https://c.example/x", "C")))
    assert [s[0] for s in _shown(el)] == [
        "https://a.example/",
        "http://b.example/",
        "https://c.example/x",
    ]
    assert all(not str(s[0]).startswith("javascript") for s in _shown(el))
