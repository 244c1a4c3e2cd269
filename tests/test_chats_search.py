"""Search across chats, the pure part (``pysse.chats.search``): case folding, snippets that
always hold the match, escaping, no match across two messages, ranking, the steps."""

from __future__ import annotations

import html
import itertools
import json

from hypothesis import given
from hypothesis import strategies as st

from pysse.chats.conversation import Conversation
from pysse.chats.files import ChatSummary
from pysse.chats.search import (
    ChatText,
    count_label,
    fold,
    fold_term,
    locate,
    original_span,
    read_batches,
    search,
    search_record,
    search_record_steps,
    search_steps,
)

TEXT = st.text(st.characters(codec="utf-8"), max_size=300)
TERM = st.text(st.characters(codec="utf-8"), min_size=2, max_size=8).filter(
    lambda t: len(t.strip()) >= 2
)


def chat_of(chat_id: str, *texts: str, title: str = "", updated: float = 0.0) -> ChatText:
    msgs = [(f"m{i}", "user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(texts)]
    return ChatText.from_messages(chat_id, title, updated, msgs)


def test_folding_is_per_character() -> None:
    # original_span maps positions one character at a time: that is only right if folding a
    # string is folding its characters (casefold has no context rules, unlike lower's sigma)
    for cp in range(0x30000):
        c = chr(cp)
        if 0xD800 <= cp < 0xE000:
            continue
        assert len(c.casefold()) >= 1
        assert ("a" + c + "b").casefold() == "a" + c.casefold() + "b"


@given(TEXT, TERM, TEXT)
def test_a_planted_term_is_found_and_its_snippet_holds_it(pre: str, term: str, post: str) -> None:
    text = pre + term + post
    hits = search([chat_of("c1", text)], term)
    assert [h.chat_id for h in hits] == ["c1"]
    snip = hits[0].snippet
    assert fold_term(term) in fold(snip.match)
    # the match is cut from the text as written, at the first place the term occurs
    assert snip.match in text


@given(TEXT, TERM)
def test_case_does_not_matter(text: str, term: str) -> None:
    chats = [chat_of("c1", text + term.upper() + text)]
    assert [h.chat_id for h in search(chats, term.lower())] == ["c1"]
    assert [h.chat_id for h in search(chats, term.swapcase())] == ["c1"]


def test_unicode_case_folding() -> None:
    chats = [
        chat_of("de", "Die Straße ist lang."),
        chat_of("el", "ΟΔΥΣΣΕΥΣ and οδυσσευς"),
        chat_of("tr", "İstanbul"),
    ]
    assert [h.chat_id for h in search(chats, "STRASSE")] == ["de"]
    hit = search(chats, "strasse")[0]
    assert hit.snippet.match == "Straße"  # "ß" folds to "ss": the whole letter is marked
    assert search(chats, "ss")[0].snippet.match == "ß"
    assert [h.chat_id for h in search(chats, "οδυσσευς")] == ["el"]
    assert search(chats, "ΟΔΥΣΣΕΥΣ")[0].snippet.match == "ΟΔΥΣΣΕΥΣ"
    assert search(chats, "i̇stanbul")[0].snippet.match == "İstanbul"


@given(TEXT, st.integers(0, 300), st.integers(0, 20))
def test_original_span_covers_the_folded_range(text: str, start: int, length: int) -> None:
    folded = fold(text)
    start = min(start, len(folded))
    length = min(length, len(folded) - start)
    lo, hi = original_span(text, start, length)
    assert 0 <= lo <= hi <= len(text)
    assert folded[start : start + length] in fold(text[lo:hi])


def per_character_span(text: str, start: int, length: int) -> tuple[int, int]:
    """``original_span`` the plain way: one ``fold`` a character (the oracle)."""
    end, at, first = start + length, 0, -1
    for i, c in enumerate(text):
        nxt = at + len(fold(c))
        if first < 0 and nxt > start:
            first = i
        if first >= 0 and nxt >= end:
            return first, i + 1
        at = nxt
    return (first if first >= 0 else len(text)), len(text)


WIDE_TEXT = st.text(st.sampled_from("aßİﬁΣσς ŉǰ\u1e9eẞ]^-\\x"), max_size=60)


@given(st.one_of(TEXT, WIDE_TEXT), st.integers(0, 120), st.integers(1, 20))
def test_original_span_is_the_per_character_span(text: str, start: int, length: int) -> None:
    folded = fold(text)
    start = start % (len(folded) + 1)
    length = min(length, len(folded) - start)  # (0 where the text is empty or at its end)
    assert original_span(text, start, length) == per_character_span(text, start, length)


@given(TEXT, TEXT)
def test_a_match_never_spans_two_messages(a: str, b: str) -> None:
    chats = [chat_of("c1", a + "ab", "cd" + b)]
    joined = fold(a + "ab") + fold("cd" + b)
    found = search(chats, "abcd")
    assert bool(found) == ("abcd" in fold(a + "ab") or "abcd" in fold("cd" + b))
    assert "abcd" in joined  # (it would match if the messages were one text)


@given(TEXT, TERM, TEXT)
def test_snippet_html_is_escaped_text_with_one_mark(pre: str, term: str, post: str) -> None:
    hit = search([chat_of("c1", pre + term + post)], term)[0]
    out = hit.snippet.html()
    assert out.count("<mark>") == 1 and out.count("</mark>") == 1
    rest = out.replace("<mark>", "").replace("</mark>", "")
    assert "<" not in rest and ">" not in rest  # every other angle bracket is escaped
    assert html.unescape(rest) == hit.snippet.text


def test_hostile_text_stays_text() -> None:
    hit = search([chat_of("c1", "<img src=x onerror=alert(1)> find <b>me</b>")], "find")[0]
    assert hit.snippet.html() == (
        "&lt;img src=x onerror=alert(1)&gt; <mark>find</mark> &lt;b&gt;me&lt;/b&gt;"
    )


def test_snippet_is_one_short_line_around_the_match() -> None:
    words = " ".join(f"w{i}" for i in range(400))
    text = words + "\n\n  the NEEDLE\nhere  " + words
    snip = search([chat_of("c1", text)], "needle")[0].snippet
    assert snip.match == "NEEDLE"
    assert "\n" not in snip.text and "  " not in snip.text
    assert snip.before.startswith("…") and snip.after.endswith("…")
    assert snip.before.endswith("the ") and snip.after.startswith(" here")
    assert len(snip.text) <= 160
    assert not snip.before[1:].startswith(" ") and snip.before[1] == "w"  # cut at a space


def test_short_terms_search_nothing() -> None:
    chats = [chat_of("c1", "a b c")]
    assert search(chats, "a") == [] and search(chats, " a ") == [] and search(chats, "") == []
    assert [h.chat_id for h in search(chats, "a b")] == ["c1"]


def test_which_message_and_ranking() -> None:
    chats = [
        chat_of("old", "nothing", "the word here", title="other", updated=1),
        chat_of("new", "word first", "and word", title="other", updated=3),
        chat_of("titled", "a word", title="Word games", updated=2),
        chat_of("none", "nope", updated=4),
    ]
    hits = search(chats, "WORD")
    assert [h.chat_id for h in hits] == ["titled", "new", "old"]
    assert [(h.message_id, h.role) for h in hits] == [
        ("m0", "user"),
        ("m0", "user"),
        ("m1", "assistant"),
    ]


def test_a_chat_is_found_by_its_name_alone() -> None:
    """A renamed chat whose messages lack the term: found, its name the snippet (no
    message to scroll to); where a message has it too, the message is the hit."""
    chats = [
        chat_of("renamed", "how much do I owe?", title="Tax return 2024", updated=1),
        chat_of("both", "my tax question", title="Tax", updated=2),
        chat_of("neither", "hello", title="Greetings", updated=3),
    ]
    hits = search(chats, "TAX")
    assert [(h.chat_id, h.message_id, h.role, h.in_title) for h in hits] == [
        ("both", "m0", "user", True),
        ("renamed", "", "title", True),
    ]
    assert hits[1].snippet.html() == "<mark>Tax</mark> return 2024"
    assert search(chats, "Straße") == []
    assert search([chat_of("de", "x", title="Die Straße")], "STRASSE")[0].snippet.match == "Straße"


def test_a_conversation_is_searched_on_its_selected_path_only() -> None:
    conv = Conversation("c1", "t")
    q = conv.add_user("question one")
    a = conv.start_answer(q.id)
    conv.finish(a.id, "first answer: apples", "completed")
    b = conv.regenerate(a.id)
    conv.finish(b.id, "second answer: pears", "completed")
    text = ChatText.of(conv)
    assert text.ids == (q.id, b.id)
    assert search([text], "pears")[0].message_id == b.id
    assert search([text], "apples") == []


def conversation(turns: list[tuple[str, str]], pick_first: bool) -> Conversation:
    conv = Conversation("c1", "a title")
    for question, answer in turns:
        q = conv.add_user(question)
        a = conv.start_answer(q.id)
        conv.finish(a.id, answer, "completed")
        if pick_first:  # a second version, then back to the first: the path is the first
            b = conv.regenerate(a.id)
            conv.finish(b.id, answer + " (again)", "completed")
            conv.select(a.id)
    return conv


@given(st.lists(st.tuples(TEXT, TEXT), max_size=5), st.booleans())
def test_a_stored_record_reads_back_as_the_chats_text(
    turns: list[tuple[str, str]], pick_first: bool
) -> None:
    conv = conversation(turns, pick_first)
    record = search_record(conv)
    back = ChatText.from_record(conv.id, conv.title, conv.updated, record)
    assert back == ChatText.of(conv)
    # encoded in steps, it is the JSON of its shape, exactly
    messages = [[m.id, m.role, m.text] for m in conv.path() if m.text]
    assert json.loads(record) == {"v": 1, "updated": conv.updated, "messages": messages}
    assert record == json.dumps(json.loads(record))
    steps, yields = search_record_steps(conv, every=1), 0
    while True:
        try:
            next(steps)
            yields += 1
        except StopIteration as done:
            assert done.value == record
            break
    assert yields == len(messages)  # a step per message


def test_a_record_that_does_not_fit_its_row_is_not_used() -> None:
    conv = conversation([("what is a kaleidoscope", "mirrors and beads")], False)
    good = search_record(conv)
    use = ChatText.from_record
    # the title comes from the row: a rename writes no record
    renamed = use(conv.id, "Renamed", conv.updated, good)
    assert renamed is not None and renamed.title == "Renamed"
    assert renamed.folded == ChatText.of(conv).folded
    # older than the row (a later save whose record did not land): the body is read instead
    assert use(conv.id, conv.title, conv.updated + 1, good) is None
    doc = json.loads(good)
    for broken in (
        "",  # none stored
        good[:-3],  # cut short
        "[" * 100_000,  # nested past the recursion limit
        json.dumps({**doc, "v": 99}),  # another version's shape
        json.dumps({**doc, "messages": {"m1": "x"}}),
        json.dumps({**doc, "messages": [["m1", "user"]]}),
        json.dumps({**doc, "messages": [["m1", "user", 7]]}),
        json.dumps([doc]),
    ):
        assert use(conv.id, conv.title, conv.updated, broken) is None, broken[:60]


def test_steps_yield_between_chats_and_end_with_all_hits() -> None:
    chats = [
        chat_of(f"c{i}", "x" * 100 + (" term" if i % 3 == 0 else ""), updated=i) for i in range(30)
    ]
    steps = search_steps(chats, "term", slice_chars=250)
    yields = []
    while True:
        try:
            yields.append(next(steps))
        except StopIteration as done:
            final = done.value
            break
    assert len(yields) == 10  # every third chat (3 x ~105 characters >= 250)
    assert [h.chat_id for h in final] == [f"c{i}" for i in range(27, -1, -3)]
    assert all(len(a) <= len(b) for a, b in itertools.pairwise(yields))


def test_count_label() -> None:
    assert count_label(1) == "1 chat"
    assert count_label(3) == "3 chats"
    assert count_label(0, searching=True) == "0 chats so far, searching…"


def _utf16_slice(text: str, lo: int, hi: int) -> str:
    return text.encode("utf-16-le")[2 * lo : 2 * hi].decode("utf-16-le")


@given(st.lists(TEXT, min_size=1, max_size=6), TERM, st.integers(0, 5), st.integers(0, 300))
def test_locate_gives_a_range_over_the_nodes_that_holds_the_term(
    nodes: list[str], term: str, where: int, cut: int
) -> None:
    """A term planted in text split over DOM nodes (the planted copy itself split too) is
    located at its first occurrence, with offsets a DOM Range takes (UTF-16 units)."""
    k = where % len(nodes)
    nodes[k] = nodes[k][:cut] + term + nodes[k][cut:]
    half = len(term) // 2  # the term across two nodes
    at = min(cut, len(nodes[k]) - len(term)) if cut < len(nodes[k]) else len(nodes[k])
    nodes[k : k + 1] = [nodes[k][: at + half], nodes[k][at + half :]]
    folded = fold_term(term)
    got = locate(nodes, folded)
    assert got is not None
    i, lo, j, hi = got
    assert i <= j
    if i == j:
        shown = _utf16_slice(nodes[i], lo, hi)
    else:
        first = _utf16_slice(nodes[i], lo, 10**9)
        shown = first + "".join(nodes[i + 1 : j]) + _utf16_slice(nodes[j], 0, hi)
    assert folded in fold(shown)
    # it starts at the first occurrence: its first character's folding covers the match's start
    joined = "".join(nodes)
    pos = fold(joined).find(folded)
    cp = sum(map(len, nodes[:i])) + len(_utf16_slice(nodes[i], 0, lo))
    assert len(fold(joined[:cp])) <= pos < len(fold(joined[: cp + 1]))


def test_locate_an_absent_term_and_astral_offsets() -> None:
    assert locate(["the ", "kal", "eidoscope"], "mirror") is None
    assert locate([], "ka") is None
    # an emoji before the term counts two UTF-16 units, as a DOM Range counts it
    assert locate(["\U0001f600 KALEIDO", "scope"], "kaleidoscope") == (0, 3, 1, 5)
    # "ß" folds to "ss": a term starting at its second "s" covers the whole "ß"
    assert locate(["Straße"], "se") == (0, 4, 0, 6)


@given(st.lists(st.integers(0, 300), max_size=40), st.integers(1, 200))
def test_read_batches_keep_the_order_and_the_size(sizes: list[int], limit: int) -> None:
    rows = [ChatSummary(f"c{i}", "", 0.0, n) for i, n in enumerate(sizes)]
    batches = read_batches(rows, limit)
    assert [r for b in batches for r in b] == rows
    for b in batches:
        assert b and (len(b) == 1 or sum(r.messages for r in b) <= limit)
    for a, b in itertools.pairwise(batches):  # a batch ends only when the next row overflows
        assert sum(r.messages for r in a) + b[0].messages > limit
