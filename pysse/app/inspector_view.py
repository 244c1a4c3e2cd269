"""The stream inspector's views as HTML strings: Raw chunks, Events, Timing, and the Replay
comparison. Pure functions of an ``inspector.Report`` (and the live answer's timing), so they
are tested in CPython; the browser panel only puts the result into the page.

Everything that came from the stream is escaped: the inspector shows hostile bytes as text.
"""

from __future__ import annotations

import html
from typing import Any

from ..inspector import Report

__all__ = [
    "PAGE",
    "chat_summary",
    "more_button",
    "render_compare",
    "render_events",
    "render_raw",
    "render_timing",
]

PAGE = 200  # rows rendered at a time in the inspector's lists


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def fmt_ms(v: Any) -> str:
    return "–" if v is None else f"{v:,.0f} ms"


def more_button(total: int, shown: int) -> str:
    """A "Show N more" button when a list has more rows than are shown."""
    if total <= shown:
        return ""
    return (
        f'<button type="button" data-role="insp-more">Show {min(PAGE, total - shown)}'
        f" more of {total - shown}</button>"
    )


def _html_lines(text: str) -> str:
    out = []
    for line in text.split("\n"):
        if line.startswith(":"):
            out.append(f'<span class="comment">{esc(line)}</span>')
        else:
            out.append(esc(line))
    return "\n".join(out)


def render_raw(rep: Report, shown: int = PAGE) -> str:
    """The chunks as they arrived: index, arrival ms, size, text with CR/LF made visible."""
    rows = []

    def mark(index: int) -> None:
        if index in rep.marks:
            rows.append(
                f'<tr class="insp-resume" data-role="insp-resume"><td colspan="4">↻ '
                f"{esc(rep.marks[index])}</td></tr>"
            )

    for c in rep.chunks[:shown]:
        mark(c.index)
        bad = f' <span class="bad">{c.invalid} invalid UTF-8</span>' if c.invalid else ""
        rows.append(
            f'<tr data-chunk="{c.index}"><td>{c.index}</td><td>{c.t_ms:,.0f}</td>'
            f"<td>{c.size}</td><td><pre>{_html_lines(c.text)}</pre>{bad}</td></tr>"
        )
    if shown >= len(rep.chunks):  # a resume after the last chunk (nothing came after it)
        for index in sorted(i for i in rep.marks if i >= len(rep.chunks)):
            mark(index)
    return (
        f'<p class="insp-note">{len(rep.chunks)} chunks, {rep.timing["bytes"]:,} bytes, '
        f"{rep.comments} comment lines (keep-alives). ␍ = CR, ␊ = LF.</p>"
        '<table class="insp-table" data-role="insp-chunks"><thead><tr><th>#</th>'
        "<th>ms</th><th>bytes</th><th>as it arrived</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
        + more_button(len(rep.chunks), shown)
    )


def chat_summary(c: dict[str, Any]) -> str:
    """One chat event (as ``event_to_dict`` gives it) in a line."""
    kind = c.get("type")
    if kind == "reasoning" and c.get("redacted"):  # its data is opaque: never shown
        return "reasoning: hidden by the provider"
    if kind == "reasoning" and c.get("signature") and not c.get("text"):
        return f"reasoning: the block's signature ({len(str(c['signature']))} characters)"
    if kind in ("text", "reasoning"):
        return f"{kind}: {c.get('text')!r}"
    if kind == "tool_call":
        return f"tool_call #{c.get('index')}: {c.get('name') or ''}{c.get('arguments') or ''}"
    if kind == "citation":
        return f"citation: {c.get('title') or ''} <{c.get('url')}>"
    if kind == "usage":
        return f"usage: {c.get('input_tokens')} in / {c.get('output_tokens')} out"
    if kind == "finish":
        return f"finish: {c.get('outcome')} ({c.get('reason')}) {c.get('detail') or ''}".strip()
    if kind == "error":
        return f"error {c.get('kind')}: {c.get('message')}"
    return str(c)


