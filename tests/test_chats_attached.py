"""Attached files kept with a chat (``pysse.chats.attached``): stored, exported, imported back
checked, and sent again with every request that replies to their question."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pysse.chats.conversation import Conversation
from pysse.chats.files import export_json, parse_import
from pysse.chats.records import ImportError_
from pysse.providers.attachments import MAX_ATTACHMENTS, Attachment

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(40)).decode()
FILES = (Attachment.image("cat.png", "image/png", PNG), Attachment.text("notes.md", "# hi"))


def chat() -> Conversation:
    c = Conversation("c1")
    user = c.add_user("what is this?", FILES)
    answer = c.start_answer(user.id)
    c.finish(answer.id, "a cat", "completed")
    return c


def test_files_survive_the_store_and_an_export() -> None:
    c = chat()
    stored = Conversation.from_json(json.loads(json.dumps(c.to_json())), strict=False)
    assert stored.path()[0].attachments == FILES and stored.dropped == []
    imported, _ = parse_import(export_json(c, {}), set())
    assert imported.path()[0].attachments == FILES
    assert "attachments" not in c.to_json()["messages"][1]  # (an answer has none)


def test_regenerate_and_edit_send_the_question_s_files_again() -> None:
    c = chat()
    (user, answer) = c.path()
    again = c.regenerate(answer.id)
    assert c.turns(again.parent or "", reasoning=False)[0].attachments == FILES
    edited = c.edit(user.id, "and this?")
    assert edited.attachments == FILES and c.has_attachments(edited.id)
    assert c.turns(edited.id)[-1].attachments == FILES


def exported_with(files: Any) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(export_json(chat(), {}))
    doc["messages"][0]["attachments"] = files
    return doc


@pytest.mark.parametrize(
    ("files", "says"),
    [
        ("cat.png", "message 0's 'attachments' must be a list"),
        ([1], "message 0's 'attachments'[0] is not an object"),
        ([{"kind": "image", "type": "image/png", "name": "a"}], "[0]'s 'data' must be text"),
        (
            [{"kind": "image", "type": "image/png", "name": "a.png", "data": "%%%"}],
            "message 0's 'attachments'[0]: a.png: the image's data is not base64",
        ),
        (
            [{"kind": "image", "type": "image/svg+xml", "name": "a.svg", "data": PNG}],
            "[0]: a.svg: image/svg+xml is not an image type",
        ),
        (
            [{"kind": "text", "type": "text/plain", "name": "t", "data": "x" * 200_001}],
            "[0]: t: 200,001 characters",
        ),
        ([{"kind": "video", "type": "v", "name": "v", "data": ""}], "'kind' must be image or"),
        ([None] * (MAX_ATTACHMENTS + 1), "holds 11 files"),
    ],
)
def test_a_bad_attachment_refuses_the_file_in_one_sentence(files: Any, says: str) -> None:
    with pytest.raises(ImportError_, match=None) as info:
        parse_import(json.dumps(exported_with(files)), set())
    assert says in str(info.value)
    assert str(info.value).count("\n") == 0


def test_the_store_drops_a_bad_attachment_and_keeps_the_message() -> None:
    c = Conversation.from_json(exported_with([{"kind": "image"}]), strict=False)
    assert c.path()[0].text == "what is this?" and c.path()[0].attachments == ()
    assert any("'attachments'[0]" in d for d in c.dropped)


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=12,
)
ITEM = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["image", "text", "x"]) | JSONISH,
        "type": st.sampled_from(["image/png", "image/gif", "text/plain", ""]) | JSONISH,
        "name": st.text(max_size=300) | JSONISH,
        "data": st.sampled_from([PNG, "", "=="]) | st.text(max_size=40) | JSONISH,
    }
)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(JSONISH | st.lists(ITEM | JSONISH, max_size=12))
def test_hostile_attachments_are_read_or_refused_never_an_error(files: Any) -> None:
    doc = exported_with(files)
    try:
        conv, _ = parse_import(json.dumps(doc), set())
    except ImportError_:
        lenient = Conversation.from_json(doc, strict=False)
        assert lenient.path()[0].attachments == ()
        return
    for f in conv.path()[0].attachments:
        assert f.kind in ("image", "text") and len(f.name) <= 200
        assert "\n" not in f.name


def test_the_markdown_export_names_the_files() -> None:
    assert "Attached: `cat.png`, `notes.md`" in chat().to_markdown()


def test_the_html_export_holds_the_files_escaped_and_loads_nothing() -> None:
    from html.parser import HTMLParser

    from pysse.chats.html_export import CSP, export_html

    c = Conversation("c1")
    hostile = "<img src=x onerror=alert(1)>.txt"
    c.add_user("look", (Attachment.text(hostile, "</pre><script>x</script>"), FILES[0]))
    page = export_html(c, "", lambda t: t)
    imgs: list[dict[str, str | None]] = []
    scripts: list[str] = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "img":
                imgs.append(dict(attrs))
            if tag == "script":
                scripts.append(tag)

    Tags().feed(page)
    assert scripts == []  # the text file's content and name are text
    assert imgs == [{"src": f"data:image/png;base64,{PNG}", "alt": "cat.png"}]
    assert '<summary dir="auto">&lt;img src=x onerror=alert(1)&gt;.txt</summary>' in page
    assert "&lt;/pre&gt;&lt;script&gt;x&lt;/script&gt;" in page
    assert "img-src data:;" in CSP  # the image is its own bytes: the page makes no request


def test_a_chat_begun_with_files_alone_is_named_for_the_first() -> None:
    c = Conversation("c1")
    c.add_user("", FILES)
    assert c.title == "cat.png"
