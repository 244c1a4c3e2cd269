"""Files attached to the next message: taken from the composer's file picker, a paste into the
prompt, or a drop on the composer or the conversation; shown as removable chips above the
prompt; sent with the message (``App.send`` takes them).

A file is read here, in the page's Python thread (the view sends the ``File`` itself, as for
an import), checked (``attach_rules``), and a large image is scaled down by the platform
(``Platform.images``: ``pysse.browser.images`` in a browser). A file that cannot be attached is
refused with one sentence in the conversation; the others, and the prompt, stay.

Thumbnails (``file_chips``) get their picture by a ``src`` op: the image's bytes travel beside
the ops and the view makes a ``blob:`` URL of them, so a 5 MB picture is never a 7 MB
attribute in the ops' JSON.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ..errors import AttachmentError
from ..providers.attachments import IMAGE_TYPES, MAX_ATTACHMENTS, MAX_IMAGE_BYTES, Attachment
from ..view import Document, Element, Event
from .attach_rules import MAX_TEXT_BYTES, image_size, kind_of, scale_plan, scaled_note, text_of
from .platform import ImageScaler, Platform, spawn

__all__ = ["MAX_SOURCE_BYTES", "PendingFiles", "file_chip", "file_chips"]

# An image larger than this is refused before it is read (a 50 MB camera file is scaled; a
# larger one is no photo a page should decode).
MAX_SOURCE_BYTES = 50 << 20


class AttachHost(Protocol):
    @property
    def doc(self) -> Document: ...
    @property
    def platform(self) -> Platform: ...
    def show_notice(self, text: str) -> None: ...


def file_chips(doc: Document, files: Sequence[Attachment]) -> Element:
    """A sent message's files as a row of chips."""
    box = doc.createElement("div")
    box.className = "files"
    box.dataset.role = "files"
    for f in files:
        box.appendChild(file_chip(doc, f))
    return box


def file_chip(doc: Document, f: Attachment, index: int | None = None) -> Element:
    """One file: an image's thumbnail (alt: its name) or a text file's name; with a remove
    button when it has an ``index`` among the composer's files."""
    chip = doc.createElement("span")
    chip.className = f"chip {f.kind}"
    chip.dataset.role = "file"
    chip.dataset.kind = f.kind
    chip.setAttribute("title", f.name)
    if f.kind == "image":
        img = doc.createElement("img")
        img.setAttribute("alt", f.name)  # (an attribute: never HTML)
        chip.appendChild(img)
        doc.ops.add(["src", img.handle, base64.b64decode(f.data), f.media_type])
    else:
        label = doc.createElement("span")
        label.className = "name"
        label.textContent = f.name
        chip.appendChild(label)
    if index is not None:
        btn = doc.createElement("button")
        btn.setAttribute("type", "button")
        btn.className = "icon remove"
        btn.dataset.role = "attach-remove"
        btn.dataset.index = str(index)
        btn.setAttribute("aria-label", f"Remove {f.name}")
        btn.textContent = "×"
        chip.appendChild(btn)
    return chip