def render_events(rep: Report, shown: int = PAGE) -> str:
    """Each SSE event beside the chat events it became."""
    rows = []
    for ev in rep.events[:shown]:
        chat = "<br>".join(esc(chat_summary(c)) for c in ev.chat) or "<i>nothing</i>"
        data = ev.data if len(ev.data) <= 400 else ev.data[:400] + "…"
        rows.append(
            f'<tr data-event="{ev.index}"><td>{ev.index}</td><td>{esc(ev.event)}'
            f"</td><td><code>{esc(data)}</code></td><td>{esc(ev.id)}</td>"
            f"<td>{chat}</td></tr>"
        )
    return (
        f'<p class="insp-note">{len(rep.events)} SSE events, format '
        f"{esc(rep.format or 'unknown')}</p>"
        '<table class="insp-table" data-role="insp-events"><thead><tr><th>#</th>'
        "<th>event</th><th>data</th><th>id</th><th>became</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
        + more_button(len(rep.events), shown)
    )


def render_timing(rep: Report, live: dict[str, Any], state: str, replay: bool) -> str:
    """Timing and outcome. ``live`` is the page's own timing of the answer (renders, total
    time); ``state`` its outcome as the page shows it (a Stop the recording cannot know)."""
    t = rep.timing
    outcome = state if replay else rep.outcome
    detail = rep.detail or ""
    if state == "aborted":
        outcome, detail = "aborted", "stopped by the user"
    deltas = live.get("deltas_per_render")
    items = [
        ("time to first byte", fmt_ms(t["ttfb_ms"])),
        ("time to first text", fmt_ms(t["ttft_ms"])),
        ("total time", fmt_ms(live.get("total_ms"))),
        ("bytes", f"{t['bytes']:,}"),
        ("chunks", f"{t['chunks']:,}"),
        ("SSE events", f"{t['sse_events']:,}"),
        ("events / s", "–" if not t["events_per_s"] else f"{t['events_per_s']:,.0f}"),
        ("renders", f"{live.get('renders', 0):,}"),
        ("deltas per render", "–" if not deltas else f"{deltas:.1f}"),
        ("longest render", f"{live.get('longest_render_ms', 0.0):.1f} ms"),
        (
            "outcome",
            detail
            if detail.startswith(f"{outcome}:")
            else f"{outcome}" + (f": {detail}" if detail else ""),
        ),
    ]
    return (
        '<dl class="insp-timing" data-role="insp-timing">'
        + "".join(f'<dt>{esc(k)}</dt><dd data-key="{esc(k)}">{esc(v)}</dd>' for k, v in items)
        + "</dl>"
    )


def render_compare(rows: list[dict[str, Any]] | None) -> str:
    """The replay check: whole/1000/60/20/1-byte replays against each other."""
    if not rows:
        return (
            '<p class="insp-note">Replay this answer (or a saved .sse file) through '
            "the same parser and renderer at any chunk size. The check below compares "
            "whole, 1000, 60, 20 and 1-byte chunks.</p>"
        )
    body = "".join(
        f"<tr><td>{esc(r['chunk'])}</td><td>{'same' if r['same'] else 'DIFFERENT'}</td>"
        f"<td>{r['chars']}</td><td>{esc(r['outcome'])}</td>"
        f"<td>{esc(r.get('first_difference_at', ''))}</td></tr>"
        for r in rows
    )
    verdict = (
        "identical text at every chunk size"
        if all(r["same"] for r in rows)
        else "the text depends on the chunk size"
    )
    return (
        f'<p class="insp-note" data-role="insp-verdict">{verdict}</p>'
        '<table class="insp-table" data-role="insp-compare"><thead><tr><th>chunk</th>'
        "<th>text</th><th>chars</th><th>outcome</th><th>first difference at</th></tr>"
        "</thead><tbody>" + body + "</tbody></table>"
    )
