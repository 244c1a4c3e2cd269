"""The test server's side of the engine matrix: the site as the page server serves it, with a
probe script first in ``index.html`` and a blank page to prepare storage from.

Why a probe in the page: WebKitGTK's WebDriver has no BiDi, so neither init scripts nor
console logs; a same-origin script that runs before the page's own is the one way to see
every uncaught error, unhandled rejection and ``console.error`` there, and it is the same in
every engine. It also counts animation frames (``window.__frames``), as the Chromium tests'
init script does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["AXE_PATH", "BLANK_PATH", "PROBE_JS", "with_probe"]

Message = MutableMapping[str, Any]
ASGIApp = Callable[
    [Message, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
    Awaitable[None],
]

PROBE_PATH = "/__engine/probe.js"
BLANK_PATH = "/__engine/blank"
AXE_PATH = "/__engine/axe.js"
PROBE_TAG = f'<script src="{PROBE_PATH}"></script>'.encode()

PROBE_JS = b"""(() => {
  const errors = [], consoleErrors = [];
  window.__probe = { errors, consoleErrors };
  const text = (x) => (x instanceof Error ? `${x.name}: ${x.message}` : String(x));
  addEventListener("error", (e) => errors.push(`error: ${e.message || text(e.error)}`));
  addEventListener("unhandledrejection", (e) => errors.push(`unhandled rejection: ${text(e.reason)}`));
  const original = console.error;
  console.error = function (...args) {
    consoleErrors.push(args.map(text).join(" "));
    return original.apply(this, args);
  };
  window.__frames = 0;
  (function tick() { window.__frames++; requestAnimationFrame(tick); })();
  // What a test takes away before the page starts (set from the blank page): the APIs Safari
  // lacks, or an IndexedDB that refuses to open as private modes have.
  const without = JSON.parse(sessionStorage.getItem("pysse.engine.without") || "[]");
  const gone = {
    scheduler: () => { delete window.scheduler; },
    requestIdleCallback: () => { delete window.requestIdleCallback; delete window.cancelIdleCallback; },
    indexedDB: () => {
      // (on the prototype: WebKit ignores an own property assigned on indexedDB)
      Object.defineProperty(IDBFactory.prototype, "open", { configurable: true, value: () => {
        throw new DOMException("IndexedDB is disabled in private mode", "InvalidStateError"); } });
    },
  };
  for (const name of without) gone[name]();
})();
"""

BLANK_HTML = b"<!doctype html><meta charset=utf-8><title>blank</title>"


def with_probe(app: ASGIApp, scripts: dict[str, bytes] | None = None) -> ASGIApp:
    """``app`` (the page server) with the probe in its ``index.html``, a blank page, and
    ``scripts`` (path -> JavaScript) a test loads into the page (axe-core: the page's CSP
    allows same-origin scripts only)."""
    files = {
        PROBE_PATH: (PROBE_JS, "text/javascript"),
        BLANK_PATH: (BLANK_HTML, "text/html; charset=utf-8"),
        **{k: (v, "text/javascript") for k, v in (scripts or {}).items()},
    }

    async def wrapped(scope: Message, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "GET":
            return await app(scope, receive, send)
        path = scope["path"]
        if path in files:
            return await _send(send, *files[path])
        if path not in ("/", "/index.html"):
            return await app(scope, receive, send)
        # The page itself, uncompressed (no accept-encoding), with the probe first in <head>.
        headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"accept-encoding"]
        start: dict[str, Any] = {}
        body: list[bytes] = []

        async def capture(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            else:
                body.append(message.get("body", b""))

        await app({**scope, "headers": headers}, receive, capture)
        html = b"".join(body)
        if start.get("status") == 200:
            html = html.replace(b"<head>", b"<head>\n" + PROBE_TAG, 1)
        kept = [
            (k, v)
            for k, v in start.get("headers", [])
            if k.lower() not in (b"content-length", b"etag", b"last-modified")
        ]
        await send(
            {
                "type": "http.response.start",
                "status": start.get("status", 500),
                "headers": [*kept, (b"content-length", str(len(html)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": html})

    return wrapped


async def _send(send: Any, body: bytes, ctype: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", ctype.encode()),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
