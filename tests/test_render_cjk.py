"""Chinese and Japanese answers (issue #42 part 4): emphasis next to full-width punctuation is
emphasis (``pysse/render/cjk.py``), and streaming such an answer never shows a character, or
a space, that the finished answer does not have in that place.

The conformance cases are the CJK-friendly project's own (``fixtures/cjk_friendly/``: its
markdown-it plugin's test inputs and the HTML its snapshot holds), so the port is checked
against the implementation it ports, not against what this port happens to output.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from dom_model import stream_into_dom
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from pysse.render import StreamingMarkdown, render
from pysse.render.cjk import install_cjk, is_cjk
from pysse.render.holdback import hold_back
from pysse.render.markdown import make_markdown
from pysse.render.paragraph import MIN_PARAGRAPH, find_cut

FIXTURES = Path(__file__).parent / "fixtures"
CJK_ANSWER = (FIXTURES / "cjk_answer.md").read_text()
CONFORMANCE = sorted((FIXTURES / "cjk_friendly").glob("*.html"))


def _plain() -> MarkdownIt:
    return MarkdownIt("js-default")


def _cjk() -> MarkdownIt:
    md = MarkdownIt("js-default")
    install_cjk(md)
    return md


@pytest.mark.parametrize("case", CONFORMANCE, ids=lambda p: p.stem)
def test_the_port_renders_the_cjk_friendly_projects_cases_as_its_plugin_does(case: Path) -> None:
    assert _cjk().render(case.with_suffix(".md").read_text()) == case.read_text()


@pytest.mark.parametrize(
    ("src", "html"),
    [
        ("**“强调”**后", "<strong>“强调”</strong>后"),
        ("*注意*：", "<em>注意</em>："),
        ("这是**“强调”**后", "这是<strong>“强调”</strong>后"),
        ("**注意：**后文", "<strong>注意：</strong>后文"),
        ("これは**「重要」**です。", "これは<strong>「重要」</strong>です。"),
        ("*“斜体”*，", "<em>“斜体”</em>，"),
        ("~~删除：~~后", "<s>删除：</s>后"),
        ("한국어**“강조”**입니다", "한국어<strong>“강조”</strong>입니다"),
    ],
)
def test_emphasis_next_to_full_width_punctuation(src: str, html: str) -> None:
    """Each was literal asterisks under CommonMark's rule (but ``*注意*：``, which it already
    read right), and is emphasis in the page, streamed or not."""
    assert render(src) == f'<p dir="auto">{html}</p>\n'
    md = StreamingMarkdown()
    for ch in src:
        md.feed(ch)
    md.finish()
    assert md.html == render(src)


@pytest.mark.parametrize(
    "src",
    [
        "snake_case_名前_x",  # `_` inside a word stays text, CJK or not
        "中文_强调_后",
        "😀**x**😀",  # an emoji is not CJK
        "2*3*4 and a*b*c",
        "**“quoted”**after",  # no CJK: CommonMark's rule, literal
    ],
)
def test_what_is_not_cjk_keeps_commonmarks_reading(src: str) -> None:
    assert _cjk().render(src) == _plain().render(src)


LATIN = st.text(alphabet="ab *_~“”‘’.,:!?()\n-#>`é…", max_size=40)


@settings(max_examples=300, deadline=None)
@given(LATIN)
def test_property_text_without_cjk_parses_as_commonmark(src: str) -> None:
    """The rule changes only runs that touch a CJK character: any text without one renders
    byte for byte as plain markdown-it renders it."""
    assert _cjk().render(src) == _plain().render(src)


def test_which_characters_are_cjk() -> None:
    assert all(is_cjk(c) for c in "中あア한，。：「」（）！？、～々〃㋐⻲ｱ")
    assert not any(is_cjk(c) for c in "aé1“”‘’…-—😀🎉✅ \n")


# -- streaming --------------------------------------------------------------------------------


class _Text(HTMLParser):
    """An answer's text as a reader sees it: code blocks' labels and buttons left out."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.skip or tag == "button" or ("class", "code-lang") in attrs:
            self.skip += 1

    def handle_endtag(self, tag: str) -> None:
        if self.skip:
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.out.append(data)


def shown(html: str) -> str:
    """The text of ``html`` with markers (``*`` ``_`` ``~``, literal or not) left out and each run of
    whitespace one space: what must only ever grow, at its end, while an answer streams."""
    p = _Text()
    p.feed(html)
    p.close()
    text = re.sub(r"[*_~]", "", "".join(p.out))
    return re.sub(r"\s+", " ", text).strip()


