"""Attaching files in Chromium, as people do: the Attach picker and a click on Send, a paste
into the prompt, a drop on the composer, a large photo scaled down. The demo relay says what
it received (type, bytes, pixels), so each test reads in the answer what went out."""

from __future__ import annotations

import base64
import io
from typing import Any

import pytest
from PIL import Image

pytestmark = pytest.mark.browser


def png(w: int, h: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (w, h), (10, 120, 200)).save(out, "PNG")
    return out.getvalue()


def send_by_click(page: Any, text: str) -> None:
    page.fill("[data-role=prompt]", text)
    page.click("[data-role=send]")


def shown_width(page: Any, selector: str) -> int:
    """The thumbnail's natural width once it has loaded (its blob: URL, allowed by the CSP)."""
    page.wait_for_function(
        "s => { const i = document.querySelector(s); return i && i.complete && i.naturalWidth > 0; }",
        arg=selector,
    )
    return int(page.evaluate("s => document.querySelector(s).naturalWidth", selector))


THUMB = "[data-role=user] [data-role=files] img[alt='cat.png']"


def test_a_picked_image_is_sent_shown_kept_and_sent_again(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    page.click("[data-role=attach]")  # (opens the picker: Playwright answers it below)
    page.set_input_files(
        "[data-role=attach-input]",
        files=[{"name": "cat.png", "mimeType": "image/png", "buffer": png(37, 21)}],
    )
    page.wait_for_selector("[data-role=attachments] img[alt='cat.png']")
    assert page.get_attribute("[data-role=attach-remove]", "aria-label") == "Remove cat.png"
    send_by_click(page, "/demo echo what is it?")
    text = p.wait_done().get_attribute("data-text")
    assert "I received 1 file:" in text and "image/png" in text and "37×21 px" in text
    assert shown_width(page, THUMB) == 37
    assert page.is_hidden("[data-role=attachments]")
    p.reload()
    assert shown_width(page, THUMB) == 37
    page.click("[data-role=assistant] [data-role=regenerate]")
    again = p.wait_done().get_attribute("data-text")
    assert "37×21 px" in again


PASTE_AND_DROP = """async ([pngB64]) => {
  const bytes = Uint8Array.from(atob(pngB64), (c) => c.charCodeAt(0));
  const pasted = new DataTransfer();
  pasted.items.add(new File([bytes], "pasted.png", { type: "image/png" }));
  document.querySelector("[data-role=prompt]").dispatchEvent(
    new ClipboardEvent("paste", { clipboardData: pasted, bubbles: true, cancelable: true }));
}"""


def test_paste_and_drop_attach_and_an_unsupported_file_is_refused(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    page.evaluate(PASTE_AND_DROP, [base64.b64encode(png(5, 4)).decode()])
    page.wait_for_selector("[data-role=attachments] img[alt='pasted.png']")
    dropped = page.evaluate_handle(
        """() => { const d = new DataTransfer();
          d.items.add(new File(["# notes"], "notes.md", { type: "text/markdown" }));
          d.items.add(new File(["MZ"], "setup.exe", { type: "application/x-msdownload" }));
          d.items.add(new File(["not this one"], "extra.txt", { type: "text/plain" }));
          return d; }"""
    )
    page.dispatch_event(".composer", "drop", {"dataTransfer": dropped})
    page.wait_for_selector("[data-role=attachments] [data-role=file][title='extra.txt']")
    page.focus("[data-role=prompt]")
    page.keyboard.press("Shift+Tab")  # the last chip's remove button, just above the prompt
    label = page.evaluate("document.activeElement.getAttribute('aria-label')")
    assert label == "Remove extra.txt"
    page.keyboard.press("Enter")
    page.wait_for_selector("[data-role=file][title='extra.txt']", state="detached")
    assert page.evaluate("document.activeElement.dataset.role") == "prompt"
    notice = page.wait_for_selector("[data-role=notice]")
    assert notice.inner_text().startswith("Not attached: setup.exe: application/x-msdownload")
    send_by_click(page, "/demo echo two files")
    text = p.wait_done().get_attribute("data-text")
    assert "I received 2 files:" in text and "5×4 px" in text


def test_a_large_photo_is_scaled_down_and_the_person_is_told(make_page: Any) -> None:
    p = make_page()
    page = p.open()
    page.set_input_files(
        "[data-role=attach-input]",
        files=[{"name": "big.png", "mimeType": "image/png", "buffer": png(4000, 3000)}],
    )
    notice = page.wait_for_selector("[data-role=notice]", timeout=20_000)
    assert notice.inner_text() == "big.png scaled to 1568×1176 to fit (was 4000×3000)."
    send_by_click(page, "/demo echo big")
    text = p.wait_done().get_attribute("data-text")
    assert "1568×1176 px" in text and "image/webp" in text
