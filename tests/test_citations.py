"""Citations (issue #43): each format's wire shape becomes ``Citation`` events, kept once in
``ChatStream.citations``; each encoder writes them so its decoder reads them back, and
``/demo cite`` carries them in every format."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pysse import ChatStream, Citation, Outcome
from pysse.events import event_to_dict, sources
from pysse.providers import PROVIDERS, Text, encode_parts
from pysse.server.demo import CITATIONS, CITE_ANSWER, plan
from pysse.testing import Script


def _sse(events: list[tuple[str | None, Any]], eol: str = "\n") -> bytes:
    out = []
    for name, data in events:
        head = f"event: {name}{eol}" if name else ""
        body = data if isinstance(data, str) else json.dumps(data)
        out.append(f"{head}data: {body}{eol}{eol}")
    return "".join(out).encode()


def _read(fmt: str, body: bytes) -> ChatStream:
    cs = ChatStream(fmt)  # type: ignore[arg-type]
    for i in range(0, len(body), 5):  # cut mid-event: citations must not depend on chunking
        cs.feed(body[i : i + 5])
    cs.close()
    return cs


def test_chat_completions_url_citation_annotations() -> None:
    note = {
        "type": "url_citation",
        "url_citation": {
            "end_index": 28,
            "start_index": 0,
            "title": "Lisbon weather",
            "url": "https://weather.example/lisbon?utm_source=openai",
        },
    }
    chunks = [
        {
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"content": "It is sunny in Lisbon today."}}],
        },
        {
            "object": "chat.completion.chunk",
            "choices": [
                {
                    "index": 0,
                    "delta": {"annotations": [note, {"type": "file_citation", "file_id": "f1"}]},
                }
            ],
        },
        {
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        },
    ]
    cs = _read("openai-chat", _sse([(None, c) for c in chunks] + [(None, "[DONE]")]))
    assert cs.outcome == Outcome.COMPLETED and cs.text == "It is sunny in Lisbon today."
    assert cs.citations == (
        Citation("https://weather.example/lisbon?utm_source=openai", "Lisbon weather", "", 0, 28),
    )


def test_chat_compatible_search_results_beside_the_choices_count_once() -> None:
    head = {
        "id": "x",
        "object": "chat.completion.chunk",
        "citations": ["https://a.example/1", "https://b.example/2"],
        "search_results": [{"title": "A one", "url": "https://a.example/1", "date": None}],
    }
    chunks = [
        {**head, "choices": [{"index": 0, "delta": {"content": "Hi [1]"}}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    cs = _read("openai-chat", _sse([(None, c) for c in chunks] + [(None, "[DONE]")]))
    assert cs.citations == (
        Citation("https://a.example/1", "A one"),
        Citation("https://a.example/1"),
        Citation("https://b.example/2"),
    )
    assert [(c.url, c.title) for c in sources(cs.citations)] == [
        ("https://a.example/1", "A one"),
        ("https://b.example/2", ""),
    ]


def test_responses_annotations_streamed_then_repeated_on_the_finished_part_count_once() -> None:
    ann = {
        "type": "url_citation",
        "start_index": 4,
        "end_index": 9,
        "title": "T",
        "url": "https://a.example/x",
    }
    late = {
        "type": "url_citation",
        "start_index": 10,
        "end_index": 12,
        "title": "U",
        "url": "https://b.example/",
    }
    part = {"type": "output_text", "text": "The sky is blue", "annotations": [ann]}
    item = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [{**part, "annotations": [ann, late]}],
    }
    events = [
        (
            "response.output_text.delta",
            {
                "type": "response.output_text.delta",
                "output_index": 0,
                "content_index": 0,
                "delta": "The sky is blue",
            },
        ),
        (
            "response.output_text.annotation.added",
            {
                "type": "response.output_text.annotation.added",
                "item_id": "msg_1",
                "output_index": 0,
                "content_index": 0,
                "annotation_index": 0,
                "annotation": ann,
            },
        ),
        (
            "response.content_part.done",
            {
                "type": "response.content_part.done",
                "output_index": 0,
                "content_index": 0,
                "part": part,
            },
        ),
        (
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": 0, "item": item},
        ),
        (
            "response.completed",
            {"type": "response.completed", "response": {"status": "completed", "output": [item]}},
        ),
    ]
    cs = _read("openai-responses", _sse(events))
    assert cs.citations == (
        Citation("https://a.example/x", "T", "", 4, 9),
        Citation("https://b.example/", "U", "", 10, 12),
    )


def test_anthropic_citations_delta_and_web_search_results() -> None:
    results = {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": [
            {
                "type": "web_search_result",
                "url": "https://en.example.org/wiki/Lisbon",
                "title": "Lisbon - Wiki",
                "encrypted_content": "xx",
                "page_age": None,
            },
            {
                "type": "web_search_result",
                "url": "https://news.example/l",
                "title": "News",
                "encrypted_content": "yy",
            },
        ],
    }
    web = {
        "type": "web_search_result_location",
        "url": "https://en.example.org/wiki/Lisbon",
        "title": "Lisbon - Wiki",
        "encrypted_index": "Eo8B",
        "cited_text": "Lisbon is the capital of Portugal.",
    }
    doc = {
        "type": "char_location",
        "cited_text": "the grass is green",
        "document_index": 0,
        "document_title": "Facts",
        "start_char_index": 0,
        "end_char_index": 18,
    }
    events = [
        ("message_start", {"type": "message_start", "message": {"usage": {"input_tokens": 3}}}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 1, "content_block": results},
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 2,
                "content_block": {"type": "text", "text": "", "citations": []},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "citations_delta", "citation": web},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "text_delta", "text": "Lisbon is Portugal's capital."},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "citations_delta", "citation": doc},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 2}),
        ("message_stop", {"type": "message_stop"}),
    ]
    cs = _read("anthropic", _sse(events))
    assert cs.text == "Lisbon is Portugal's capital."
    assert cs.citations == (
        Citation("https://en.example.org/wiki/Lisbon", "Lisbon - Wiki"),
        Citation("https://news.example/l", "News"),
        Citation(
            "https://en.example.org/wiki/Lisbon",
            "Lisbon - Wiki",
            "Lisbon is the capital of Portugal.",
        ),
        Citation("", "Facts", "the grass is green", 0, 18),
    )
    assert [c.linkable for c in cs.citations] == [True, True, True, False]


def test_gemini_grounding_metadata_spans_and_sources() -> None:
    meta = {
        "webSearchQueries": ["lisbon weather"],
        "groundingChunks": [
            {
                "web": {
                    "uri": "https://vertexaisearch.example/grounding-api-redirect/AbC",
                    "title": "weather.example",
                }
            },
            {"web": {"uri": "https://b.example/", "title": "b.example"}},
            {"web": {"uri": "https://unused.example/", "title": "unused.example"}},
        ],
        "groundingSupports": [
            {
                "segment": {"startIndex": 0, "endIndex": 17, "text": "It is sunny today"},
                "groundingChunkIndices": [0, 1],
                "confidenceScores": [0.9, 0.8],
            },
            {"segment": {"endIndex": 3, "text": "It "}, "groundingChunkIndices": [7, "x"]},
        ],
        "searchEntryPoint": {"renderedContent": "<style>evil</style>"},
    }
    chunks = [
        {
            "candidates": [
                {
                    "content": {"parts": [{"text": "It is sunny today."}], "role": "model"},
                    "index": 0,
                }
            ]
        },
        {
            "candidates": [
                {
                    "content": {"parts": [{"text": ""}], "role": "model"},
                    "finishReason": "STOP",
                    "groundingMetadata": meta,
                    "index": 0,
                }
            ]
        },
    ]
    cs = _read("gemini", _sse([(None, c) for c in chunks], "\r\n"))
    assert cs.outcome == Outcome.COMPLETED
    assert cs.citations == (
        Citation(
            "https://vertexaisearch.example/grounding-api-redirect/AbC",
            "weather.example",
            "It is sunny today",
            0,
            17,
        ),
        Citation("https://b.example/", "b.example", "It is sunny today", 0, 17),
        Citation("https://unused.example/", "unused.example"),
    )


def test_citation_is_an_event_a_log_can_write() -> None:
    c = Citation("https://a.example/", "A", "span", 1, 5)
    assert event_to_dict(c) == {
        "type": "citation",
        "url": "https://a.example/",
        "title": "A",
        "text": "span",
        "start": 1,
        "end": 5,
    }
    for bad in (
        "javascript:alert(1)",
        " JavaScript:x",
        "ftp://a/",
        "data:text/html,x",
        "",
        "//a.example/",
    ):
        assert not Citation(bad).linkable, bad
    assert Citation("HTTPS://A.example/").linkable and Citation("http://a/").linkable


def _as_sent(name: str, c: Citation) -> Citation | None:
    """What ``name``'s wire form carries of a citation (each format has its own fields)."""
    if name.startswith("openai"):
        return Citation(c.url, c.title, "", c.start or 0, c.end or 0) if c.url else None
    if name == "anthropic":
        return (
            Citation(c.url, c.title, c.text)
            if c.url
            else Citation("", c.title, c.text, c.start or 0, c.end or 0)
        )
    return c if c.url else None