class PendingFiles:
    """The files the next message will carry."""

    def __init__(self, app: AttachHost) -> None:
        self.app = app
        self.pending: list[Attachment] = []
        self.row: Element | None = None  # the chips, once there is one
        self.reading = 0  # files being read or scaled
        self._waiting: list[Callable[[], object]] = []  # sends waiting for them
        doc = app.doc
        self.box = _required(doc, "[data-role=attachments]")
        self.composer = _required(doc, ".composer")
        _required(doc, "[data-role=attach-input]").addEventListener("change", self._on_files)
        _required(doc, "[data-role=prompt]").addEventListener("paste", self._on_files)
        self.composer.addEventListener("drop", self._on_files)
        _required(doc, "[data-role=log]").addEventListener("drop", self._on_files)
        self.box.addEventListener("click", self._on_click)

    def take(self) -> tuple[Attachment, ...]:
        """The files for the message being sent; the composer is empty of them after."""
        files = tuple(self.pending)
        if files:
            self.pending.clear()
            self._flags()
        return files

    def after_reading(self, fn: Callable[[], object]) -> None:
        """Call ``fn`` once no file is being read: a message sent while its photo is still
        being scaled goes with the photo, not without it."""
        if self.reading:
            self._waiting.append(fn)
        else:
            fn()

    def _on_files(self, e: Event) -> None:
        files = list(e.files or [])
        if files:  # (counted at once: a send in the same frame waits for them)
            self.reading += 1
            self.composer.dataset.reading = "1"
            spawn(self.add(files))

    def _on_click(self, e: Event) -> None:
        btn = e.target.closest("[data-role=attach-remove]") if e.target is not None else None
        if btn is None:
            return
        i = int(btn.dataset.index or -1)
        if 0 <= i < len(self.pending):
            del self.pending[i]
            chips = self.row.children if self.row is not None else []
            chips[i].remove()
            for j, chip in enumerate(chips[i + 1 :], start=i):  # (the later ones move up)
                later = chip.querySelector("[data-role=attach-remove]")
                if later is not None:
                    later.dataset.index = str(j)
            self._flags()
            _required(self.app.doc, "[data-role=prompt]").focus()

    async def add(self, files: Sequence[Any]) -> None:
        """Read, check and (an image too large) scale each file, in order; a refused one is
        said in one sentence and the rest go on. (``reading`` was counted by the caller.)"""
        try:
            for file in files:
                try:
                    got, note = await self.read(file)
                except AttachmentError as exc:
                    self.app.show_notice(f"Not attached: {exc}")
                    continue
                self.pending.append(got)
                if self.row is None:
                    self.row = file_chips(self.app.doc, ())
                    self.box.appendChild(self.row)
                self.row.appendChild(file_chip(self.app.doc, got, len(self.pending) - 1))
                self._flags()
                if note:
                    self.app.show_notice(note)
        finally:
            self.reading -= 1
            if not self.reading:
                self.composer.dataset.reading = ""
                waiting, self._waiting = self._waiting, []
                for fn in waiting:
                    fn()

    async def read(self, file: Any) -> tuple[Attachment, str]:
        """One file as an ``Attachment``, and what was done to it ("" if nothing)."""
        name = " ".join(str(file.name).split())[:200] or "attachment"
        media_type = str(file.type or "")
        size = int(file.size)
        kind = kind_of(name, media_type)
        if len(self.pending) >= MAX_ATTACHMENTS:
            raise AttachmentError(f"{name}: a message takes at most {MAX_ATTACHMENTS} files")
        if kind == "text":
            if size > MAX_TEXT_BYTES:  # refused before it is read: reading is the freeze
                raise AttachmentError(
                    f"{name}: {size:,} bytes, too long a text to send with a question; "
                    f"attach a part of it"
                )
            text = text_of(name, await _bytes(file))
            return Attachment.text(name, text, media_type or "text/plain"), ""
        if size > MAX_SOURCE_BYTES:
            raise AttachmentError(
                f"{name}: {size:,} bytes, too large an image to scale in a page; "
                f"scale it down and attach it again"
            )
        data = await _bytes(file)
        dims = image_size(data)
        plan = scale_plan(media_type, dims, len(data)) if dims is not None else None
        if dims is None or plan is None:  # (an unreadable header: sent as it is, if it fits)
            return Attachment.image(name, media_type, _b64(data)), ""
        scaler: ImageScaler | None = self.app.platform.images
        if scaler is None:
            raise AttachmentError(
                f"{name}: {dims[0]}×{dims[1]}, {len(data):,} bytes, too large to send, and "
                f"this page cannot scale images; scale it down and attach it again"
            )
        for out_type, quality in plan.encodings:
            out, got_type = await scaler.scale(
                data, media_type, plan.width, plan.height, out_type, quality
            )
            if got_type in IMAGE_TYPES and len(out) <= MAX_IMAGE_BYTES:
                note = scaled_note(name, dims, plan, got_type)
                return Attachment.image(name, got_type, _b64(out)), note
        raise AttachmentError(
            f"{name}: still over {MAX_IMAGE_BYTES:,} bytes at {plan.width}×{plan.height}; "
            f"attach a smaller image"
        )

    def _flags(self) -> None:
        """The chips' box shown or not, and ``data-files`` on the composer (the view sends a
        message with files and no text only then). Chips are added and removed one by one:
        an image's bytes go to the view once, not again at each change."""
        if not self.pending and self.row is not None:
            self.box.replaceChildren()
            self.row = None
        self.box.hidden = not self.pending
        self.composer.dataset.files = str(len(self.pending)) if self.pending else ""


async def _bytes(file: Any) -> bytes:
    buf = await file.arrayBuffer()
    return buf.to_bytes() if hasattr(buf, "to_bytes") else bytes(buf)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _required(doc: Document, selector: str) -> Element:
    el = doc.querySelector(selector)
    if el is None:
        raise LookupError(f"the page has no {selector} element: rebuild the site")
    return el
