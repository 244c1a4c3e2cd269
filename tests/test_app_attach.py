"""Attaching files in the chat page's logic (``pysse.app.attach``), against the model view:
the picker, a paste and a drop; the chips; a refusal; a large image scaled; the files sent,
stored, shown after a reload, and sent again by Regenerate and Edit."""

from __future__ import annotations

import asyncio
import io
from typing import Any

from model_page import MemoryStore, ModelPage
from PIL import Image

from pysse.testing import Script


class FakeFile:
    """What the view hands Python for a ``File`` (its name, type, size, bytes)."""

    def __init__(self, name: str, type: str, data: bytes) -> None:
        self.name, self.type, self.size, self.data = name, type, len(data), data

    async def arrayBuffer(self) -> bytes:
        return self.data


class FakeScaler:
    """The platform's scaler, by PIL (the browser's is ``pysse.browser.images``)."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int, str]] = []

    async def scale(
        self, data: bytes, media_type: str, w: int, h: int, out: str, q: float | None
    ) -> tuple[bytes, str]:
        self.calls.append((w, h, out))
        buf = io.BytesIO()
        fmt = {"image/webp": "WEBP", "image/jpeg": "JPEG"}[out]
        Image.open(io.BytesIO(data)).convert("RGB").resize((w, h)).save(buf, fmt)
        return buf.getvalue(), out


async def pick(page: ModelPage, *files: FakeFile) -> None:
    """The person picks ``files`` with the Attach button's file picker."""
    page.fire(page.q("[data-role=attach-input]"), "change", files=list(files))
    await page.settle()


def png(w: int, h: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (w, h), (10, 120, 200)).save(out, "PNG")
    return out.getvalue()


def answer(text: str) -> bytes:
    return Script.answer(text, "openai-chat").body


def image_parts(request: dict[str, Any]) -> list[str]:
    content = request["body"]["messages"][0]["content"]
    return [p["image_url"]["url"][:22] for p in content if p["type"] == "image_url"]


def test_a_picked_image_is_sent_stored_shown_and_sent_again() -> None:
    async def go() -> None:
        store = MemoryStore()
        page = ModelPage(store)
        await page.boot()
        await pick(page, FakeFile("cat.png", "image/png", png(37, 21)))
        chip = page.q("[data-role=attachments] [data-role=file]")
        assert page.q("img", chip).getAttribute("alt") == "cat.png"
        remove = page.q("[data-role=attach-remove]", chip)
        assert remove.getAttribute("aria-label") == "Remove cat.png"
        assert page.q(".composer").dataset.files == "1"
        page.net.play(answer("a cat"))
        page.send("what is it?")
        await page.settle()
        assert page.q("[data-role=attachments]").hidden  # taken by the message
        assert image_parts(page.net.requests[0]) == ["data:image/png;base64,"]
        user = page.q("[data-role=user]")
        img = page.q("[data-role=files] img", user)
        assert img.getAttribute("alt") == "cat.png"
        assert page.view.srcs[img.handle] == (png(37, 21), "image/png")
        page.net.play(answer("still a cat"))
        page.click("[data-role=regenerate]", page.answers()[0])
        await page.settle()
        assert image_parts(page.net.requests[1]) == ["data:image/png;base64,"]
        page.click("[data-role=edit]", user)
        await page.settle()
        page.type_into("[data-role=edit-text]", "and now?")
        page.net.play(answer("a cat again"))
        page.click("[data-role=edit-send]", page.q("[data-role=user]"))
        await page.settle()
        assert image_parts(page.net.requests[2]) == ["data:image/png;base64,"]
        again = ModelPage(store)  # a reload
        await again.boot()
        img = again.q("[data-role=user] [data-role=files] img")
        assert again.view.srcs[img.handle][1] == "image/png"

    asyncio.run(go())


def test_paste_and_drop_attach_text_and_a_refusal_keeps_the_rest() -> None:
    async def go() -> None:
        page = ModelPage()
        await page.boot()
        page.fire(
            page.q("[data-role=prompt]"), "paste", files=[FakeFile("a.md", "text/markdown", b"# A")]
        )
        page.fire(
            page.q("[data-role=log]"),
            "drop",
            files=[
                FakeFile("x.exe", "application/x-msdownload", b"MZ"),
                FakeFile("b.txt", "text/plain", b"B"),
            ],
        )
        await page.settle()
        names = [
            c.getAttribute("title")
            for c in page.app.doc.querySelectorAll("[data-role=attachments] [data-role=file]")
        ]
        assert names == ["a.md", "b.txt"]
        (notice,) = page.app.log.querySelectorAll("[data-role=notice]")
        assert notice.textContent.startswith(
            "Not attached: x.exe: application/x-msdownload cannot be attached"
        )
        page.click(page.app.doc.querySelectorAll("[data-role=attach-remove]")[0])
        await page.settle()
        (left,) = page.app.doc.querySelectorAll("[data-role=attach-remove]")
        assert left.getAttribute("aria-label") == "Remove b.txt" and left.dataset.index == "0"
        page.net.play(answer("ok"))
        page.send("")  # files alone are a message
        await page.settle()
        content = page.net.requests[0]["body"]["messages"][0]["content"]
        assert content == [{"type": "text", "text": "b.txt:\n\nB"}]

    asyncio.run(go())


