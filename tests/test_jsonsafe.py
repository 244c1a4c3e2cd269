"""jsonsafe.py: nesting is bounded before parsing, with the work counted (tokens scanned),
not timed; brackets inside strings do not count; ordinary JSON parses exactly as json.loads
parses it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pysse import jsonsafe
from pysse.jsonsafe import (
    MAX_DEPTH,
    JSONTooDeepError,
    loads_bounded,
    loads_bounded_steps,
    nesting_depth,
)

TOKENS = jsonsafe._TOKENS

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)


@given(json_values)
def test_ordinary_json_parses_as_json_loads_does(value: object) -> None:
    text = json.dumps(value)
    assert loads_bounded(text) == json.loads(text)
    assert loads_bounded(text.encode("utf-16")) == json.loads(text)


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("1", 0),
        ("[]", 1),
        ('{"a": [1, {"b": []}]}', 4),
        ('["[[[[", "{{{{"]', 1),
        ('["\\"[[[["]', 1),  # an escaped quote does not end the string
        ('"\\\\"', 0),
    ],
)
def test_nesting_depth_ignores_brackets_in_strings(text: str, depth: int) -> None:
    assert nesting_depth(text) == depth


class CountingTokens:
    """jsonsafe's token regex, counting the tokens its scan looks at (the work, in Python)."""

    def __init__(self) -> None:
        self.seen = 0

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        for m in TOKENS.finditer(text):
            self.seen += 1
            yield m


@pytest.fixture
def tokens(monkeypatch: pytest.MonkeyPatch) -> CountingTokens:
    counting = CountingTokens()
    monkeypatch.setattr(jsonsafe, "_TOKENS", counting)
    return counting


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"a":' * 50_000 + "1" + "}" * 50_000,
        '{"choices":[{"delta":{"content":"x"},"pad":' + "[" * 6000 + "]" * 6000 + "}]}",
        "[" * (MAX_DEPTH + 1),
    ],
)
def test_too_deep_is_refused_before_parsing(
    text: str, tokens: CountingTokens, monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(*args: object, **kw: object) -> None:
        raise AssertionError("json.loads was called on a text that is too deep")

    monkeypatch.setattr(jsonsafe.json, "loads", never)
    with pytest.raises(JSONTooDeepError) as info:
        loads_bounded(text)
    assert isinstance(info.value, ValueError) and info.value.max_depth == MAX_DEPTH
    # Counted, not timed: the scan stops once past the limit, whatever the text's length
    # (a key and a bracket per level at the most).
    assert tokens.seen <= 2 * (MAX_DEPTH + 1), tokens.seen


def test_exactly_max_depth_parses_and_many_strings_stay_linear(tokens: CountingTokens) -> None:
    assert loads_bounded("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    tokens.seen = 0
    hostile = '["' + '\\"[' * 200_000 + '"]'  # many brackets, all inside one string
    assert loads_bounded(hostile) == [json.loads(hostile)[0]]
    assert tokens.seen == 3  # the string is one token, skipped whole by the regex (in C)


def test_in_steps_a_long_text_pauses_and_parses_the_same() -> None:
    text = json.dumps([{"text": "[x](y) " * 50, "n": [i, {"k": [i]}]} for i in range(400)])
    steps = loads_bounded_steps(text, chunk=4096)
    pauses = 0
    while True:
        try:
            next(steps)
            pauses += 1
        except StopIteration as done:
            value = done.value
            break
    assert value == json.loads(text)
    assert pauses >= len(text) // 4096 // 2  # about a pause per chunk of the depth scan
    deep = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    with pytest.raises(JSONTooDeepError):
        list(loads_bounded_steps(deep, chunk=8))
