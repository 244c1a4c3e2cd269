"""Waiting for lazy resources (``lazy.py``): a block that needs a lexer or latex2mathml that
has not arrived is not settled until it has (or failed), so that it is rendered once, as it
will stay, and the final HTML equals a one-shot render made with the same resources.

Meanwhile it is in its container's tail, re-rendered on each update like any unsettled
text: a fence shown plain, a formula as its source. Settling is in order, so what follows
it waits too (in the tail as well). The structure pass (``structure.py``) holds before it
renders anything when the parse it settles from has a closed fence whose lexer is pending,
or math (a math block token; ``$`` or ``\\(`` in inline content) while latex2mathml is
pending; the test is by tokens, so ``$`` in code does not count, while ``$5`` in text does:
that only delays settling, and requests math, which a page showing prices may never use).
A long paragraph is not cut while its text may hold math that is pending (``paragraphs.py``).

Only while the settler ``wait`` s: ``finish()`` renders everything at once with what is
here, a fence plain and a formula as its source if their resources are still missing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from markdown_it.common.utils import MD_WHITESPACE
from markdown_it.token import Token

from .. import lazy
from ..highlight import lexer_resource
from ..math import MATH_TOKENS
from .fences import fence_lang
from .state import Settler

__all__ = ["hold", "hold_text", "needed"]

# Where inline math may be (math.py's inline rules), a superset: ``\(``, or a ``$`` whose next
# ``$`` (the dollar rule takes the nearest one) follows it after a non-space and comes after a
# non-space, not before a digit (Pandoc's rule: ``$5 and $10`` and ``$5-$10`` stay text, and
# do not make the page fetch math). Spaces are markdown-it's (``isWhiteSpace``).
_SPACE = "".join(chr(c) for c in sorted(MD_WHITESPACE)) + "\u2000-\u200a"
_INK = f"[^{_SPACE}]"
INLINE_MATH = re.compile(rf"\${_INK}(?:[^$]*{_INK})?\$(?!\d)|\\\(")


def needed(toks: Iterable[Token]) -> set[lazy.Resource]:
    """The pending resources that rendering ``toks`` would use."""
    reg = lazy.REGISTRY
    out: set[lazy.Resource] = set()
    if not reg.lazy:
        return out
    math = reg.pending(lazy.MATH_RESOURCE)
    for tok in toks:
        if tok.type == "fence" and tok.meta.get("closed"):
            resource = lexer_resource(fence_lang(tok))
            if resource is not None and reg.pending(resource):
                out.add(resource)
        elif math and (
            tok.type in MATH_TOKENS or (tok.type == "inline" and INLINE_MATH.search(tok.content))
        ):
            out.add(lazy.MATH_RESOURCE)
    return out


def _still(need: set[lazy.Resource]) -> set[lazy.Resource]:
    """``need``, requested; what is still pending (a loader may deliver at once)."""
    for resource in need:
        lazy.REGISTRY.request(resource)
    return {r for r in need if lazy.REGISTRY.pending(r)}


def hold(s: Settler, toks: list[Token]) -> bool:
    """Whether the structure pass over ``toks`` must wait (what it waits for is in
    ``s.waiting``, requested)."""
    if not s.wait:
        return False
    s.waiting = _still(needed(toks))
    s.holding = bool(s.waiting)
    return s.holding


def hold_text(s: Settler, text: str) -> bool:
    """Whether an open paragraph's ``text`` must not be cut yet: it may hold math and
    latex2mathml is pending (requested; in ``s.tail_waiting``)."""
    reg = lazy.REGISTRY
    if not (s.wait and reg.lazy and reg.pending(lazy.MATH_RESOURCE)):
        return False
    if not INLINE_MATH.search(text):
        return False
    s.tail_waiting |= _still({lazy.MATH_RESOURCE})
    return bool(s.tail_waiting)