def test_a_large_image_is_scaled_by_the_platform_and_the_person_is_told() -> None:
    async def go() -> None:
        page = ModelPage()
        page.platform.images = scaler = FakeScaler()
        await page.boot()
        await pick(page, FakeFile("big.png", "image/png", png(4000, 3000)))
        assert scaler.calls == [(1568, 1176, "image/webp")]
        (notice,) = page.app.log.querySelectorAll("[data-role=notice]")
        assert notice.textContent == "big.png scaled to 1568×1176 to fit (was 4000×3000)."
        assert page.app.files.pending[0].media_type == "image/webp"

    asyncio.run(go())


def test_without_a_scaler_a_large_image_is_refused_in_a_sentence() -> None:
    async def go() -> None:
        page = ModelPage()
        await page.boot()
        await pick(page, FakeFile("big.png", "image/png", png(3000, 2000)))
        assert not page.app.files.pending
        (notice,) = page.app.log.querySelectorAll("[data-role=notice]")
        assert "big.png: 3000×2000" in notice.textContent and "cannot scale" in notice.textContent

    asyncio.run(go())


def test_continue_sends_the_files_and_no_template_is_kept_for_a_chat_with_files() -> None:
    async def go() -> None:
        from pysse.app.answers import NEXT_KEY

        page = ModelPage()
        await page.boot()
        await pick(page, FakeFile("cat.png", "image/png", png(37, 21)))
        full = answer("The beginning and the end.")
        page.net.play(full[: len(full) // 2])  # no terminal signal: truncated
        page.send("tell me")
        await page.settle()
        assert page.view.stored[NEXT_KEY] == ""  # (megabytes of base64 for localStorage)
        page.net.play(answer(" REST"))
        page.click("[data-role=continue]", page.answers()[0])
        await page.settle()
        assert image_parts(page.net.requests[1]) == ["data:image/png;base64,"]

    asyncio.run(go())


def test_files_sent_while_an_answer_streams_wait_with_their_message() -> None:
    async def go() -> None:
        page = ModelPage()
        await page.boot()
        page.net.play(answer("partial")[:40], end=False)  # still streaming
        page.send("first")
        await page.settle()
        await pick(page, FakeFile("cat.png", "image/png", png(37, 21)))
        page.net.play(answer("a cat"))
        page.send("second")  # queued, with its file
        await page.settle()
        queued = page.q("[data-role=user][data-queued='1']")
        assert page.q("[data-role=files] img", queued).getAttribute("alt") == "cat.png"
        assert not page.app.files.pending
        page.click("[data-role=stop]")
        await page.settle()
        assert len(page.net.requests) == 2
        content = page.net.requests[1]["body"]["messages"][-1]["content"]
        assert [p["type"] for p in content] == ["text", "image_url"]

    asyncio.run(go())


def test_a_message_sent_while_its_photo_is_scaled_waits_for_it() -> None:
    async def go() -> None:
        page = ModelPage()
        page.platform.images = FakeScaler()
        await page.boot()
        page.fire(
            page.q("[data-role=attach-input]"),
            "change",
            files=[FakeFile("big.png", "image/png", png(2000, 1000))],
        )
        assert page.app.files.reading == 1  # (counted as the event arrives)
        page.net.play(answer("a big picture"))
        page.send("")  # only the photo, still being read
        await page.settle()
        (request,) = page.net.requests
        content = request["body"]["messages"][-1]["content"]
        assert [p["type"] for p in content] == ["image_url"]

    asyncio.run(go())


def test_too_long_a_text_is_refused_before_it_is_read_and_an_eleventh_file_too() -> None:
    async def go() -> None:
        page = ModelPage()
        await page.boot()
        huge = FakeFile("log.txt", "text/plain", b"")
        huge.size = 900_001  # over 200,000 characters at 4 bytes each: never read
        long = FakeFile("long.md", "text/markdown", b"x" * 200_001)
        page.fire(page.q("[data-role=prompt]"), "paste", files=[huge, long])
        await page.settle()
        texts = [n.textContent for n in page.app.log.querySelectorAll("[data-role=notice]")]
        assert texts == [
            "Not attached: log.txt: 900,001 bytes, too long a text to send with a question; "
            "attach a part of it",
            "Not attached: long.md: 200,001 characters, over the 200,000 sent with a question; "
            "attach a part of it",
        ]
        many = [FakeFile(f"f{i}.txt", "text/plain", b"x") for i in range(11)]
        page.fire(page.q("[data-role=log]"), "drop", files=many)
        await page.settle()
        assert len(page.app.files.pending) == 10
        last = page.app.log.querySelectorAll("[data-role=notice]")[-1].textContent
        assert last == "Not attached: f10.txt: a message takes at most 10 files"

    asyncio.run(go())
