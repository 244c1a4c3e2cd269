"""Deterministic chats for the search bench and tests: conversations in the page's own JSON
(``Conversation.to_json``), each answer ~6 KB of markdown.

The text is not lorem ipsum from a few dozen words: an index over a small vocabulary flatters
itself. Words come from a vocabulary of 40,000 made-up words drawn with Zipf's law (a few very
common, most rare, as in English), with identifiers, numbers and hex ids mixed in the way code
answers have them, so the distinct words grow with the text as they do in real chats (about
100k for the bench's 60 MB). A few needles are planted where the bench and tests can count on
them: ``needle_for(i)`` is a word that occurs in chat ``i`` only.
"""

from __future__ import annotations

import bisect
import itertools
import random
from typing import Any

__all__ = ["chat", "chats", "needle_for"]

SYLLABLES = tuple(
    [
        "ka",
        "ri",
        "to",
        "mo",
        "na",
        "se",
        "lu",
        "vi",
        "pe",
        "da",
        "fo",
        "ge",
        "ha",
        "ji",
        "ku",
        "le",
        "mi",
        "no",
        "pu",
        "ra",
        "si",
        "te",
        "vu",
        "wa",
        "yo",
        "ze",
        "an",
        "ber",
        "cor",
        "dis",
        "en",
        "for",
        "gan",
        "hil",
        "ing",
        "ion",
        "lor",
        "men",
        "ner",
        "or",
        "par",
        "quin",
        "ros",
        "str",
        "tan",
        "ure",
        "ver",
    ]
)
VOCAB = 40_000
ANSWER_CHARS = 6_000


def _vocabulary(seed: int = 7) -> list[str]:
    rnd = random.Random(seed)
    words: set[str] = set()
    out: list[str] = []
    while len(out) < VOCAB:
        w = "".join(rnd.choice(SYLLABLES) for _ in range(rnd.choice((1, 2, 2, 3, 3, 3, 4))))
        if w not in words:
            words.add(w)
            out.append(w)
    return out


_WORDS = _vocabulary()
# Zipf's law: the word of rank r drawn in proportion to 1/r.
_CUM = list(itertools.accumulate(1.0 / (r + 1) for r in range(VOCAB)))


def _word(rnd: random.Random) -> str:
    x = rnd.random() * _CUM[-1]
    w = _WORDS[bisect.bisect_left(_CUM, x)]
    roll = rnd.random()
    if roll < 0.01:
        return f"{w}_{rnd.randrange(10_000)}"  # an identifier
    if roll < 0.02:
        return str(rnd.randrange(100_000))
    if roll < 0.025:
        return f"0x{rnd.getrandbits(24):06x}"
    if roll < 0.06:
        return w.capitalize()
    return w


def _sentence(rnd: random.Random) -> str:
    words = [_word(rnd) for _ in range(rnd.randint(6, 18))]
    words[0] = words[0].capitalize()
    return " ".join(words) + rnd.choice((".", ".", ".", "?", "!", ":"))


def answer(rnd: random.Random, size: int = ANSWER_CHARS) -> str:
    """One long markdown answer: headings, paragraphs, lists, a code block now and then."""
    out: list[str] = []
    n = 0
    while n < size:
        kind = rnd.random()
        if kind < 0.1:
            block = "## " + " ".join(_word(rnd) for _ in range(rnd.randint(2, 5)))
        elif kind < 0.3:
            block = "\n".join(f"- {_sentence(rnd)}" for _ in range(rnd.randint(2, 5)))
        elif kind < 0.4:
            lines = [
                f"{_word(rnd)}_{_word(rnd)} = {_word(rnd)}({rnd.randrange(100)})"
                for _ in range(rnd.randint(2, 8))
            ]
            block = "```python\n" + "\n".join(lines) + "\n```"
        else:
            block = " ".join(_sentence(rnd) for _ in range(rnd.randint(2, 6)))
        out.append(block)
        n += len(block) + 2
    return "\n\n".join(out)


def needle_for(i: int) -> str:
    """A word found in chat ``i`` only (made of letters no vocabulary word uses together)."""
    return f"zqx{i:04d}needle"


def chat(i: int, answers: int = 20, size: int = ANSWER_CHARS, now: float = 1.7e9) -> Any:
    """Chat ``i`` as ``Conversation.to_json`` gives it: ``answers`` question/answer pairs, the
    needle in one answer's middle, ``updated`` older for higher ``i`` (chat 0 is newest)."""
    rnd = random.Random(1000 + i)
    messages: list[dict[str, Any]] = []
    parent = None
    at = now - 3600 * i
    for k in range(answers):
        q = {
            "id": f"m{2 * k + 1}",
            "role": "user",
            "text": _sentence(rnd),
            "parent": parent,
            "created": at + k,
        }
        text = answer(rnd, size)
        if k == answers // 2:
            cut = text.find(" ", len(text) // 2)
            text = f"{text[:cut]} {needle_for(i)}{text[cut:]}"
        a = {
            "id": f"m{2 * k + 2}",
            "role": "assistant",
            "text": text,
            "parent": q["id"],
            "created": at + k + 0.5,
            "state": "completed",
            "detail": "",
            "format": "openai",
            "usage": None,
            "pieces": 1,
            "speed": None,
        }
        messages += [q, a]
        parent = a["id"]
    return {
        "schema": "pysse.conversation",
        "version": 1,
        "id": f"bench{i:04d}",
        "title": f"Chat {i}: " + messages[0]["text"][:40],
        "renamed": False,
        "created": at,
        "updated": at + answers,
        "messages": messages,
        "selected": {("" if m["parent"] is None else m["parent"]): m["id"] for m in messages},
    }


def chats(n: int, answers: int = 20, size: int = ANSWER_CHARS) -> list[Any]:
    return [chat(i, answers, size) for i in range(n)]
