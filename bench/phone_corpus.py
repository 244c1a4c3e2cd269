"""What the phone bench streams and opens (issue #28): a long mixed answer like the ones models
write (headings, an 80-row table, nested lists, a 140-function code block, task items, math,
paragraphs with emoji and CJK), and a chat of 100 long answers as an export file, the way a
user would import it."""

from __future__ import annotations

from pysse.chats.conversation import Conversation
from pysse.chats.files import export_json

__all__ = ["chat_answer", "chat_file", "mixed_answer"]


def _paragraph(i: int) -> str:
    return (
        f"Paragraph {i} explains the idea step by step, with **bold words**, *a little "
        f"emphasis*, `inline_code({i})` and a [link to the docs](https://docs.example/{i}). "
        f"It mentions a price of $5 and a formula $a_{i} = b^2 + {i}$ in passing, a few "
        f"emoji 🙂🚀 and some CJK text 東京で会いましょう — then it goes on for a while so "
        f"that the line wraps a few times on a phone, as real answers do, item {i}.\n\n"
    )


def _nested_list(i: int) -> str:
    return (
        f"- first point of section {i}, with `code`\n"
        f"  - a detail under it\n"
        f"    1. a numbered step {i}.1\n"
        f"    2. a numbered step {i}.2 with **bold**\n"
        f"  - another detail\n"
        f"- second point of section {i}\n\n"
    )


def _tasks(i: int) -> str:
    return f"- [x] done item {i}\n- [ ] open item {i} with $x_{i}$\n- [ ] another open item\n\n"


def _math(i: int) -> str:
    return f"$$\n\\sum_{{k=1}}^{{{i + 2}}} k^2 = \\frac{{n(n+1)(2n+1)}}{{6}}\n$$\n\n"


def _table(rows: int) -> str:
    lines = ["| # | name | value | note |", "|---|:---|---:|---|"]
    for r in range(rows):
        lines.append(
            f"| {r} | **item {r}** | `{r * r}` | note with a [link](https://e.example/{r}) |"
        )
    return "\n".join(lines) + "\n\n"


def _code(functions: int) -> str:
    body = "".join(
        f"def handler_{f}(event: dict, retries: int = 3) -> str:\n"
        f'    """Handle event {f}: retry up to three times."""\n'
        f"    return f\"{{event['name']}}-{f}\" if retries > 0 else 'gave up'  # {f}\n\n"
        for f in range(functions)
    )
    return f"```python\n{body}```\n\n"


def _section(i: int) -> str:
    return (
        f"## Section {i}\n\n{_paragraph(i)}{_nested_list(i)}{_paragraph(i + 1000)}"
        f"{_tasks(i) if i % 2 else _math(i)}"
    )


def mixed_answer(target: int = 56_000) -> str:
    """~``target`` characters: sections of paragraphs, nested lists, task items and math,
    with an 80-row table a fifth of the way in and a 140-function code block in the middle."""
    parts = ["# A long mixed answer\n\n", _paragraph(0)]
    i = 0
    table_at, code_at = target // 5, target // 2
    table_done = code_done = False
    while sum(map(len, parts)) < target:
        i += 1
        parts.append(_section(i))
        size = sum(map(len, parts))
        if not table_done and size >= table_at:
            parts.append("### The numbers\n\n" + _table(80))
            table_done = True
        if not code_done and size >= code_at:
            parts.append("### The code\n\n" + _code(140))
            code_done = True
    parts.append("That is the whole answer.\n")
    return "".join(parts)


def chat_answer(n: int, target: int = 6_000) -> str:
    """One of the long chat's answers (~6 KB, its own numbers): sections, a small table and a
    short code block."""
    parts = [f"# Answer {n}\n\n"]
    i = 0
    while sum(map(len, parts)) < target:
        i += 1
        parts.append(_section(n * 100 + i))
        if i == 2:
            parts.append(_table(8) + _code(4))
    return "".join(parts)


def chat_file(answers: int = 100, chat_id: str = "cphonebench") -> str:
    """A chat export (``chats.files.export_json``) of ``answers`` questions and long answers."""
    conv = Conversation(chat_id)
    for n in range(answers):
        user = conv.add_user(f"Question {n}: explain part {n} in detail")
        answer = conv.start_answer(user.id)
        conv.finish(answer.id, chat_answer(n), "completed", format="openai-chat")
    return export_json(conv, {})
