"""A table's buttons in an answer: Copy (Markdown), Copy TSV and Download CSV
(``render.takeout`` writes them). The table is read from the answer's text, as markdown-it
parses it, not from the DOM (which the model of the page does not hold: an answer's content is
opaque): the view tells which button of which table box, and the n-th table box in the answer
is the n-th table of its text.

A code block's Copy and Download, and an answer's Copy, are the view's (``web/view.js``): they
need no more than the code's text and the file name the renderer wrote. A table's Copy starts
in the view too (the clipboard needs the click's user activation, which a round trip to a
worker would lose): it asks the clipboard to write a text that arrives later, and the
``copy`` op this module sends is that text (``None``: the copy failed).
"""

from __future__ import annotations

from typing import Any

from ..render.takeout import csv_text, markdown_table, tables_of, tsv_text

__all__ = ["ROLES", "table_out", "tool_of"]

ROLES = ("table-md", "table-tsv", "table-csv")


def tool_of(detail: Any) -> tuple[str, int] | None:
    """A click's ``detail`` from the view, checked: ``(role, index of the table)``."""
    if not isinstance(detail, list | tuple) or len(detail) != 2:
        return None
    role, index = detail
    if role not in ROLES or not isinstance(index, int) or isinstance(index, bool):
        return None
    return str(role), index


def table_out(doc: Any, role: str, index: int, text: str | None) -> str | None:
    """Do what button ``role`` (one of ``ROLES``) asks for table ``index`` of an answer whose
    text is ``text``; a sentence for the user when the table cannot be read."""
    tables = tables_of(text) if text is not None and index >= 0 else []
    if not 0 <= index < len(tables):
        if role != "table-csv":
            doc.ops.add(["copy", None])
        return "This table could not be read from the answer's text: nothing was copied."
    table = tables[index]
    if role == "table-md":
        doc.ops.add(["copy", markdown_table(table)])
    elif role == "table-tsv":
        doc.ops.add(["copy", tsv_text(table.text)])
    else:
        name = f"table-{index + 1}.csv" if len(tables) > 1 else "table.csv"
        doc.ops.add(["download", name, csv_text(table.text), "text/csv;charset=utf-8"])
    return None
