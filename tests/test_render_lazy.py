"""render/lazy.py and the renderer waiting for lazy resources: a fence whose lexer has not
arrived is shown plain and kept unsettled until it arrives (then highlighted once, as
today), math likewise; ``update()`` after ``end()`` stays non-final while a resource is
pending and costs nothing meanwhile; ``finish()`` renders what is here. Through all of it
settled nodes never change (``dom_model.stream_into_dom`` checks every update) and the final
HTML equals a one-shot ``render()`` made with the same resources. A fake loader stands for
the page's (``pysse.browser.lazy_assets``); arrivals happen at chosen updates."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from dom_model import stream_into_dom
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pysse.render import StreamingMarkdown, lazy, render
from pysse.render import highlight as hl_mod
from pysse.render import math as math_mod

PY = (lazy.LEXER, "python")
JS = (lazy.LEXER, "javascript")
MATH = lazy.MATH_RESOURCE


class Loader:
    """The page's loader, faked: records requests; the test decides when things arrive."""

    def __init__(self, reg: lazy.Registry, resources: list[lazy.Resource]) -> None:
        self.reg = reg
        self.requests: list[lazy.Resource] = []
        reg.declare(resources, self)

    def __call__(self, resource: lazy.Resource) -> None:
        self.requests.append(resource)


@pytest.fixture
def reg(monkeypatch: pytest.MonkeyPatch) -> lazy.Registry:
    fresh = lazy.Registry()
    monkeypatch.setattr(lazy, "REGISTRY", fresh)
    hl_mod._done.clear()
    math_mod._converted.cache_clear()
    return fresh


def at(update: int, *events: tuple[str, lazy.Resource]) -> Callable[[int, Any], None]:
    """A ``between`` hook for stream_into_dom: the events happen before update ``update``."""

    def hook(n: int, md: Any) -> None:
        if n == update:
            for what, resource in events:
                if what == "arrive":
                    lazy.REGISTRY.arrived(resource)
                else:
                    lazy.REGISTRY.failed(resource, "test")

    return hook


# -- the registry ----------------------------------------------------------------------------


def test_by_default_everything_is_available() -> None:
    reg = lazy.Registry()
    assert not reg.lazy and reg.want(PY) and reg.want(MATH) and not reg.pending(PY)


def test_a_declared_resource_is_requested_once_and_arrives(reg: lazy.Registry) -> None:
    loader = Loader(reg, [PY, MATH])
    seen: list[lazy.Resource] = []
    unsubscribe = reg.subscribe(seen.append)
    assert reg.lazy and reg.pending(PY) and not reg.available(PY)
    with reg.recording() as missing:
        assert not reg.want(PY) and not reg.want(PY)
    assert loader.requests == [PY] and missing == {PY} and reg.requested(PY)
    v = reg.version
    reg.arrived(PY)
    assert reg.want(PY) and reg.version == v + 1 and seen == [PY]
    reg.failed(MATH, "HTTP 404")
    assert not reg.pending(MATH) and not reg.available(MATH) and reg.why(MATH) == "HTTP 404"
    assert seen == [PY, MATH] and loader.requests == [PY]  # failed: never fetched again
    unsubscribe()
    reg.arrived(MATH)
    assert seen == [PY, MATH] and reg.available(MATH)


def test_a_loader_may_deliver_at_once(reg: lazy.Registry) -> None:
    reg.declare([PY], reg.arrived)
    assert reg.want(PY) and not reg.lazy


def test_keys_round_trip() -> None:
    assert lazy.key(PY) == "lexer:python" and lazy.parse("lexer:python") == PY
    assert lazy.parse("math:latex2mathml") == MATH
    with pytest.raises(ValueError):
        lazy.parse("python")


# -- fences ------------------------------------------------------------------------------------

FENCE = "Intro.\n\n```python\ndef f(x):\n    return x * 2\n```\n\nAfter the fence.\n\nMore.\n"


def test_the_lexer_is_requested_when_the_fence_opens(reg: lazy.Registry) -> None:
    loader = Loader(reg, [PY])
    md = StreamingMarkdown()
    md.feed("Intro.\n\n```pyth")
    assert loader.requests == []  # the info string is not complete yet
    md.feed("on\ndef f")
    assert loader.requests == [PY]
    assert "incomplete" in md.html and "hl-" not in md.html


