"""Where an answer's numbered source marks go (``pysse.app.cite_marks``): the words that end
each cited span, free of markdown syntax, numbered as the sources list numbers them, in the
order their spans end, bounded whatever a stream sends."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from pysse.app.cite_marks import CANDIDATES, MAX_MARKS, NEEDLE_CHARS, marks, needles
from pysse.events import Citation, sources
from pysse.server.demo import CITATIONS, CITE_ANSWER

SYNTAX = set("*_`[]()#>|\\~<$\n")


def test_the_demo_answer_gets_a_mark_per_http_source_after_its_words() -> None:
    got = marks(CITE_ANSWER, CITATIONS)
    assert [refs for _, refs in got] == [
        [[1, "https://example.org/sse", "Source 1: Server-sent events (example.org)"]],
        [
            [
                2,
                "https://docs.example.com/chat?lang=en",
                "Source 2: Streaming <b>chat</b> (docs.example.com)",
            ]
        ],
        [[3, "http://example.net/reconnect", "Source 3: Reconnecting (example.net)"]],
    ]  # the javascript: source: listed nowhere, marked nowhere
    assert [n[0] for n, _ in got] == ["an event stream over plain HTTP", "each delta", "header"]
    assert got[2][0] == ["header", "Last-Event-ID"]  # the code span's words: a second try


def test_openai_offsets_place_a_mark_and_a_link_in_the_span_is_tried_by_its_text() -> None:
    text = "Rust 1.80 shipped in July ([blog.rust-lang.org](https://blog.rust-lang.org/x))."
    start = text.index("([")
    c = Citation("https://blog.rust-lang.org/x", "Rust 1.80", start=start, end=len(text) - 1)
    [[tried, refs]] = marks(text, [c])
    assert tried == ["https://blog.rust-lang.org/x", "blog.rust-lang.org"]  # the URL is no text
    assert refs == [[1, "https://blog.rust-lang.org/x", "Source 1: Rust 1.80 (blog.rust-lang.org)"]]


def test_a_source_cited_twice_gets_two_marks_and_one_number() -> None:
    text = "Alpha is first. Beta is second. Gamma is third."
    a = Citation("https://a.example/", "A", "Alpha is first")
    b = Citation("https://b.example/", "B", "Beta is second")
    again = Citation("https://a.example/", "A", "Gamma is third")
    got = marks(text, [a, b, again])
    assert [[r[0] for r in refs] for _, refs in got] == [[1], [2], [1]]


def test_two_sources_for_one_span_share_a_mark() -> None:
    text = "Both say so."
    got = marks(
        text,
        [
            Citation("https://a.example/", "", "Both say so"),
            Citation("https://b.example/", "", "Both say so"),
        ],
    )
    assert len(got) == 1 and [r[0] for r in got[0][1]] == [1, 2]
    assert got[0][1][0][2] == "Source 1: a.example"  # no title: the host once


def test_an_unknown_span_gets_no_mark() -> None:
    text = "Plain answer."
    assert marks(text, [Citation("https://a.example/", "A", "the source's own words")]) == []
    assert marks(text, [Citation("https://a.example/", "A", start=5, end=500)]) == []
    assert marks(text, [Citation("https://a.example/", "A", start=3, end=3)]) == []
    assert marks(text, [Citation("javascript:alert(1)", "A", "Plain answer")]) == []
    assert marks(text, []) == []


def test_a_hostile_stream_of_citations_gets_at_most_max_marks() -> None:
    text = " ".join(f"word{i}" for i in range(2000))
    cites = [Citation(f"https://s{i % 50}.example/", "", f"word{i}") for i in range(1000)]
    got = marks(text, cites)
    assert len(got) == MAX_MARKS
    assert len({r[0] for _, refs in got for r in refs}) <= len(sources(cites))


@given(st.text(max_size=300))
def test_needles_are_plain_words_of_the_span(span: str) -> None:
    got = needles(span)
    assert len(got) <= CANDIDATES and len(set(got)) == len(got)
    flat = re.sub(r"\s+", " ", span)
    for n in got:
        assert 3 <= len(n) <= NEEDLE_CHARS
        assert not SYNTAX & set(n) and n == n.strip()
        assert n in flat


@given(
    st.text(alphabet="ab *_[]()`\n.", max_size=200),
    st.lists(
        st.tuples(st.integers(-5, 210), st.integers(-5, 210), st.text("ab .*", max_size=8)),
        max_size=30,
    ),
)
def test_marks_follow_the_text_in_order_and_name_listed_sources(
    text: str, spans: list[tuple[int, int, str]]
) -> None:
    cites = [
        Citation(f"https://h{i % 5}.example/", "", t, s, e) for i, (s, e, t) in enumerate(spans)
    ]
    listed = {c.url: i + 1 for i, c in enumerate(sources(cites))}
    got = marks(text, cites)
    assert len(got) <= MAX_MARKS
    for tried, refs in got:
        assert tried and all(t in re.sub(r"\s+", " ", text) for t in tried)
        assert refs == sorted(refs) and all(listed[url] == n for n, url, _ in refs)
