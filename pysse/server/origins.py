"""Which web pages may use the relay, and CORS headers that let a refused page read why.

Why it is built this way:

* **Origins are compared with configuration, never with the request's Host.** A DNS
  rebinding page (``http://evil.example:8000`` resolving to 127.0.0.1) sends
  ``Host: evil.example:8000`` and ``Origin: http://evil.example:8000``: the two agree, so a
  "same origin as the Host" check lets it in. The relay knows where its own page is served
  (``own_origins``, given by whoever started the server) and which other pages may call it
  (``--allow-origin``); nothing else is trusted.
* **Refusals are readable.** A 4xx without ``Access-Control-Allow-Origin`` reaches the page
  as "TypeError: Failed to fetch". A refusal carries the requesting origin in that header
  (reading an error grants nothing: the key was not used) so the page can say what to change.
* **Each refusal is one log line** naming the origin and the fix, never the key.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

__all__ = ["OriginPolicy", "loopback_origins", "normalize_origin"]

log = logging.getLogger("pysse.relay")

# Headers the page sends by default; --allow-header adds more.
BASE_HEADERS = ("content-type", "authorization", "x-relay-secret")
EXPOSED = (
    "retry-after",
    "x-pysse-relay",
    "x-pysse-format",
    "x-pysse-answer-id",
    "x-pysse-resumed-from",
)

Verdict = Literal["same-origin", "allowed", "refused", "not-a-browser"]


def normalize_origin(origin: str) -> str:
    """``scheme://host[:port]`` lower-cased, default ports dropped; ValueError if it is not
    an http(s) origin."""
    parts = urlsplit(origin.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{origin!r} is not an origin like https://chat.example")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError(f"{origin!r} is not an origin: leave out the path (/...)")
    host = parts.hostname
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:  # not a number, or past 65535
        raise ValueError(f"{origin!r} is not an origin: its port is not 1 to 65535") from None
    default = 443 if parts.scheme == "https" else 80
    return f"{parts.scheme}://{host}" + (f":{port}" if port and port != default else "")


def loopback_origins(host: str, port: int) -> list[str]:
    """The origins a page served at ``host:port`` has: for a loopback or wildcard bind,
    every loopback name (a browser may open 127.0.0.1, localhost or [::1])."""
    names = {host}
    if host in ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::", ""):
        names = {"127.0.0.1", "localhost", "[::1]"}
    elif ":" in host:
        names = {f"[{host}]"}
    return sorted(f"http://{n}:{port}" for n in names)


@dataclass
class OriginPolicy:
    allow_origins: list[str] = field(default_factory=list)
    own_origins: list[str] = field(default_factory=list)
    extra_headers: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._allowed = {normalize_origin(o) for o in self.allow_origins if o != "*"}
        self._any = "*" in self.allow_origins
        self._own = {normalize_origin(o) for o in self.own_origins}
        self.headers = sorted({*BASE_HEADERS, *(h.strip().lower() for h in self.extra_headers)})

    def verdict(self, origin: str | None, served_at: tuple[str, int] | None = None) -> Verdict:
        """How to treat a request from ``origin``. ``served_at``: the (host, port) of the
        socket that accepted the request (never the Host header), when this server also
        serves the page: a page loaded from that address is same-origin."""
        if origin is None:
            return "not-a-browser"  # curl, SDKs, servers: no CORS, nothing to check
        try:
            o = normalize_origin(origin)
        except ValueError:
            return "refused"  # "null" (sandboxed frames, file://) and garbage
        if o in self._own:
            return "same-origin"
        if served_at is not None and o in loopback_origins(*served_at):
            return "same-origin"
        if self._any or o in self._allowed:
            return "allowed"
        return "refused"

    def headers_for(self, origin: str | None, verdict: Verdict) -> dict[str, str]:
        """CORS headers for a response to ``origin``: the full set when allowed; for a
        refusal only what lets the page read the refusal."""
        if origin is None or verdict in ("same-origin", "not-a-browser"):
            return {}
        base = {
            "access-control-allow-origin": origin,
            "vary": "origin",
            "access-control-expose-headers": ", ".join(EXPOSED),
        }
        if verdict == "allowed":
            base["access-control-allow-headers"] = ", ".join(self.headers)
            base["access-control-allow-methods"] = "POST, GET, DELETE, OPTIONS"
            base["access-control-max-age"] = "600"
        return base

    def refusal_message(self, origin: str) -> str:
        return (
            f"this relay does not allow the origin {origin}; start it with --allow-origin {origin}"
        )

    def missing_headers(self, requested: Iterable[str]) -> list[str]:
        allowed = set(self.headers)
        return [h for h in (r.strip().lower() for r in requested) if h and h not in allowed]


def log_refusal(method: str, path: str, origin: str | None, why: str) -> None:
    """One line per refusal (rate-limited by the server's log filter), never the key."""
    who = f"origin {origin}" if origin else "a non-browser client"
    log.warning("refused %s %s from %s: %s", method, path, who, why)
