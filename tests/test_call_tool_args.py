"""Tool-call arguments shown while they stream (``pysse.call.tool_args``): every prefix of any
JSON text is shown without raising, a partial value is a JSON value (its incomplete tail held
back), and the whole arguments show exactly as ``json.dumps(indent=2)``."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from pysse.call.tool_args import PARTIAL_MAX, pretty_arguments

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(VALUES, st.booleans())
@settings(max_examples=150, deadline=None)
def test_every_prefix_shows_json_and_the_whole_shows_pretty(value: object, compact: bool) -> None:
    text = json.dumps(value, separators=(",", ":") if compact else None)
    for n in range(1, len(text)):
        shown, complete = pretty_arguments(text[:n])
        if shown and not complete:
            json.loads(shown)  # a partial view is itself JSON, never a broken fragment
    assert pretty_arguments(text) == (json.dumps(value, indent=2, ensure_ascii=False), True)


@given(st.lists(st.integers() | st.floats(allow_nan=False) | st.booleans() | st.none(), max_size=6))
def test_a_partial_view_never_shows_a_number_that_may_still_grow(items: list[object]) -> None:
    text = json.dumps(items)
    for n in range(1, len(text)):
        shown, _ = pretty_arguments(text[:n])
        got = json.loads(shown) if shown else []
        assert got == items[: len(got)], (text[:n], shown)  # each shown item is final


def test_a_streaming_object_shows_its_settled_members() -> None:
    assert pretty_arguments('{"days": 1') == ("{}", False)  # it may be 14
    assert pretty_arguments('{"days": 14,') == ('{\n  "days": 14\n}', False)
    assert pretty_arguments('{"city": "Lis') == ('{\n  "city": "Lis"\n}', False)
    assert pretty_arguments('{"city": "Lisbon", "da') == ('{\n  "city": "Lisbon"\n}', False)
    assert pretty_arguments('{"ok": tru') == ("{}", False)
    assert pretty_arguments('{"path": "C:\\') == ('{\n  "path": "C:"\n}', False)
    assert pretty_arguments("") == ("", False)


def test_a_huge_partial_is_not_reparsed_per_frame() -> None:
    text = '{"blob": "' + "x" * (PARTIAL_MAX + 1)
    assert pretty_arguments(text) == (f"… {len(text):,} characters so far", False)


def test_hostile_nesting_is_refused_not_recursed() -> None:
    assert pretty_arguments("[" * 5000) == ("", False)
    assert pretty_arguments("[" * 100 + "1")[1] is False
