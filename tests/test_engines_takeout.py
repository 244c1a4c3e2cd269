"""A table's Copy, Copy TSV and Download CSV and a code block's Download in every engine, with
the page's Python in its worker and on the main thread: a real click on each; what reaches the
clipboard (the page's ``navigator.clipboard`` recorded, as a headless engine may refuse the real
one) and what each download holds is what ``pysse.render.takeout`` writes."""

from __future__ import annotations

from typing import Any

import pytest

from pysse.render.takeout import csv_text, markdown_table, tables_of, tsv_text
from pysse.server.demo import RICH_ANSWER

pytestmark = pytest.mark.browser

TABLE = tables_of(RICH_ANSWER)[0]

RECORD = """() => {
  window.__got = [];
  const blobs = new Map();
  const made = URL.createObjectURL.bind(URL);
  URL.createObjectURL = (b) => { const u = made(b); blobs.set(u, b); return u; };
  const click = HTMLAnchorElement.prototype.click;
  HTMLAnchorElement.prototype.click = function () {
    const b = this.download && blobs.get(this.href);
    if (!b) return click.call(this);
    b.text().then((t) => window.__got.push([this.download, t, b.size]));
  };
  navigator.clipboard.write = async (items) => {
    const b = await items[0].getType("text/plain");
    window.__got.push(["clipboard", await b.text(), b.size]);
  };
  navigator.clipboard.writeText = async (t) => { window.__got.push(["clipboard", t, -1]); };
  return true;
}"""


@pytest.mark.parametrize("path", ["/", "/?thread=main"])
def test_tables_and_code_out(open_chat: Any, path: str) -> None:
    chat = open_chat(path=path)
    chat.send("hello")
    assert chat.wait_done()["text"] == RICH_ANSWER
    assert chat.page.evaluate(RECORD)
    got: list[Any] = []

    def next_one() -> Any:
        item = chat.page.wait_for(
            "(n) => window.__got.length > n && window.__got[n]", len(got), timeout=30
        )
        got.append(item)
        return item

    tools = "[data-role=assistant] .table-tools"
    chat.page.click(f"{tools} [data-role=table-md]")
    assert next_one()[:2] == ["clipboard", markdown_table(TABLE)]
    chat.page.click(f"{tools} [data-role=table-tsv]")
    assert next_one()[:2] == ["clipboard", tsv_text(TABLE.text)]
    chat.page.click(f"{tools} [data-role=table-csv]")
    name, text, size = next_one()
    data = csv_text(TABLE.text)
    assert name == "table.csv" and size == len(data.encode())  # (the BOM: 3 bytes)
    assert text.lstrip("\ufeff") == data[1:]
    chat.page.click("[data-role=assistant] .codeblock .save")
    name, text, _ = next_one()
    assert name == "code.py" and text.startswith("from pysse import ChatStream\n")
    said = chat.page.wait_for(
        "() => document.querySelector('.table-tools [data-role=table-md]').textContent"
    )
    assert said in ("Copied", "Copy")
