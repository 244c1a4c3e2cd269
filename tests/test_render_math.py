"""render/math.py: math as sanitized MathML, currency as text, bounded work, and block math
that keeps the streaming renderer's promises (settled blocks never change, the final state
equals a one-shot render)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it.rules_inline.state_inline import StateInline

from pysse.render import StreamingMarkdown, hold_back, render
from pysse.render import math as math_module
from pysse.render.markdown import make_markdown
from pysse.render.math import ATTRIBUTES, ELEMENTS, MAX_DEPTH, MAX_TEX, tex_to_html

MATH_ANSWER = (Path(__file__).parent / "fixtures" / "answer_math.md").read_text()


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.in_math = 0
        self.text: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in ("annotation", "code", "pre", "button"):
            self.skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("annotation", "code", "pre", "button"):
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.text.append(data)


def parse(html: str) -> Tags:
    p = Tags()
    p.feed(html)
    return p


def math_count(html: str) -> int:
    return sum(1 for tag, _ in parse(html).tags if tag == "math")


@pytest.mark.parametrize(
    ("src", "count"),
    [
        ("Euler: $e^{i\\pi} + 1 = 0$.", 1),
        ("$$\nx^2\n$$", 1),
        ("Text\n$$\nx^2\n$$\nmore", 1),  # a display block may interrupt a paragraph
        ("$$x$$", 1),
        ("inline double $$x$$ here", 1),
        ("\\(a+b\\) and \\[c\\]", 1),  # \[ is a block opener only at the start of a line
        ("\\[\n\\frac{1}{2}\n\\]", 1),
        ("\\begin{align}\na &= b \\\\\nc &= d\n\\end{align}", 1),
        ("- [ ] check $x = 2$", 1),
        ("> quoted $y$", 1),
    ],
)
def test_math_becomes_mathml(src: str, count: int) -> None:
    assert math_count(render(src)) == count


@pytest.mark.parametrize(
    "src",
    [
        "It costs $5 and $10.",
        "**$750**",
        "$5-$10 per item",
        "from $5/$10",
        "I paid $5, you paid $6",
        "$ 5 $",  # a space inside the dollars
        "US$20 and $30",
        "\\$x\\$",  # escaped dollars
        "`$x$` in code",
        "```\n$$\nx\n$$\n```",
    ],
)
def test_currency_and_code_stay_text(src: str) -> None:
    html = render(src)
    assert math_count(html) == 0, html
    assert "$" in "".join(parse(html).text) or "<code" in html


def test_thin_space_is_not_eaten_by_markdown_escapes() -> None:
    html = render("$a\\,b$")
    assert '<mspace width="0.167em"></mspace>' in html


HOSTILE = [
    "$\\href{javascript:alert(1)}{click}$",
    "$\\style{position:fixed;top:0}{x}$",
    "$\\class{evil}{x}$",
    "$\\color{white}{x}$",
    "$\\text{<img src=x onerror=alert(1)>}$",
    "$\\text{<script>alert(1)</script>}$",
    "$\\mathrm{</math><script>alert(1)</script>}$",
    "$\\text{&#x3C;script&#x3E;alert(1)&#x3C;/script&#x3E;}$",
    "$\\text{</mtext><mglyph src=x>}$",
    "$$\n\\text{<style>*{display:none}</style>}\n$$",
    "\\(\\href{javascript:x}{y}\\)",
    "\\begin{align}\n\\text{<iframe src=https://evil.invalid>} &= 1\n\\end{align}",
    "$\\hspace{javascript:alert(1)}x$",
    "$\\operatorname{<b onclick=x>}$",
]


@pytest.mark.parametrize("src", HOSTILE)
def test_hostile_latex_yields_only_inert_mathml(src: str) -> None:
    streamed = StreamingMarkdown()
    streamed.feed(src + "\n\n")
    for html in (render(src), streamed.html):
        p = parse(html)
        inside = False
        for tag, attrs in p.tags:
            assert tag not in ("script", "style", "img", "iframe", "mglyph", "a", "b"), html
            inside = inside or tag == "math"
            if tag in ELEMENTS:
                assert set(attrs) <= ATTRIBUTES | {"encoding"}, (tag, attrs)
            for name, value in attrs.items():
                assert not name.startswith("on") and name not in ("href", "src", "style")
                assert "javascript" not in (value or "").lower()


def test_too_long_or_too_deep_shows_the_source() -> None:
    long = "x+" * (MAX_TEX // 2 + 1)
    assert tex_to_html(long, False).startswith('<code class="math-source"')
    deep = "{" * (MAX_DEPTH + 1) + "x" + "}" * (MAX_DEPTH + 1)
    assert "nested deeper" in tex_to_html(deep, False)
    ok = "{" * MAX_DEPTH + "x" + "}" * MAX_DEPTH
    assert tex_to_html(ok, False).startswith("<math")


@pytest.mark.parametrize(
    "tex",
    [
        "\\sqrt" * 300 + "x",  # nesting without braces, within the size cap
        "x^" * 300 + "x",
        "\\frac" * 150 + "ab" * 150,
        "\\left(" * 24 + "x" + "\\right)" * 24,
        "\\begin{matrix}" * 12 + "x" + "\\end{matrix}" * 12,
        "\\frac{1}{",  # incomplete, as while streaming
        "x_",
        "\\unknown{x}",
    ],
)
def test_hard_input_never_raises(tex: str) -> None:
    html = tex_to_html(tex, True)
    assert html.startswith(("<math", '<code class="math-source"'))


def test_each_formula_is_converted_once() -> None:
    converted = math_module._converted  # tex_to_html's cache (a formula converted)
    converted.cache_clear()
    md = StreamingMarkdown()
    text = "A paragraph with $a^2$ and $b^2$ that keeps growing " + "word " * 200
    for i in range(0, len(text), 5):
        md.feed(text[i : i + 5])
    md.finish()
    info = converted.cache_info()
    assert info.misses <= 4, info  # "a^2" and "b^2" (and what hold-back showed meanwhile)
    assert info.hits > 50, info


def test_unclosed_block_math_is_text_up_to_the_blank_line() -> None:
    html = render("$$\nx = 1\n# not a heading yet\n\n# a heading")
    assert '<p class="math-unclosed" dir="ltr">$$\nx = 1\n# not a heading yet</p>' in html
    assert '<h1 dir="auto">a heading</h1>' in html
    assert math_count(html) == 0


def test_task_lists_have_disabled_labelled_checkboxes() -> None:
    html = render("- [x] done\n- [ ] todo *soon*")
    assert html.count('disabled="disabled"') == 2
    assert '<label><input class="task-list-item-checkbox" checked="checked"' in html
    assert "<em>soon</em></label>" in html
    assert render("- [ ] a") == render("- [ ] a")  # no generated ids


def test_code_blocks_have_a_language_label_and_a_copy_button_above_the_code() -> None:
    html = render('```python title="x"\nx = 1\n```')
    head = re.search(r'<div class="code-head">(.*?)</div>', html)
    assert head and '<span class="code-lang">python</span>' in head.group(1)
    assert 'class="copy"' in head.group(1)
    assert html.index("code-head") < html.index('<pre tabindex="0">')
    assert '<span class="code-lang"></span>' in render("```\nplain\n```")
    hostile = render('```"><img src=x onerror=alert(1)>\nx\n```')
    assert "<img" not in hostile


@pytest.mark.parametrize("size", [1, 3, 17, 200])
def test_streaming_math_settles_once_and_ends_as_a_one_shot_render(size: int) -> None:
    from dom_model import stream_into_dom

    streamed = stream_into_dom(MATH_ANSWER, [size])  # raises if a settled node ever changed
    assert streamed.html == render(MATH_ANSWER)
    assert streamed.md.text == MATH_ANSWER


def test_no_prefix_shows_raw_math_delimiters() -> None:
    final = "".join(parse(render(MATH_ANSWER)).text)
    md = StreamingMarkdown()
    for end in range(1, len(MATH_ANSWER) + 1):
        md.feed(MATH_ANSWER[end - 1])
        shown = "".join(parse(md.html).text)
        assert shown == "".join(parse(render(hold_back(MATH_ANSWER[:end]))).text)
        for raw in ("$$", "\\[", "\\(", "\\begin", "\\frac", "^{"):
            assert raw not in shown or raw in final, (end, raw, shown[-60:])
        # a formula being written never shows its LaTeX: only money has a "$" then
        assert not re.search(r"\$[a-z\\]", shown), (end, shown[-60:])


def test_every_math_block_token_knows_its_lines() -> None:
    # the streaming renderer places blocks by their source lines: texmath's bracket rule left
    # its token without a map, and the block vanished from a streamed answer
    from pysse.render.markdown import make_markdown

    for src in ("\\[\nx\n\\]\n", "$$\nx\n$$\n", "\\begin{align}\nx\n\\end{align}\n"):
        tok = make_markdown().parse(src)[0]
        assert tok.map is not None and tok.map[0] == 0, (src, tok.type, tok.map)


def test_math_works_when_latex2mathml_is_imported_from_a_zip(tmp_path: Path) -> None:
    # the page boots from .pyc zips: latex2mathml's open() of its symbol table beside its
    # own file failed there, and every formula was shown as source
    import subprocess
    import sys
    import zipfile

    import latex2mathml

    pkg = Path(latex2mathml.__file__).parent
    archive = tmp_path / "lib.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for f in pkg.rglob("*"):
            if f.is_file() and "__pycache__" not in f.parts:
                z.write(f, f"latex2mathml/{f.relative_to(pkg)}")
    code = (
        f"import sys; sys.path.insert(0, {str(archive)!r})\n"
        "from pysse.render.math import tex_to_html\n"
        "html = tex_to_html('x^2', False)\n"
        "import latex2mathml\n"
        "print(html.startswith('<math'), '.zip' in latex2mathml.__file__)\n"
    )
    root = str(Path(__file__).resolve().parents[1])
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=True
    )
    assert out.stdout.split() == ["True", "False"], out.stdout + out.stderr


def _texmath_paren_markdown() -> Any:
    """Our markdown with mdit-py-plugins' own ``\\(…\\)`` rule back in place."""
    from mdit_py_plugins.texmath.index import make_inline_func
    from mdit_py_plugins.texmath.index import rules as texmath_rules

    md = make_markdown()
    md.inline.ruler.at(
        "math_inline_paren", make_inline_func(texmath_rules["brackets"]["inline"][0])
    )
    return md


TEXMATH_MD = _texmath_paren_markdown()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["\\(", "\\)", "\\", "(", ")", "a", " ", "\n", "$", "[", "]"])).map(
        "".join
    )
)
def test_paren_rule_is_texmaths(text: str) -> None:
    assert render(text) == TEXMATH_MD.render(text)


class _CountingSource(str):
    """A source that counts searches for ``\\)``."""

    searches = 0

    def find(self, sub: str, *args: Any) -> int:  # type: ignore[override]
        if sub == "\\)":
            type(self).searches += 1
        return super().find(sub, *args)


@pytest.mark.parametrize("text", ["\\(" * 2000, "\\(a" * 1000 + "\\)", "x \\(" * 500])
def test_paren_rule_searches_once_for_a_run_of_openers(text: str) -> None:
    """texmath's regex searched to the end from every ``\\(``: quadratic (20,000 characters
    of ``\\(`` took 1 s). Ours remembers the nearest closer: the run shares one search."""
    md = make_markdown()
    _CountingSource.searches = 0
    state = StateInline(_CountingSource(text), md, {}, [])
    md.inline.tokenize(state)
    assert 1 <= _CountingSource.searches <= 2
    assert render(text) == TEXMATH_MD.render(text)
