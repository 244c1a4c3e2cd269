"""Syntax highlighting for closed code fences (pygments): bounded, and in slices.

The model picks a fence's language, so highlighting must never freeze the page: several
pygments lexers backtrack catastrophically on short inputs (``zeek`` on ``0`` x 700 + ``x``
takes ~20 s; ``mcfunction`` 400 bytes, a minute), and no budget checked *between* tokens can
interrupt one slow regular-expression match. So:

* **an allow-list** of common languages whose lexers were measured safe (``bench/
  fuzz_markdown.py`` runs every lexer alias pygments knows against backtracking-prone bodies;
  these stay linear), looked up by alias; anything else is shown as plain escaped code;
* **a size cap** (``MAX_CODE``) and a deterministic **token budget** (``MAX_TOKENS``): past
  either the fence is plain, so a one-shot render and the streaming renderer agree;
* **a time limit** (``MAX_SECONDS``) between tokens, a last resort that should never fire;
* **slices**: :class:`HighlightJob` pulls pygments' lazy token stream (and its line-by-line
  HTML formatter) only until a work budget is spent (``budget.py``: units per character of
  code), so the streaming renderer spreads one fence's highlighting over several frames
  instead of blocking one.

Without pygments, code is shown escaped and unhighlighted. So it is while the language's
lexer is a lazy resource that has not arrived (``lazy.py``: ``("lexer", ALIAS)``): asking
for it requests it, and the streaming renderer keeps the fence unsettled until it arrives
(``blocks/waits.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from . import lazy
from .budget import HIGHLIGHT_WEIGHT, Budget

__all__ = [
    "ALLOWED",
    "LINES_PER_BLOCK",
    "HighlightJob",
    "Highlighter",
    "in_blocks",
    "lexer_for",
    "lexer_resource",
    "make_highlighter",
]

Highlighter = Callable[[str, str, str], str]  # (code, lang, attrs) -> HTML, "" = not highlighted

MAX_CODE = 64 * 1024  # characters
LINES_PER_BLOCK = 32  # a long fence's highlighted lines, in blocks (``in_blocks``)
MAX_TOKENS = 40_000
MAX_SECONDS = 2.0
_KEEP = 16  # finished jobs remembered for the fence renderer
_done: dict[tuple[str, str], str] = {}

# Info-string word (lower case) -> pygments lexer alias. Measured linear on hostile bodies.
ALLOWED = {
    **dict.fromkeys(["python", "py", "python3", "py3"], "python"),
    **dict.fromkeys(["pycon", "pytb"], "pycon"),
    **dict.fromkeys(["javascript", "js", "mjs", "cjs", "node"], "javascript"),
    **dict.fromkeys(["typescript", "ts"], "typescript"),
    **dict.fromkeys(["jsx"], "jsx"),
    **dict.fromkeys(["tsx"], "tsx"),
    **dict.fromkeys(["json", "jsonc", "json5", "jsonl"], "json"),
    **dict.fromkeys(["bash", "sh", "shell", "zsh", "ksh"], "bash"),
    **dict.fromkeys(["console", "shell-session", "shellsession", "terminal"], "console"),
    **dict.fromkeys(["powershell", "ps1", "pwsh"], "powershell"),
    **dict.fromkeys(["html", "htm", "xhtml"], "html"),
    **dict.fromkeys(["xml", "svg", "xsd", "plist"], "xml"),
    **dict.fromkeys(["css"], "css"),
    **dict.fromkeys(["scss"], "scss"),
    **dict.fromkeys(["sql", "postgresql", "postgres", "mysql", "sqlite"], "sql"),
    **dict.fromkeys(["c", "h"], "c"),
    **dict.fromkeys(["cpp", "c++", "cc", "cxx", "hpp"], "cpp"),
    **dict.fromkeys(["csharp", "cs", "c#"], "csharp"),
    **dict.fromkeys(["java"], "java"),
    **dict.fromkeys(["kotlin", "kt", "kts"], "kotlin"),
    **dict.fromkeys(["scala"], "scala"),
    **dict.fromkeys(["go", "golang"], "go"),
    **dict.fromkeys(["rust", "rs"], "rust"),
    **dict.fromkeys(["swift"], "swift"),
    **dict.fromkeys(["objective-c", "objc"], "objective-c"),
    **dict.fromkeys(["ruby", "rb"], "ruby"),
    **dict.fromkeys(["php"], "php"),
    **dict.fromkeys(["perl", "pl"], "perl"),
    **dict.fromkeys(["lua"], "lua"),
    **dict.fromkeys(["r"], "r"),
    **dict.fromkeys(["dart"], "dart"),
    **dict.fromkeys(["haskell", "hs"], "haskell"),
    **dict.fromkeys(["elixir", "ex", "exs"], "elixir"),
    **dict.fromkeys(["yaml", "yml"], "yaml"),
    **dict.fromkeys(["toml"], "toml"),
    **dict.fromkeys(["ini", "cfg", "dosini"], "ini"),
    **dict.fromkeys(["diff", "patch", "udiff"], "diff"),
    **dict.fromkeys(["markdown", "md"], "markdown"),
    **dict.fromkeys(["dockerfile", "docker"], "docker"),
    **dict.fromkeys(["makefile", "make", "mf"], "make"),
    **dict.fromkeys(["graphql", "gql"], "graphql"),
    **dict.fromkeys(["nginx"], "nginx"),
    **dict.fromkeys(["text", "txt", "plaintext", "plain"], "text"),
}


# Options a lexer is made with beyond the defaults. Pygments' markdown lexer highlights a
# nested fence with the lexer its info string names, any of pygments' ~500: that would
# bypass the allow-list (```` ```zeek ```` inside a ``markdown`` fence froze the page).
OPTIONS: dict[str, dict[str, Any]] = {"markdown": {"handlecodeblocks": False}}


def lexer_resource(info: str) -> lazy.Resource | None:
    """The lazy resource holding the lexer for a fence's info string, if it is allowed."""
    word = info.split()[0].lower() if info.split() else ""
    alias = ALLOWED.get(word)
    return None if alias is None else (lazy.LEXER, alias)