def check_prefixes(src: str, cuts: list[int]) -> None:
    """Stream ``src`` in pieces of ``cuts`` characters through the model DOM (which checks
    that a settled node never changes): every frame's text is the start of the finished
    answer's, and the finished answer is the one-shot render."""
    final = shown(render(src))
    frames: list[str] = []

    def between(updates: int, md: object) -> None:
        frames.append(str(getattr(md, "html", "")))

    out = stream_into_dom(src, cuts, between=between)
    assert out.html == render(src)
    for html in [*frames, out.html]:
        text = shown(html)
        assert final.startswith(text), (text[-40:], final[len(text) - 40 : len(text) + 10])


@pytest.mark.parametrize("cuts", [[1], [2, 5], [7, 1, 3]], ids=["1", "2-5", "7-1-3"])
def test_every_prefix_of_a_cjk_answer_keeps_every_character(cuts: list[int]) -> None:
    """The answer has a long paragraph without spaces (cut into settled pieces at no space:
    ``paragraph.py``), emphasis next to full-width punctuation, a table, code and a mixed
    paragraph whose spaces around Latin words must neither vanish nor double."""
    check_prefixes(CJK_ANSWER, cuts)


def test_no_frame_of_the_cjk_answer_flashes_an_asterisk() -> None:
    """The finished answer has no literal ``*`` outside its code block; no frame shows one
    either: an opener between two CJK characters (no space before it, as Chinese is
    written) is closed by the hold-back as CommonMark's ``foo **bar`` would be."""
    assert "*" not in re.sub(r"(?s)<pre.*?</pre>", "", render(CJK_ANSWER))
    md = StreamingMarkdown()
    for i in range(0, len(CJK_ANSWER), 2):
        md.feed(CJK_ANSWER[i : i + 2])
        prose = re.sub(r"(?s)<pre.*?</pre>", "", md.html)
        assert "*" not in prose, prose[-80:]


def test_emphasis_settles_when_its_closer_arrives() -> None:
    """While ``**“强调”`` waits for its closer it is shown strong already (no asterisks
    flash); once ``**后`` arrives it is the strong of the one-shot render."""
    md = StreamingMarkdown()
    md.feed("这是**“强调”")
    assert "<strong>“强调”</strong>" in md.html and "*" not in md.html
    md.feed("*")  # half a closer: held, nothing inserted
    assert shown(md.html) == "这是“强调”"
    md.feed("*后文")
    md.finish()
    assert (
        md.html
        == render("这是**“强调”**后文")
        == '<p dir="auto">这是<strong>“强调”</strong>后文</p>\n'
    )


def test_a_long_cjk_paragraph_is_cut_exactly_between_two_cjk_characters() -> None:
    """Chinese has no spaces to cut a long paragraph at; a cut between two CJK characters is
    as exact (the pieces render as the whole does), so such a paragraph settles piece by piece
    instead of being cut provisionally, which shows open emphasis as asterisks."""
    md = make_markdown()
    text = next(p for p in CJK_ANSWER.split("\n\n") if len(p) > MIN_PARAGRAPH)
    assert " " not in text
    p = find_cut(md, {}, text, len(text))
    assert p > 0 and is_cjk(text[p - 1]) and is_cjk(text[p])
    assert md.renderInline(text[:p]) + md.renderInline(text[p:]) == md.renderInline(text)


def test_the_hold_back_closes_an_opener_next_to_cjk() -> None:
    assert hold_back("这是**“强调") == "这是**“强调**"
    assert hold_back("中文*注意") == "中文*注意*"
    assert hold_back("snake_case") == "snake_case"  # not an opener inside a word


FRAGMENTS = [
    "中文",
    "强调",
    "これは",
    "한국어",
    "“",
    "”",
    "「",
    "」",
    "：",
    "，",
    "。",
    "**",
    "*",
    "~~",
    "_",
    " ",
    "Python",
    " 3.12 ",
    "😀",
    "\n",
    "\n\n",
    "- ",
    "`代码`",
]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=30),
    st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=5),
)
def test_property_no_prefix_of_cjk_text_loses_a_character(
    parts: list[str], cuts: list[int]
) -> None:
    check_prefixes("".join(parts), cuts)


def test_a_list_marker_whose_item_is_only_a_marker_so_far_is_held() -> None:
    """Found by the property above: "- ~" with its "~" held showed "- " as the paragraph's
    text (an empty item cannot interrupt a paragraph), and a list once "~~" came."""
    check_prefixes("**中文\n- ~~", [1])
    check_prefixes("ab\n1. __x__", [1])