@pytest.mark.parametrize("cuts", [[1], [7, 3, 11], [1000]])
@pytest.mark.parametrize("frames", [False, True])
def test_lexer_arrives_before_the_fence_closes(
    reg: lazy.Registry, cuts: list[int], frames: bool
) -> None:
    Loader(reg, [PY])
    close = FENCE.index("```\n\nAfter")
    out = stream_into_dom(FENCE, cuts, frames=frames, between=_when_fed(close - 5, PY))
    assert out.html == render(FENCE) and "hl-" in out.html
    assert out.replaces == (0 if cuts == [1000] else 1)  # replaced once by its highlighted form


def _when_fed(chars: int, resource: lazy.Resource) -> Callable[[int, Any], None]:
    """Arrives once ``chars`` characters of the text were given to the renderer."""

    def hook(n: int, md: Any) -> None:
        if len(md.text) >= chars and lazy.REGISTRY.pending(resource):
            lazy.REGISTRY.arrived(resource)

    return hook


@pytest.mark.parametrize("frames", [False, True])
def test_lexer_arrives_after_the_fence_closed(reg: lazy.Registry, frames: bool) -> None:
    Loader(reg, [PY])
    seen: list[str] = []

    def hook(n: int, md: Any) -> None:
        if "More" in md.text and reg.pending(PY):
            seen.append(md.html)
            reg.arrived(PY)

    out = stream_into_dom(FENCE, [4], frames=frames, between=hook)
    (waiting,) = seen
    # still open (as while a fence is being highlighted), its code plain and whole, and what
    # follows it shown too (in the tail)
    assert "return x * 2\n</code>" in waiting and "hl-" not in waiting
    assert "After the fence." in waiting
    assert out.html == render(FENCE) and "hl-" in out.html and out.replaces == 1


def test_after_end_update_waits_for_the_lexer_at_no_cost(reg: lazy.Registry) -> None:
    Loader(reg, [PY])
    md = StreamingMarkdown()
    md.append(FENCE)
    md.end()
    first = md.update()
    assert not first.final and md.waiting == {PY} and not md.busy
    renders, tails = md.renders, first.tails
    for _ in range(5):
        again = md.update()
        assert not again.final and again.ops == [] and again.tails == tails
    assert md.renders == renders  # nothing parsed again while nothing arrived
    reg.arrived(PY)
    assert md.busy
    while not md.update().final:
        pass
    assert md.html == render(FENCE) and "hl-" in md.html and not md.lacking


def test_a_lexer_that_never_comes_ends_plain(reg: lazy.Registry) -> None:
    Loader(reg, [PY])
    out = stream_into_dom(FENCE, [3, 9], frames=True)
    assert out.waits > 0 and out.md.finished
    assert out.html == render(FENCE) and "hl-" not in out.html
    assert out.md.lacking == {PY}


def test_a_lexer_that_failed_is_not_waited_for(reg: lazy.Registry) -> None:
    Loader(reg, [PY])
    out = stream_into_dom(FENCE, [5], frames=True, between=at(3, ("fail", PY)))
    assert out.waits == 0 and out.html == render(FENCE) and "hl-" not in out.html


def test_a_fence_inside_a_settled_item_waits_too(reg: lazy.Registry) -> None:
    Loader(reg, [PY])
    text = "- one\n\n  ```python\n  x = 1\n  ```\n- two\n- three\n\nEnd.\n"
    md = StreamingMarkdown()
    md.feed(text)  # all at once: the first item is complete, and so is its fence
    assert md.waiting == {PY} and "hl-" not in md.html
    reg.arrived(PY)
    md.end()
    while not md.update().final:
        pass
    assert md.html == render(text) and "hl-" in md.html


# -- math --------------------------------------------------------------------------------------

MATHS = "Energy: $E = mc^2$ holds.\n\n$$\n\\frac{a}{b}\n$$\n\nThen text.\n\nMore text.\n"


def test_math_is_requested_at_its_first_delimiter_and_shown_as_source(
    reg: lazy.Registry,
) -> None:
    loader = Loader(reg, [MATH])
    md = StreamingMarkdown()
    md.feed("Energy: $E = mc^2$ holds.\n\n")
    assert loader.requests == [MATH] and md.waiting == {MATH}
    assert 'class="math-source"' in md.html and "<math" not in md.html


@pytest.mark.parametrize("when", ["during", "after-end", "never", "failed"])
def test_math_waits_like_a_lexer(reg: lazy.Registry, when: str) -> None:
    Loader(reg, [MATH])

    def hook(n: int, md: Any) -> None:
        ready = (when == "during" and "Then" in md.text) or (
            when == "after-end" and md._ending and md.waiting
        )
        if ready and reg.pending(MATH):
            reg.arrived(MATH)
        if when == "failed" and n == 2:
            reg.failed(MATH, "test")

    out = stream_into_dom(MATHS, [6, 2], frames=True, between=hook)
    assert out.html == render(MATHS)
    assert (out.html.count("<math") == 2) == (when in ("during", "after-end"))