def lexer_for(info: str) -> Any | None:
    """The pygments lexer for a fence's info string, if its language is allowed and its
    lexer is here (``lazy.py``: if it is not, it is requested, and None for now)."""
    resource = lexer_resource(info)
    if resource is None or not lazy.REGISTRY.want(resource):
        return None
    alias = resource[1]
    try:
        from pygments.lexers import get_lexer_by_name
        from pygments.util import ClassNotFound
    except ImportError:  # pragma: no cover - pygments is an optional dependency
        return None
    try:
        return get_lexer_by_name(alias, stripnl=False, ensurenl=False, **OPTIONS.get(alias, {}))
    except (ClassNotFound, ImportError):  # every alias exists in pygments 2.21; ImportError:
        return None  # a page whose lexer module is missing (a bundle that was not listed)


class _OverBudget(Exception):
    pass


class HighlightJob:
    """Highlight ``code`` as ``info``'s language, a slice at a time.

    ``step(budget)`` works until the budget (``budget.Budget``, in units:
    ``HIGHLIGHT_WEIGHT`` per character of code) is spent and returns True when done;
    ``html`` is then the highlighted HTML, or "" when the code is shown plain (no allowed
    lexer, too long, over budget, pygments missing). ``run()`` does it all at once.
    """

    def __init__(self, code: str, info: str) -> None:
        self.html = ""
        self.done = False
        self.spent = 0.0
        self.chars = 0  # characters of code highlighted so far
        self._parts: list[str] = []
        self._tokens = 0
        self._lines: Iterator[tuple[int, str]] | None = None
        self.key = (code, info)
        if self.key in _done:
            self.html = _done[self.key]
            self.done = True
            return
        lexer = lexer_for(info) if len(code) <= MAX_CODE else None
        if lexer is None:
            self.done = True
            return
        from pygments.formatters import HtmlFormatter

        formatter: Any = HtmlFormatter(nowrap=True, classprefix="hl-")
        # With nowrap, HtmlFormatter.format() writes exactly what this line generator
        # yields; driving it ourselves lets us stop between lines.
        self._lines = formatter._format_lines(self._count(lexer.get_tokens(code)))

    def _count(self, tokens: Iterator[tuple[Any, str]]) -> Iterator[tuple[Any, str]]:
        for tok in tokens:
            self._tokens += 1
            self.chars += len(tok[1])
            if self._tokens > MAX_TOKENS:
                raise _OverBudget
            yield tok

    def step(self, budget: Budget | None = None) -> bool:
        if self.done:
            return True
        assert self._lines is not None
        t0 = time.perf_counter()
        start = self.chars
        room = None if budget is None else budget.room()
        if room == 0:
            return False
        try:
            for n, (_, piece) in enumerate(self._lines):
                self._parts.append(piece)
                used = (self.chars - start) * HIGHLIGHT_WEIGHT
                if room is not None and used >= room:
                    self._spend(budget, start, t0)
                    return False
                if n % 16 == 15 and self.spent + time.perf_counter() - t0 > MAX_SECONDS:
                    raise _OverBudget
        except (_OverBudget, ImportError):  # ImportError: a lexer importing a module at
            self._parts = []  # lexing time that the page does not have: shown plain
        self._spend(budget, start, t0)
        self.html = in_blocks(self._parts)
        self._parts = []
        self._lines = None
        self.done = True
        _done[self.key] = self.html
        while len(_done) > _KEEP:
            del _done[next(iter(_done))]
        return True

    def _spend(self, budget: Budget | None, start: int, t0: float) -> None:
        self.spent += time.perf_counter() - t0
        if budget is not None:
            budget.spend((self.chars - start) * HIGHLIGHT_WEIGHT)

    def run(self) -> str:
        self.step()
        return self.html


def in_blocks(lines: list[str]) -> str:
    """A long fence's highlighted lines in blocks of ``LINES_PER_BLOCK``
    (``<span class="lines">``, each with its lines' line feeds; pygments closes its spans at
    every line's end), as the open fence's lines were while it streamed. The page lays each
    block out apart (``display: block``), and swaps a fence's plain lines for their
    highlighted form a block a frame (``dom_writer.js``) instead of restyling and laying out
    every line of it in one task; a one-shot render has the same blocks, so the final HTML
    is the same. A short fence is one run of lines, as before."""
    if len(lines) <= LINES_PER_BLOCK:
        return "".join(lines)
    return "".join(
        '<span class="lines">' + "".join(lines[i : i + LINES_PER_BLOCK]) + "</span>"
        for i in range(0, len(lines), LINES_PER_BLOCK)
    )


def make_highlighter(enabled: bool) -> Highlighter | None:
    """The highlight callback for markdown-it, or None when disabled or pygments is missing."""
    if not enabled:
        return None
    try:
        import pygments  # noqa: F401
    except ImportError:  # pragma: no cover - pygments is an optional dependency
        return None

    def hl(code: str, lang: str, attrs: str) -> str:
        # A job the streaming renderer ran in slices has left its result in ``_done``.
        return HighlightJob(code, lang).run()

    return hl
