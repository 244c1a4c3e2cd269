"""Math in answers: ``$…$``, ``$$…$$``, ``\\(…\\)``, ``\\[…\\]`` and amsmath environments,
parsed by mdit-py-plugins and turned into MathML by latex2mathml, in pure Python.

Why it is built this way:

* **The LaTeX is model output**, so latex2mathml's result is not inserted as it comes: its
  string form un-escapes text (``\\text{<img onerror=…>}`` becomes a real ``<img>`` inside an
  ``<mtext>``, an HTML integration point) and it copies ``\\href``, ``\\style``, ``\\class`` and
  ``\\color`` arguments into attributes. We take its element tree instead and write it out
  ourselves: allow-listed MathML elements and attributes only, attribute values from a
  small alphabet, every text node escaped. Nothing from the source can become active HTML,
  a link, a style or a request.
* **Bounded work**: a formula longer than ``MAX_TEX`` characters or nested deeper than
  ``MAX_DEPTH`` is shown as its source, and conversion errors (incomplete LaTeX while an
  answer streams, unsupported commands) also show the source. Results are cached, so the
  streaming tail, re-rendered every frame, converts each formula once.
* **Currency is not math** (Pandoc's rule): an inline ``$`` opens math only if a non-space
  follows it, closes only if a non-space precedes it and no digit follows it; so ``$5 and
  $10``, ``**$750**`` and ``$5-$10`` stay text.
* **latex2mathml may be a lazy resource** (``lazy.py``: ``("math", "latex2mathml")``) that
  has not arrived: a formula is then shown as its source, as on a conversion error, and not
  cached; asking for it requests it, and the streaming renderer keeps the blocks with math
  unsettled until it arrives (``blocks/waits.py``).
* **Block math never reaches past a blank line**: an opening ``$$``, ``\\[`` or
  ``\\begin{env}`` line looks for its end only up to the next blank line, and one that is not
  closed by then is plain text up to it. So whether a block is math is decided by the lines
  up to that blank line, never by lines after it: a settled block never changes, and the
  streaming renderer's final state equals a one-shot render.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from markdown_it import MarkdownIt
from markdown_it.rules_inline.state_inline import StateInline

from . import lazy

if TYPE_CHECKING:  # latex2mathml's trees; xml.etree is imported only when math is rendered
    from xml.etree.ElementTree import Element

__all__ = ["BLOCK_OPEN", "MATH_TOKENS", "MAX_DEPTH", "MAX_TEX", "math_plugin", "tex_to_html"]

MAX_TEX = 1000  # characters of LaTeX in one formula (~15 ms in CPython, ~2-3x in Pyodide)
MAX_DEPTH = 24  # nesting of {…}, \left…\right and \begin…\end

# MathML Core's presentation elements, minus anything that can load (mglyph), act (maction),
# or hold HTML (annotation-xml). An element outside the list keeps its children as an mrow.
ELEMENTS = frozenset(
    [
        "math",
        "mrow",
        "mi",
        "mn",
        "mo",
        "ms",
        "mtext",
        "mspace",
        "msub",
        "msup",
        "msubsup",
        "munder",
        "mover",
        "munderover",
        "mfrac",
        "msqrt",
        "mroot",
        "mstyle",
        "mpadded",
        "mphantom",
        "menclose",
        "mtable",
        "mtr",
        "mtd",
        "mlabeledtr",
        "mmultiscripts",
        "mprescripts",
        "none",
        "merror",
        "semantics",
        "annotation",
    ]
)
ATTRIBUTES = frozenset(
    [
        "display",
        "displaystyle",
        "scriptlevel",
        "mathvariant",
        "stretchy",
        "fence",
        "separator",
        "form",
        "lspace",
        "rspace",
        "width",
        "height",
        "depth",
        "voffset",
        "columnalign",
        "rowalign",
        "columnspacing",
        "rowspacing",
        "columnlines",
        "rowlines",
        "frame",
        "framespacing",
        "notation",
        "accent",
        "accentunder",
        "linethickness",
        "minsize",
        "maxsize",
        "movablelimits",
        "symmetric",
        "largeop",
        "align",
        "columnspan",
        "rowspan",
    ]
)
_VALUE = re.compile(r"[A-Za-z0-9 .,%#:+\-]{0,64}")
_ENTITY = re.compile(r"&#x([0-9A-Fa-f]{1,6});")
_TOKEN = re.compile(r"\\\\|\\[{}]|\\left\b|\\right\b|\\begin\b|\\end\b|[{}]")


def _depth(tex: str) -> int:
    """How deeply ``tex`` nests groups (a bound check, not a parser)."""
    depth = deepest = 0
    for m in _TOKEN.finditer(tex):
        tok = m.group()
        if tok in ("{", "\\left", "\\begin"):
            depth += 1
            deepest = max(deepest, depth)
        elif tok in ("}", "\\right", "\\end"):
            depth -= 1
    return deepest


def _text(value: str | None) -> str:
    """A text node: latex2mathml writes some characters as ``&#x…;`` references in the text
    itself; decode those, then escape everything."""
    if not value:
        return ""
    return html.escape(_ENTITY.sub(lambda m: _char(m.group(1)), value), quote=False)


def _char(hex_digits: str) -> str:
    code = int(hex_digits, 16)
    return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"


def _write(el: Element, out: list[str]) -> None:
    tag = el.tag if el.tag in ELEMENTS and el.tag != "math" else "mrow"
    attrs = "".join(
        f' {k}="{html.escape(v)}"'
        for k, v in sorted(el.attrib.items())
        if k in ATTRIBUTES and _VALUE.fullmatch(v)
    )
    out.append(f"<{tag}{attrs}>{_text(el.text)}")
    for child in el:
        _write(child, out)
        out.append(_text(child.tail))
    out.append(f"</{tag}>")


def tex_to_html(tex: str, display: bool) -> str:
    """One formula as safe HTML: MathML (with the source as its TeX annotation), or the
    source itself, marked, when it is too big or cannot be converted, or while latex2mathml
    has not arrived (then requested, and not cached)."""
    if not lazy.REGISTRY.want(lazy.MATH_RESOURCE):
        return _source(tex.strip(), "not loaded yet")
    return _converted(tex, display)


def _source(tex: str, why: str) -> str:
    return f'<code class="math-source" title="math {why}">{html.escape(tex)}</code>'


@lru_cache(maxsize=1024)
def _converted(tex: str, display: bool) -> str:
    tex = tex.strip()
    why = ""
    if len(tex) > MAX_TEX:
        why = f"longer than {MAX_TEX} characters"
    elif _depth(tex) > MAX_DEPTH:
        why = f"nested deeper than {MAX_DEPTH}"
    if not why:
        try:
            _unzip_latex2mathml()
            from latex2mathml.converter import convert_to_element

            root = convert_to_element(tex, display="block" if display else "inline")
        except Exception as exc:  # invalid or incomplete LaTeX, unsupported commands
            why = f"not rendered ({type(exc).__name__})"
    if why:
        return _source(tex, why)
    out: list[str] = []
    for child in root:
        _write(child, out)
    mode = "block" if display else "inline"
    return (
        f'<math display="{mode}"><semantics>{"".join(out)}'
        f'<annotation encoding="application/x-tex">{html.escape(tex, quote=False)}'
        "</annotation></semantics></math>"
    )


# -- markdown-it rules ----------------------------------------------------------------------

Rule = Callable[..., bool]
_ENVS = (
    "equation|multline|gather|align|alignat|flalign|matrix|pmatrix|bmatrix|Bmatrix|vmatrix|"
    "Vmatrix|eqnarray"
)
# The block tokens with formulas; inline math is in an ``inline`` token's content, after a
# ``$`` or ``\\(`` (the only inline openers: ``blocks/waits.py`` looks for those).
MATH_TOKENS = ("math_block", "math_block_label", "amsmath")
BLOCK_OPEN = re.compile(r"(?:\$\$|\\\[|\\begin\{(?:" + _ENVS + r")\*?\})")


@lru_cache(maxsize=1)
def _unzip_latex2mathml() -> None:
    """latex2mathml reads its symbol table with ``open()`` from beside its own file. The page
    imports packages from a zip (the ``.pyc`` boot: ``buildtools``), where that file cannot
    be opened, and every formula failed. So, once, the package is unpacked to the filesystem
    ahead of the zip on ``sys.path``; installed normally, nothing is done."""
    import importlib
    import importlib.util
    import sys
    import tempfile
    import zipfile

    if "latex2mathml.symbols_parser" in sys.modules:
        return
    spec = importlib.util.find_spec("latex2mathml")
    archive = getattr(spec.loader, "archive", None) if spec is not None else None
    if not archive:  # a normal install: its files are files
        return
    target = tempfile.mkdtemp(prefix="pysse-latex2mathml-")
    with zipfile.ZipFile(archive) as z:
        z.extractall(target, [n for n in z.namelist() if n.startswith("latex2mathml/")])
    for name in [m for m in sys.modules if m == "latex2mathml" or m.startswith("latex2mathml.")]:
        del sys.modules[name]
    sys.path.insert(0, target)  # a new path entry: no finder has cached it yet


def _line(state: Any, line: int) -> str:
    return str(state.src[state.bMarks[line] + state.tShift[line] : state.eMarks[line]])


def _blank_after(state: Any, start: int, end: int) -> int:
    stop = start + 1
    while stop < end and not state.isEmpty(stop):
        stop += 1
    return stop


def _bounded(rules: list[Rule]) -> Rule:
    """Block math that looks for its end only up to the next blank line; an opener that is not
    closed by then is text up to it (see the module docstring: settled blocks never change)."""

    def block(state: Any, start: int, end: int, silent: bool) -> bool:
        if state.sCount[start] - state.blkIndent >= 4:  # indented code
            return False
        if not BLOCK_OPEN.match(_line(state, start)):
            return False
        if silent:  # an opener line always starts a block: math, or text up to a blank line
            return True
        stop = _blank_after(state, start, end)
        first = len(state.tokens)
        if any(rule(state, start, stop, False) for rule in rules):
            # texmath's bracket rule leaves its token without a source map; the streaming
            # renderer places blocks by their lines, so every block token gets one.
            for tok in state.tokens[first:]:
                if tok.map is None:
                    tok.map = [start, state.line]
            return True
        token = state.push("math_unclosed", "p", 0)
        token.block = True
        token.content = state.getLines(start, stop, state.blkIndent, False).rstrip("\n")
        token.map = [start, stop]
        state.line = stop
        return True

    return block


def _paren_inline(state: StateInline, silent: bool) -> bool:
    """texmath's ``\\(…\\)`` rule (its regex, matched on the rest of the source, takes the
    nearest ``\\)`` after at least one character), without its cost: the regex searched to the
    end of the paragraph from every ``\\(``, so 20,000 characters of ``\\(`` took 1 s.
    Here the nearest closer after a position is remembered for the parse, and every opener
    before it shares that one search."""
    src, pos = state.src, state.pos
    if not src.startswith("\\(", pos):
        return False
    end = paren_closer(state, pos + 3)
    if end < 0:
        return False
    if not silent:
        token = state.push("math_inline", "math", 0)
        token.content = src[pos + 2 : end]
        token.markup = "\\("
    state.pos = end + 2
    return True


def paren_closer(state: StateInline, start: int) -> int:
    """The first ``\\)`` in ``state.src`` at or after ``start``, or -1."""
    known: tuple[int, int] | None = getattr(state, _PAREN, None)
    if known is not None:
        searched_from, found = known
        if searched_from <= start and (found < 0 or start <= found):
            return found
    found = state.src.find("\\)", start)
    setattr(state, _PAREN, (start, found))
    return found


_PAREN = "_pysse_paren_closer"


def math_plugin(md: MarkdownIt) -> None:
    """Math syntax and MathML rendering on a markdown-it instance (mdit-py-plugins' rules)."""
    from mdit_py_plugins.amsmath import amsmath_block
    from mdit_py_plugins.dollarmath.index import math_block_dollar, math_inline_dollar
    from mdit_py_plugins.texmath.index import make_block_func
    from mdit_py_plugins.texmath.index import rules as texmath_rules

    brackets = texmath_rules["brackets"]
    bracket_block = next(r for r in brackets["block"] if r["name"] == "math_block")
    inline = md.inline.ruler
    # Pandoc's currency-safe rule: no space inside the dollars, no digit after the closing one.
    inline.before("escape", "math_inline", math_inline_dollar(False, False, True))
    inline.before("escape", "math_inline_paren", _paren_inline)
    md.block.ruler.before(
        "fence",
        "math_block",
        _bounded(
            [
                math_block_dollar(False, None, False),
                make_block_func(bracket_block),
                amsmath_block,
            ]
        ),
        {"alt": ["paragraph", "reference", "blockquote", "list"]},
    )

    def inline_rule(display: bool) -> Any:
        def rule(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
            return (
                f'<span class="math" dir="ltr">{tex_to_html(tokens[idx].content, display)}</span>'
            )

        return rule

    def block_rule(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        html_ = tex_to_html(tokens[idx].content, True)  # focusable: it may scroll sideways
        return f'<div class="math block" dir="ltr" tabindex="0">{html_}</div>\n'

    def unclosed(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        text = html.escape(tokens[idx].content, quote=False)
        return f'<p class="math-unclosed" dir="ltr">{text}</p>\n'

    md.add_render_rule("math_inline", inline_rule(False))
    md.add_render_rule("math_inline_double", inline_rule(True))
    md.add_render_rule("math_block", block_rule)
    md.add_render_rule("amsmath", block_rule)
    md.add_render_rule("math_unclosed", unclosed)
