"""What a Python block printed when the reader ran it (``web/runner_host.js``), kept with its
answer: which block, how the run ended, and its output, bounded. The sandbox's output is
untrusted text (the block's code comes from the model): it is stored and shown as text only.

An answer keeps the last run of each of its blocks, at most ``MAX_RUNS`` blocks, each output
at most ``MAX_RUN_TEXT`` characters (a longer one keeps its start and says how much was cut).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

from .message_extras import ExtrasError

__all__ = [
    "MAX_RUNS",
    "MAX_RUN_TEXT",
    "RunOutput",
    "kept_run",
    "runs_from_json",
    "runs_html",
    "runs_markdown",
    "runs_to_json",
    "with_run",
]

MAX_RUNS = 20  # blocks of an answer whose last run is kept
MAX_RUN_TEXT = 20_000  # characters of a run's output kept
MAX_STATUS = 200
MAX_BLOCK = 10_000  # a block's index: an answer has fewer code blocks than this


@dataclass(frozen=True)
class RunOutput:
    """The last run of an answer's ``block`` (its index among the answer's code blocks):
    ``status`` as the page said it ("Done in 0.4 s."), ``text`` what it printed."""

    block: int
    status: str
    text: str


def kept_run(block: Any, status: Any, text: Any) -> RunOutput | None:
    """A run as the view reported it, bounded; None if it is not one (the view's record
    is checked here, where it enters the page's Python)."""
    if not isinstance(block, int) or isinstance(block, bool) or not 0 <= block < MAX_BLOCK:
        return None
    if not isinstance(status, str) or not isinstance(text, str):
        return None
    status = " ".join(status.split())[:MAX_STATUS]
    if len(text) > MAX_RUN_TEXT:
        cut = len(text) - MAX_RUN_TEXT
        text = text[:MAX_RUN_TEXT] + f"\n[{cut:,} more characters not kept]\n"
    return RunOutput(block, status, text)


def with_run(runs: tuple[RunOutput, ...], run: RunOutput) -> tuple[RunOutput, ...]:
    """``runs`` with ``run`` as its block's last, in block order; at most ``MAX_RUNS`` (the
    blocks furthest down the answer are the ones left out)."""
    others = [r for r in runs if r.block != run.block]
    return tuple(sorted([*others, run], key=lambda r: r.block)[:MAX_RUNS])


def runs_to_json(runs: tuple[RunOutput, ...]) -> list[dict[str, Any]]:
    return [{"block": r.block, "status": r.status, "text": r.text} for r in runs]


def runs_from_json(value: Any, where: str) -> tuple[RunOutput, ...]:
    """``runs_to_json``'s output back; None or missing (an older file) is no run. A wrong
    type, a repeated block or a field over its cap is an ``ExtrasError`` naming it."""
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_RUNS:
        raise ExtrasError(f"{where} 'runs' must be a list of at most {MAX_RUNS}")
    out: list[RunOutput] = []
    for i, item in enumerate(value):
        at = f"{where} run {i}"
        if not isinstance(item, dict):
            raise ExtrasError(f"{at} is not an object")
        block, status, text = item.get("block"), item.get("status"), item.get("text")
        if not isinstance(block, int) or isinstance(block, bool) or not 0 <= block < MAX_BLOCK:
            raise ExtrasError(f"{at} 'block' must be a whole number under {MAX_BLOCK:,}")
        if any(r.block == block for r in out):
            raise ExtrasError(f"{at} 'block' {block} is there twice")
        if not isinstance(status, str) or len(status) > MAX_STATUS:
            raise ExtrasError(f"{at} 'status' must be text of at most {MAX_STATUS} characters")
        limit = MAX_RUN_TEXT + 100  # (the note on a cut output)
        if not isinstance(text, str) or len(text) > limit:
            raise ExtrasError(f"{at} 'text' must be text of at most {limit:,} characters")
        out.append(RunOutput(block, status, text))
    return tuple(sorted(out, key=lambda r: r.block))


def runs_markdown(runs: tuple[RunOutput, ...]) -> list[str]:
    """The runs as Markdown lines (Export .md): a heading line each, the output fenced with
    more backticks than it holds in a row, so nothing in it can close the fence."""
    out: list[str] = []
    for r in runs:
        longest = max((len(m) for m in re.findall(r"`+", r.text)), default=0)
        fence = "`" * max(3, longest + 1)
        out += [f"Output of Python block {r.block + 1} ({r.status}):", "", fence + "text"]
        out += [r.text.rstrip("\n"), fence, ""]
    return out


def runs_html(runs: tuple[RunOutput, ...]) -> str:
    """The runs as HTML (Export .html): escaped text in a ``pre`` under a caption."""
    parts = [
        f'<section class="run-output"><p class="run-status">Python block {r.block + 1}: '
        f'{html.escape(r.status)}</p><pre class="run-text">{html.escape(r.text)}</pre></section>'
        for r in runs
    ]
    return "".join(parts)
