"""The static site as ``build.py serve`` sends it: precompressed files chosen by the request's
``Accept-Encoding``, and cache headers by path.

``build.py site`` writes ``FILE.br`` and ``FILE.gz`` beside each file (the boot assets shrink
3-8x: 40 MB of wasm, zips and snapshot travel as ~12 MB). Chromium offers ``br`` only on
HTTPS and loopback, and ``gzip`` on plain HTTP to other hosts, hence both.

Content-addressed paths (``pyodide/VERSION/``, ``boot/HASH/``, and each wheel in its
``HASH/`` directory of the simple index, ``wheels/simple/PROJECT/HASH/``) never change under
the same URL: immutable for a year. Everything else (the page, its scripts, site.json, the
index's pages and ``wheels.json``) is revalidated, so a rebuilt site is picked up at once.
"""

from __future__ import annotations

import mimetypes
import os
import re
from collections.abc import Sequence
from typing import Literal

from starlette.datastructures import Headers
from starlette.responses import FileResponse, Response
from starlette.staticfiles import NotModifiedResponse, StaticFiles
from starlette.types import Scope

__all__ = ["IMMUTABLE", "PREFERENCE", "CachedStatic", "Encoding", "choose_encoding"]

Encoding = Literal["br", "gzip"]
SUFFIX: dict[Encoding, str] = {"br": ".br", "gzip": ".gz"}
PREFERENCE: tuple[Encoding, ...] = ("br", "gzip")  # br is ~20% smaller on these files
IMMUTABLE = ("pyodide/", "boot/")
CONTENT_ADDRESSED = re.compile(r"(?:^|/)[0-9a-f]{12}/[^/]+$")  # a file in a HASH/ directory

mimetypes.add_type("application/wasm", ".wasm")
mimetypes.add_type("text/javascript", ".mjs")


def choose_encoding(accept: str, available: Sequence[Encoding]) -> Encoding | None:
    """The best of ``available`` that ``accept`` (an Accept-Encoding header) allows, or None
    for the file as it is. ``q=0`` refuses a coding; ``*`` stands for any coding not named."""
    weights: dict[str, float] = {}
    for item in accept.split(","):
        name, _, params = item.strip().partition(";")
        name = name.strip().lower()
        if not name:
            continue
        q = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        weights[name] = q
    best: tuple[float, int, Encoding] | None = None
    for rank, enc in enumerate(PREFERENCE):
        if enc not in available:
            continue
        q = weights.get(enc, weights.get("*", 0.0))
        if enc == "gzip":
            q = max(q, weights.get("x-gzip", 0.0))
        if q > 0 and (best is None or (q, -rank) > (best[0], -best[1])):
            best = (q, rank, enc)
    return best[2] if best else None


def cache_control(path: str) -> str:
    fixed = path.startswith(IMMUTABLE) or CONTENT_ADDRESSED.search(path) is not None
    return "public, max-age=31536000, immutable" if fixed else "no-cache"


class CachedStatic(StaticFiles):
    """Static files with precompressed siblings and cache headers (see the module's doc).
    ``encodings`` limits the siblings it sends (benchmarks: "as before", "a LAN host")."""

    def __init__(self, *, directory: str, encodings: Sequence[Encoding] = PREFERENCE) -> None:
        super().__init__(directory=directory)
        self.encodings = tuple(encodings)

    async def get_response(self, path: str, scope: Scope) -> Response:
        resp = await super().get_response(path, scope)
        resp.headers["cache-control"] = cache_control(path)
        return resp

    def file_response(
        self,
        full_path: str | os.PathLike[str],
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        """The file, or its precompressed sibling when the request accepts it; 304 when the
        client's copy is current."""
        path = str(full_path)
        request_headers = Headers(scope=scope)
        available = [e for e in self.encodings if os.path.isfile(path + SUFFIX[e])]
        enc = choose_encoding(request_headers.get("accept-encoding", ""), available)
        media_type = mimetypes.guess_type(path)[0] or "application/octet-stream"
        if enc is None:
            response = FileResponse(
                path, status_code=status_code, stat_result=stat_result, media_type=media_type
            )
        else:
            # A sibling may be a link that ``build.py serve`` swaps for a better-compressed
            # file while it serves (buildtools/compress.py): its target never changes, so
            # the size read here is the size of what is sent.
            encoded = os.path.realpath(path + SUFFIX[enc])
            response = FileResponse(
                encoded,
                status_code=status_code,
                stat_result=os.stat(encoded),  # its own etag and length
                media_type=media_type,
                headers={"content-encoding": enc},
            )
        if available:
            response.headers["vary"] = "Accept-Encoding"
        if self.is_not_modified(response.headers, request_headers):
            return NotModifiedResponse(response.headers)
        return response
