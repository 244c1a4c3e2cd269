"""Syntax highlighting for closed code fences (pygments), as a markdown-it ``highlight``
callback. Optional: without pygments, code is shown escaped and unhighlighted."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Highlighter", "make_highlighter"]

Highlighter = Callable[[str, str, str], str]  # (code, lang, attrs) -> HTML, "" = not highlighted


def make_highlighter(enabled: bool) -> Highlighter | None:
    """The highlight callback, or None when disabled or pygments is missing."""
    if not enabled:
        return None
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import get_lexer_by_name
        from pygments.util import ClassNotFound
    except ImportError:  # pragma: no cover - pygments is an optional dependency
        return None
    formatter = HtmlFormatter(nowrap=True, classprefix="hl-")

    def hl(code: str, lang: str, attrs: str) -> str:
        if not lang:
            return ""
        try:
            lexer = get_lexer_by_name(lang.split()[0], stripnl=False, ensurenl=False)
        except ClassNotFound:
            return ""
        return str(highlight(code, lexer, formatter))

    return hl
