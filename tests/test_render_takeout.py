"""Tables and code out of an answer (``pysse.render.takeout``): CSV that any RFC 4180 reader
reads back, Markdown that parses back to the same table, safe code file names."""

from __future__ import annotations

import csv
import io

from hypothesis import given, settings
from hypothesis import strategies as st

from pysse.render.code_names import code_filename
from pysse.render.takeout import (
    BOM,
    Table,
    csv_text,
    markdown_table,
    neutralize,
    tables_of,
    tsv_text,
)

# Any text a cell may show: quotes, commas, line breaks, formula starts, RTL and CJK.
CELL = st.text(
    st.one_of(
        st.sampled_from([*list("\",;\r\n\t=+-@'|\\ 0123456789"), "ש", "م", "漢", "表"]),
        st.characters(exclude_categories=["Cs"]),
    ),
    max_size=12,
)
ROWS = st.integers(1, 5).flatmap(
    lambda w: st.lists(st.lists(CELL, min_size=w, max_size=w), min_size=1, max_size=6)
)


@settings(max_examples=300, deadline=None)
@given(ROWS)
def test_csv_round_trips_through_the_csv_module(rows: list[list[str]]) -> None:
    text = csv_text(rows)
    assert text.startswith(BOM)
    assert text.endswith("\r\n")
    back = list(csv.reader(io.StringIO(text[1:], newline="")))
    assert back == [[neutralize(c) for c in row] for row in rows]


@given(CELL)
def test_a_formula_never_starts_a_csv_field(cell: str) -> None:
    safe = neutralize(cell)
    assert safe == cell or safe == "'" + cell
    if safe[:1] in ("=", "+", "-", "@", "\t", "\r"):
        float(safe.rstrip("%"))  # only a plain number starts so


def test_formula_injection_is_neutralized_but_numbers_stay() -> None:
    rows = [['=HYPERLINK("https://evil.example")', "+1+1", "-5", "+3.2", "@SUM(A1)", "-1e3%"]]
    assert (
        csv_text(rows, bom=False)
        == '"\'=HYPERLINK(""https://evil.example"")",\'+1+1,-5,+3.2,\'@SUM(A1),-1e3%\r\n'
    )


@given(ROWS)
def test_tsv_has_one_line_per_row_and_a_tab_between_cells(rows: list[list[str]]) -> None:
    lines = tsv_text(rows).split("\n")
    assert lines[-1] == ""
    for row, line in zip(rows, lines[:-1], strict=True):
        cells = line.split("\t")
        assert len(cells) == len(row) and "\r" not in line
        for cell, written in zip(row, cells, strict=True):
            assert written.split() == cell.split()  # the same words; breaks are spaces


# Markdown: a table written from any cell sources (no line breaks: a table's cells have none)
# parses back to the same table.
SOURCE = st.text(
    st.one_of(
        st.sampled_from([*list("|\\`*_ab1 "), "漢", "ש"]),
        st.characters(exclude_categories=["Cs", "Cc", "Zl", "Zp"]),
    ),
    max_size=10,
).map(str.strip)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda w: st.tuples(
            st.lists(st.lists(SOURCE, min_size=w, max_size=w), min_size=1, max_size=4),
            st.lists(st.sampled_from(["---", ":---", "---:", ":---:"]), min_size=w, max_size=w),
        )
    )
)
def test_markdown_table_parses_back_to_the_same_table(
    case: tuple[list[list[str]], list[str]],
) -> None:
    rows, align = case
    src = "| " + " | ".join(c or " " for c in rows[0]) + " |\n| " + " | ".join(align) + " |\n"
    src += "".join("| " + " | ".join(c or " " for c in row) + " |\n" for row in rows[1:])
    found = tables_of(src)
    if len(found) != 1:  # (a header cell like "-" can make the first line something else)
        return
    table = found[0]
    again = tables_of(markdown_table(table))
    assert again == [table]


def test_tables_of_an_answer() -> None:
    src = (
        "Intro\n\n| a \\| b | **c** | `x` | $m$ |\n|:--|--:|:-:|---|\n| 1 | =2+3 | [l](http://x) | -5 |\n"
        "| only |\n\n- item\n\n  | x |\n  |---|\n  | 漢字 |\n"
    )
    first, second = tables_of(src)
    assert first.text == (("a | b", "c", "x", "m"), ("1", "=2+3", "l", "-5"), ("only", "", "", ""))
    assert first.align == (":---", "---:", ":---:", "---")
    assert markdown_table(first).splitlines()[0] == "| a \\| b | **c** | `x` | $m$ |"
    assert second == Table((("x",), ("漢字",)), (("x",), ("漢字",)), ("---",))
    assert tables_of("no table | here") == []


def test_code_filename() -> None:
    assert code_filename("python") == "code.py"
    assert code_filename("JavaScript") == "code.js"
    assert code_filename("c++") == "code.cpp"
    assert code_filename("") == "code.txt"
    assert code_filename("../../etc/passwd") == "code.txt"
    assert code_filename("py", "my answer/../x") == "myanswerx.py"


@given(st.text(max_size=30), st.text(max_size=30))
def test_code_filename_is_always_a_plain_name(lang: str, stem: str) -> None:
    name = code_filename(lang, stem)
    assert "/" not in name and "\\" not in name and not name.startswith(".")
    assert all(c.isprintable() for c in name)
    assert name.count(".") == 1
