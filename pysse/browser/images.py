"""Scaling an attached image in the browser (``pysse.app.platform.ImageScaler``): decoded by
``createImageBitmap``, drawn on an ``OffscreenCanvas`` at the size ``pysse.app.attach_rules``
chose, encoded by ``convertToBlob``. All three exist in a worker and on the main thread, so
both modes scale in the thread the page's Python runs in."""

from __future__ import annotations

import js
from pyodide.ffi import to_js

from .dom import js_obj

__all__ = ["BrowserImages"]


class BrowserImages:
    async def scale(
        self,
        data: bytes,
        media_type: str,
        width: int,
        height: int,
        out_type: str,
        quality: float | None,
    ) -> tuple[bytes, str]:
        blob = js.Blob.new(to_js([to_js(data)]), js_obj({"type": media_type}))
        bitmap = await js.createImageBitmap(blob)
        try:
            canvas = js.OffscreenCanvas.new(width, height)
            ctx = canvas.getContext("2d")
            if out_type == "image/jpeg":  # no transparency in a JPEG: white, not black
                ctx.fillStyle = "#fff"
                ctx.fillRect(0, 0, width, height)
            ctx.imageSmoothingQuality = "high"
            ctx.drawImage(bitmap, 0, 0, width, height)
        finally:
            bitmap.close()
        options: dict[str, object] = {"type": out_type}
        if quality is not None:
            options["quality"] = quality
        out = await canvas.convertToBlob(js_obj(options))
        buf = await out.arrayBuffer()
        return bytes(buf.to_bytes()), str(out.type)
