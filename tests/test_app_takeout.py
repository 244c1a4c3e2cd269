"""A table's buttons (``pysse.app.takeout``): the view's detail checked, the n-th table of the
answer's text copied or offered as CSV, and a sentence when the table cannot be read."""

from __future__ import annotations

from typing import Any

from pysse.app.takeout import table_out, tool_of
from pysse.render.takeout import csv_text, markdown_table, tables_of, tsv_text
from pysse.server.demo import RICH_ANSWER

TWO = '| a |\n|---|\n| 1 |\n\ntext\n\n| b | c |\n|---|---|\n| =1+1 | x, "y" |\n'


class Ops:
    def __init__(self) -> None:
        self.items: list[Any] = []

    def add(self, item: Any) -> None:
        self.items.append(item)


class Doc:
    def __init__(self) -> None:
        self.ops = Ops()


def test_the_views_detail_is_checked() -> None:
    assert tool_of(["table-md", 0]) == ("table-md", 0)
    assert tool_of(["table-csv", 3]) == ("table-csv", 3)
    for bad in (None, "table-md", ["table-md"], ["copy-answer", 0], ["table-md", "0"],
                ["table-md", True], ["table-md", 1.5], {"role": "table-md"}):  # fmt: skip
        assert tool_of(bad) is None, bad


def test_each_button_writes_its_tables_text() -> None:
    doc = Doc()
    assert table_out(doc, "table-md", 0, RICH_ANSWER) is None
    assert table_out(doc, "table-tsv", 1, TWO) is None
    assert table_out(doc, "table-csv", 1, TWO) is None
    _, second = tables_of(TWO)
    assert doc.ops.items == [
        ["copy", markdown_table(tables_of(RICH_ANSWER)[0])],
        ["copy", tsv_text(second.text)],
        ["download", "table-2.csv", csv_text(second.text), "text/csv;charset=utf-8"],
    ]
    assert csv_text(second.text) == '\ufeffb,c\r\n\'=1+1,"x, ""y"""\r\n'


def test_a_table_that_cannot_be_read_is_said_and_the_copy_ends() -> None:
    doc = Doc()
    said = table_out(doc, "table-md", 2, TWO)
    assert said == "This table could not be read from the answer's text: nothing was copied."
    assert doc.ops.items == [["copy", None]]  # the view's waiting clipboard write ends
    assert table_out(doc, "table-csv", 0, None) == said
    assert doc.ops.items == [["copy", None]]  # (a download has nothing waiting)
