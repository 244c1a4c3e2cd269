"""Tables and code out of an answer, in Chromium, as a user does it: a real click on a table's
Copy (Markdown), Copy TSV and Download CSV, and on a code block's Download; Tab reaches them
and Enter presses them. What lands on the clipboard or in the file is what
``pysse.render.takeout`` writes for the answer's text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pysse.render.takeout import csv_text, markdown_table, tables_of, tsv_text
from pysse.server.demo import RICH_ANSWER

pytestmark = pytest.mark.browser

TABLE = tables_of(RICH_ANSWER)[0]


def label_is(page: Any, selector: str, text: str) -> None:
    page.wait_for_function(
        "([s, t]) => document.querySelector(s).textContent === t", arg=[selector, text]
    )


def test_a_tables_copy_and_csv_and_a_code_blocks_download(make_page: Any, tmp_path: Path) -> None:
    p = make_page(permissions=["clipboard-read", "clipboard-write"])
    page = p.open()
    p.send("hello")
    msg = p.wait_done()
    md = ".table-tools [data-role=table-md]"
    msg.query_selector(md).click()
    label_is(page, md, "Copied")
    assert page.evaluate("navigator.clipboard.readText()") == markdown_table(TABLE)
    assert markdown_table(TABLE).startswith("| Provider | Terminal signal | Line ends |\n")
    tsv = ".table-tools [data-role=table-tsv]"
    msg.query_selector(tsv).click()
    label_is(page, tsv, "Copied")
    assert page.evaluate("navigator.clipboard.readText()") == tsv_text(TABLE.text)
    assert tsv_text(TABLE.text).splitlines()[1] == "OpenAI Chat\tdata: [DONE]\tLF"

    with page.expect_download() as dl:
        msg.query_selector(".table-tools [data-role=table-csv]").click()
    assert dl.value.suggested_filename == "table.csv"
    saved = tmp_path / "table.csv"
    dl.value.save_as(saved)
    data = saved.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b"\r\n" in data
    assert data.decode() == csv_text(TABLE.text)

    with page.expect_download() as dl:
        msg.query_selector(".codeblock .save").click()
    assert dl.value.suggested_filename == "code.py"
    code = tmp_path / "code.py"
    dl.value.save_as(code)
    assert code.read_text().startswith("from pysse import ChatStream\n")
    assert code.read_text() == msg.query_selector(".codeblock pre").inner_text()


def test_tab_reaches_a_tables_tools_and_enter_presses_them(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    p.send("hello")
    p.wait_done()
    page.focus("[data-role=prompt]")
    seen = []
    for _ in range(60):  # backwards from the composer, through the answer
        page.keyboard.press("Shift+Tab")
        role = page.evaluate("document.activeElement.dataset.role || ''")
        seen.append(role)
        if role == "table-csv":
            break
    assert seen[-1] == "table-csv", seen
    with page.expect_download() as dl:
        page.keyboard.press("Enter")
    assert dl.value.suggested_filename == "table.csv"
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == (
        "Copy table as Markdown"
    )


def test_a_chat_exported_as_html_opens_from_disk_with_no_request(
    make_page: Any, browser: Any, tmp_path: Path
) -> None:
    p = make_page()
    page = p.open()
    p.send("hello")
    p.wait_done()
    with page.expect_download() as dl:
        page.click("[data-role=export-html]")
    assert dl.value.suggested_filename.endswith(".html")
    saved = tmp_path / "chat.html"
    dl.value.save_as(saved)
    context = browser.new_context()
    try:
        reader = context.new_page()
        requests: list[str] = []
        reader.on("request", lambda r: requests.append(r.url))
        reader.goto(saved.as_uri())
        assert requests == [saved.as_uri()]  # the file itself, nothing else
        assert reader.evaluate("document.scripts.length") == 0
        assert reader.locator("table th").first.inner_text() == "Provider"
        assert reader.locator("button").count() == 0
        # the page's styles came along: a code block looks as it does on the page
        bg = reader.evaluate(
            "getComputedStyle(document.querySelector('.codeblock pre')).backgroundColor"
        )
        assert bg not in ("rgba(0, 0, 0, 0)", "transparent")
        reader.emulate_media(media="print")
        assert (
            reader.evaluate("getComputedStyle(document.body).backgroundColor")
            == "rgb(255, 255, 255)"
        )
    finally:
        context.close()
