"""Attachments in every engine, with the page's Python in its worker and on its main thread:
a photo too large for a vision model (2000×1000) and a text file picked with Attach (the
engines' file dialog cannot be driven, so the test gives the file input its files as the
dialog would, then fires ``change``), sent with a click on Send. The photo is scaled in the
engine's own ``createImageBitmap`` and ``OffscreenCanvas`` (in the thread Python runs in),
and the demo relay says what it received, so the answer reads what went out."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.browser

PICK = """async () => {
  const canvas = document.createElement("canvas");
  canvas.width = 2000; canvas.height = 1000;
  const g = canvas.getContext("2d");
  const grad = g.createLinearGradient(0, 0, 2000, 1000);
  grad.addColorStop(0, "#1060c0"); grad.addColorStop(1, "#f0a020");
  g.fillStyle = grad; g.fillRect(0, 0, 2000, 1000);
  const png = await new Promise((ok) => canvas.toBlob(ok, "image/png"));
  const dt = new DataTransfer();
  dt.items.add(new File([png], "wide.png", { type: "image/png" }));
  dt.items.add(new File(["a,b\\n1,2\\n"], "data.csv", { type: "text/csv" }));
  const input = document.querySelector("[data-role=attach-input]");
  input.files = dt.files;
  input.dispatchEvent(new Event("change", { bubbles: true }));
  return true;
}"""

CHIPS = """() => [...document.querySelectorAll('[data-role=attachments] [data-role=attach-remove]')]
  .map((b) => b.getAttribute('aria-label'))"""

THUMB = """() => { const i = document.querySelector("[data-role=user] [data-role=files] img");
  return i && i.complete && i.naturalWidth > 0 ? [i.alt, i.naturalWidth, i.naturalHeight] : null; }"""


@pytest.mark.parametrize("path", ["/", "/?thread=main"])
def test_a_large_photo_and_a_text_file_go_out_scaled(open_chat: Any, path: str) -> None:
    chat = open_chat(path=path)
    assert chat.page.evaluate(PICK)
    chat.page.wait_for(f"() => ({CHIPS})().length === 2", timeout=60)
    assert chat.page.evaluate(CHIPS) == ["Remove wide.png", "Remove data.csv"]
    told = chat.page.wait_for(
        "() => [...document.querySelectorAll('[data-role=log] *')].map((e) => e.textContent)"
        ".find((t) => t && t.includes('scaled to'))",
        timeout=60,
    )
    assert "wide.png scaled to 1568×784 to fit (was 2000×1000)" in told
    chat.page.type("[data-role=prompt]", "/demo echo what are these?")
    chat.page.click("[data-role=send]")
    text = chat.wait_done()["text"]
    assert "I received 2 files:" in text, text
    assert "1568×784 px" in text  # scaled by this engine, then read by the relay
    assert "- a text file, 19 characters" in text  # its name, a blank line, its 8
    assert text.endswith("what are these?\n\ndata.csv:\n\na,b\n1,2")  # (the echo)
    assert chat.page.wait_for(THUMB, timeout=30)[1:] == [1568, 784]
