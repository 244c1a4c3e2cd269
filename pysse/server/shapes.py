"""Long answers of one shape each (a long table, list, quote, code block, paragraph, or a mix):
the shapes LLMs produce that once made streaming markdown quadratic (issue 15).

The demo model streams them (``/demo table``, ``/demo list`` ...), the tests feed every
prefix of small ones through the streaming renderer, and ``build.py bench --only markdown``
times them at n and 2n. ``n`` counts units (rows, items, lines, sentences); the text grows
linearly with it, and each shape includes the awkward cases of its kind (table rows shorter
and longer than the header, an escaped pipe, list marker changes, lazy quote continuation
lines, nested fences).
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["SHAPES", "shape"]


def code(n: int) -> str:
    lines = "".join(
        f"def f_{i}(x: int) -> int:\n    return x * {i}  # <line> {i} & 'quote'\n"
        for i in range(n // 2)
    )
    return f"Here is the code:\n\n```python\n{lines}```\n\nThat is all.\n"


def table(n: int) -> str:
    rows = []
    for i in range(n):
        if i % 17 == 5:
            rows.append(f"| {i} | short |")  # fewer cells than the header
        elif i % 19 == 7:
            rows.append(f"| {i} | a | b | c | extra | cells |")  # more cells
        else:
            link = f"[link](https://e.example/{i})"
            rows.append(f"| {i} | **name {i}** | `{i * i}` | a \\| b {link} |")
    body = "\n".join(rows)
    return f"The results:\n\n| # | name | value | note |\n|---|:---|---:|---|\n{body}\n\nDone.\n"


def flat_list(n: int) -> str:
    items = "".join(f"- item {i} with *emphasis* and `code {i}`\n" for i in range(n))
    return f"A list:\n\n{items}\nAfter the list.\n"


def nested_list(n: int) -> str:
    parts = []
    for i in range(max(1, n // 4)):
        parts.append(
            f"- top {i}\n  - sub {i}.1 with **bold**\n    1. deep {i}\n    2. deeper {i}\n"
            f"  - sub {i}.2\n"
        )
    return "Nested:\n\n" + "".join(parts) + "\nEnd.\n"


def loose_list(n: int) -> str:
    parts = []
    for i in range(max(1, n // 3)):
        parts.append(
            f"{i + 1}. Item {i} opens here.\n\n   A second paragraph of item {i}, with "
            f"*emphasis*.\n\n   - a tight sub-item\n   - another\n\n"
        )
    return "Steps:\n\n" + "".join(parts) + "Finished.\n"


def blockquote(n: int) -> str:
    lines = []
    for i in range(n):
        if i % 11 == 10:
            lines.append(">")  # a paragraph break inside the quote
        elif i % 5 == 4:
            lines.append(f"lazy continuation {i} without a marker")
        else:
            lines.append(f"> quoted line {i} with **bold** and `code`")
    return "Someone wrote:\n\n" + "\n".join(lines) + "\n\nMy reply.\n"


def paragraph(n: int) -> str:
    sentences = "".join(
        f"Sentence {i} has **bold {i}**, a [link](https://e.example/{i}) and `code`. "
        for i in range(n)
    )
    return sentences.rstrip() + "\n"


def mixed(n: int) -> str:
    parts = ["# A mixed answer\n\n"]
    for i in range(max(1, n // 8)):
        parts.append(
            f"## Section {i}\n\nParagraph {i} has **bold**, *italic*, `code` and a "
            f"[link](https://example.com/{i}).\n\n- point {i}.a\n- point {i}.b\n  - nested {i}\n\n"
            f"> quote {i}\n\n| n | square |\n|---|---|\n| {i} | {i * i} |\n\n"
            f"```python\ndef f_{i}(x):\n    return x * {i}\n```\n\n"
        )
    return "".join(parts)


SHAPES: dict[str, Callable[[int], str]] = {
    "code": code,
    "table": table,
    "flat_list": flat_list,
    "nested_list": nested_list,
    "loose_list": loose_list,
    "blockquote": blockquote,
    "paragraph": paragraph,
    "mixed": mixed,
}


def shape(name: str, n: int) -> str:
    """The ``name`` shape with ``n`` units (rows, items, lines, sentences)."""
    try:
        return SHAPES[name](n)
    except KeyError:
        raise ValueError(f"unknown shape {name!r}: use one of {', '.join(SHAPES)}") from None