def test_a_long_paragraph_with_math_is_not_cut_while_math_is_pending(
    reg: lazy.Registry,
) -> None:
    Loader(reg, [MATH])
    text = "Start $x^2$ " + "words and more words " * 60 + "end.\n\nNext.\n"
    md = StreamingMarkdown()
    for i in range(0, len(text), 9):
        md.feed(text[i : i + 9])
    assert md.waiting == {MATH} and md.html.count("math-source") == 1
    reg.arrived(MATH)
    md.finish()
    assert md.html == render(text) and md.html.count("<math") == 1


def test_dollars_in_code_do_not_wait_for_math(reg: lazy.Registry) -> None:
    loader = Loader(reg, [MATH])
    text = "```text\necho $HOME $PATH\n```\n\nDone.\n"
    md = StreamingMarkdown()
    md.feed(text)
    md.end()
    assert md.update().final and loader.requests == [] and md.html == render(text)


# -- everything at once, any order ---------------------------------------------------------------

BLOCKS = [
    "Plain paragraph with *emphasis*.\n\n",
    "```python\nprint('hi')\nx = [1, 2]\n```\n\n",
    "```javascript\nconst a = 1;\n```\n\n",
    "Inline $a^2 + b^2$ math.\n\n",
    "$$\nx = \\sqrt{2}\n$$\n\n",
    "- item\n\n  ```python\n  y = 2\n  ```\n- next $z$\n\n",
    "> quote with $q$\n> and more\n\n",
    "| a | b |\n|---|---|\n| $1$ | 2 |\n\n",
]
EVENT = st.one_of(
    st.tuples(st.just("arrive"), st.integers(0, 40)),
    st.tuples(st.just("fail"), st.integers(0, 40)),
    st.just(("never", 0)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    blocks=st.lists(st.sampled_from(BLOCKS), min_size=1, max_size=6),
    cuts=st.lists(st.integers(1, 40), min_size=1, max_size=4),
    events=st.tuples(EVENT, EVENT, EVENT),
    frames=st.booleans(),
)
def test_any_arrival_order_keeps_settled_nodes_and_ends_as_a_one_shot_render(
    blocks: list[str], cuts: list[int], events: tuple[Any, ...], frames: bool
) -> None:
    reg = lazy.Registry()
    saved = lazy.REGISTRY
    lazy.REGISTRY = reg
    try:
        hl_mod._done.clear()
        math_mod._converted.cache_clear()
        resources = [PY, JS, MATH]
        Loader(reg, resources)
        schedule = dict(zip(resources, events, strict=True))

        def hook(n: int, md: Any) -> None:
            for resource, (what, when) in schedule.items():
                if what != "never" and n >= when and reg.pending(resource):
                    if what == "arrive":
                        reg.arrived(resource)
                    else:
                        reg.failed(resource, "test")

        text = "".join(blocks)
        out = stream_into_dom(text, cuts, frames=frames, between=hook)
        assert out.html == render(text)  # with what arrived by the end
        assert out.md.lacking <= {r for r in resources if not reg.available(r)}
    finally:
        lazy.REGISTRY = saved


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="$$\\\\()ab1 \t\n\u00a0\u2003²*`_-", max_size=40))
def test_the_inline_math_test_never_misses_math(text: str) -> None:
    # waits.INLINE_MATH decides whether a block waits for latex2mathml: it must find every
    # inline formula markdown-it's rules find (it may find more: a false alarm only waits).
    from pysse.render.blocks.waits import INLINE_MATH
    from pysse.render.markdown import make_markdown

    for tok in make_markdown().parse(text):
        kids = [c.type for c in tok.children or []]
        if {"math_inline", "math_inline_double"} & set(kids):
            assert INLINE_MATH.search(tok.content), (text, kids)


@pytest.mark.parametrize("text", ["It costs $5 and $10.", "From $5-$10.", "**$750** a month"])
def test_prices_do_not_fetch_math(reg: lazy.Registry, text: str) -> None:
    loader = Loader(reg, [MATH])
    md = StreamingMarkdown()
    md.feed(text + "\n\nNext.\n")
    md.end()
    assert md.update().final and loader.requests == []