SOURCES = (
    Citation("https://a.example/x?q=1&r=2", "A — “quoted” <b>", "span one", 0, 4),
    Citation("https://a.example/x?q=1&r=2", "A — “quoted” <b>", "span two", 5, 9),
    Citation("http://b.example/", "", "", None, None),
    Citation("", "A document", "from the document", 3, 20),
    Citation("javascript:alert(1)", "evil", "x", 1, 2),
)


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_encoders_write_citations_their_decoder_reads_back(name: str) -> None:
    parts = [Text(["Hello ", "world"], SOURCES)]
    body = b"".join(encode_parts(PROVIDERS[name], parts))
    for fmt in (name, "auto"):
        cs = _read(fmt, body)
        assert cs.text == "Hello world" and cs.outcome == Outcome.COMPLETED
        want = {s for c in SOURCES if (s := _as_sent(name, c)) is not None}
        assert set(cs.citations) == want, fmt
        assert len(cs.citations) == len(want)


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_demo_cite_in_every_format(name: str) -> None:
    script = plan(name, "/demo cite", seed=3)
    cs = _read(name, script.body)
    assert cs.text == CITE_ANSWER
    assert {c.url for c in cs.citations} == {c.url for c in CITATIONS}
    assert [c.url for c in cs.citations if not c.linkable] == ["javascript:alert(document.domain)"]
    for c in cs.citations:
        if c.start is not None and c.end and c.text:  # the span is the answer's own words
            assert CITE_ANSWER[c.start : c.end] == c.text


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_the_kit_scripts_citations(name: str) -> None:
    cs = Script.answer(CITE_ANSWER, name, citations=CITATIONS).chat(name)  # type: ignore[arg-type]
    assert cs.text == CITE_ANSWER and cs.outcome == Outcome.COMPLETED
    assert [c.url for c in cs.citations] == [c.url for c in CITATIONS]


def test_a_stream_of_endless_citations_keeps_a_bounded_list_and_the_page_shows_100() -> None:
    """A hostile or broken stream citing without end (100x any provider's count, and more):
    ChatStream keeps MAX_CITATIONS and passes on no more; the page shows at most 100."""
    from pysse.accumulate import MAX_CITATIONS

    many = tuple(
        Citation(f"https://s{i}.example/p", f"source {i}") for i in range(5 * MAX_CITATIONS)
    )
    body = b"".join(encode_parts(PROVIDERS["openai-responses"], [Text(["cited"], many)]))
    cs = ChatStream("openai-responses")
    passed = [e for e in cs.feed(body) if isinstance(e, Citation)]
    assert [c.url for c in cs.citations] == [c.url for c in many[:MAX_CITATIONS]]
    assert len(passed) == MAX_CITATIONS and cs.citations is cs.citations  # (read once a change)
    assert len(sources(cs.citations)) == 100
    assert cs.text == "cited" and cs.close() is not None
