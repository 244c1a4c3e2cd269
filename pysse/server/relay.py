"""The reference relay: keeps the provider API key server-side and streams the upstream's
bytes straight back, unbuffered and unchanged.

    python -m pysse.server.relay --upstream https://api.openai.com/v1 \\
        --api-key-env OPENAI_API_KEY [--format openai-chat] \\
        [--allow-origin https://chat.example] [--port 8787]

What it guarantees, and why:

* **Byte-exact passthrough.** The relay never parses or re-frames the stream; each upstream
  chunk is written as it arrives (``X-Accel-Buffering: no`` tells nginx-style proxies not to
  buffer either). The browser's parser sees exactly what the provider sent.
* **Stop travels.** When the browser disconnects (Stop, closed tab), the upstream request is
  closed at once, so no paid generation continues for nobody.
* **The key stays here.** It is read from the environment, added to the upstream request, and
  never logged, echoed, or included in an error.
* **Guards.** CORS only for the configured origins, a request body limit, an optional model
  allow-list, an optional shared secret the page must send, and connect / first-byte / idle
  timeouts on the upstream.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..errors import ConfigError
from ..jsonsafe import loads_bounded
from ..providers import PROVIDERS, Provider, error_message, get_provider

__all__ = ["RelayConfig", "create_relay_app", "json_error", "read_json_body", "relay_endpoint"]


@dataclass
class RelayConfig:
    upstream: str
    format: str = "openai-chat"
    api_key: str | None = field(default=None, repr=False)
    allow_origins: list[str] = field(default_factory=list)
    max_body: int = 1 << 20
    allowed_models: list[str] = field(default_factory=list)
    shared_secret: str | None = field(default=None, repr=False)
    connect_timeout: float = 10.0
    first_byte_timeout: float = 60.0
    idle_timeout: float = 60.0
    max_connections: int = 1000
    keepalive: int = 0  # pooled idle upstream connections (see relay_endpoint)

    @classmethod
    def from_args(
        cls,
        upstream: str,
        api_key_env: str | None,
        fmt: str | None,
        allow_origins: list[str],
        **kw: Any,
    ) -> RelayConfig:
        key = os.environ.get(api_key_env) if api_key_env else None
        if api_key_env and not key:
            raise ConfigError(
                f"the environment variable {api_key_env} is not set: export it with the "
                "upstream's API key, or leave out --api-key-env for a keyless upstream"
            )
        return cls(
            upstream=upstream.rstrip("/"),
            format=fmt or guess_format(upstream),
            api_key=key,
            allow_origins=allow_origins,
            **kw,
        )

    @property
    def provider(self) -> Provider:
        return get_provider(self.format)

    def url_for(self, body: dict[str, Any]) -> str:
        """The upstream URL: used as given if it already names an endpoint, else the
        format's endpoint is appended to it (``.../v1`` + ``/chat/completions``)."""
        return self.provider.upstream_url(self.upstream, str(body.get("model") or ""))

    def auth_headers(self) -> dict[str, str]:
        return self.provider.auth_headers(self.api_key) if self.api_key else {}


def guess_format(upstream: str) -> str:
    u = upstream.lower()
    if "anthropic" in u or u.endswith("/messages"):
        return "anthropic"
    if "generativelanguage" in u or "gemini" in u:
        return "gemini"
    if u.endswith("/responses"):
        return "openai-responses"
    return "openai-chat"


def json_error(
    status: int, kind: str, message: str, headers: dict[str, str] | None = None
) -> Response:
    """The one error shape both the relay and the demo answer with."""
    return JSONResponse({"error": {"type": kind, "message": message}}, status, headers=headers)


async def read_json_body(
    request: Request, limit: int, headers: dict[str, str] | None = None, allow_empty: bool = False
) -> tuple[bytes, dict[str, Any]] | Response:
    """The request body (at most ``limit`` bytes) and its JSON object, or the error to send:
    413 past the limit (stopping the read there), 400 if it is not a JSON object."""
    parts: list[bytes] = []
    size = 0
    async for part in request.stream():
        parts.append(part)
        size += len(part)
        if size > limit:
            return json_error(413, "request_too_large", f"request body over {limit} bytes", headers)
    raw = b"".join(parts)
    try:
        obj = loads_bounded(raw or (b"{}" if allow_empty else b""))
    except ValueError:
        obj = None
    if not isinstance(obj, dict):
        return json_error(400, "invalid_json", "the request body must be a JSON object", headers)
    return raw, obj


def relay_endpoint(
    cfg: RelayConfig, client: httpx.AsyncClient | None = None
) -> Callable[[Request], Awaitable[Response]]:
    http = client or httpx.AsyncClient(
        timeout=httpx.Timeout(
            connect=cfg.connect_timeout, read=cfg.first_byte_timeout, write=30.0, pool=10.0
        ),
        follow_redirects=False,
        # Every streaming chat holds a connection for its whole answer: httpx's default of
        # 100 would queue the 101st chat's first byte behind someone else's answer. Reusing
        # pooled connections gave multi-second first-byte stalls under 200 concurrent chats
        # in `build.py bench` (not yet understood), so keep-alive is opt-in.
        limits=httpx.Limits(
            max_connections=cfg.max_connections, max_keepalive_connections=cfg.keepalive
        ),
    )

    def cors(request: Request) -> dict[str, str] | None:
        origin = request.headers.get("origin")
        own = f"{request.url.scheme}://{request.url.netloc}"
        if origin is None or origin == own:
            return {}  # not a browser, or the page this server serves itself (same origin)
        if origin in cfg.allow_origins:
            return {
                "access-control-allow-origin": origin,
                "vary": "origin",
                "access-control-allow-headers": "content-type, authorization, x-relay-secret",
                "access-control-allow-methods": "POST, OPTIONS",
                "access-control-expose-headers": "retry-after",
            }
        return None

    async def endpoint(request: Request) -> Response:
        cors_headers = cors(request)
        if cors_headers is None:
            return json_error(403, "origin_not_allowed", "this origin may not use the relay")
        if request.method == "OPTIONS":
            return Response(status_code=204, headers=cors_headers)
        if cfg.shared_secret:
            given = request.headers.get("x-relay-secret", "")
            if not hmac.compare_digest(given.encode(), cfg.shared_secret.encode()):
                return json_error(
                    401, "unauthorized", "missing or wrong relay secret", cors_headers
                )
        got = await read_json_body(request, cfg.max_body, cors_headers)
        if isinstance(got, Response):
            return got
        raw, body = got
        if cfg.allowed_models and body.get("model") not in cfg.allowed_models:
            return json_error(
                400,
                "model_not_allowed",
                f"model {body.get('model')!r} is not allowed by this relay",
                cors_headers,
            )
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            **cfg.auth_headers(),
        }
        req = http.build_request("POST", cfg.url_for(body), content=raw, headers=headers)
        try:
            upstream = await http.send(req, stream=True)
        except httpx.TimeoutException:
            return json_error(
                504, "upstream_timeout", "the upstream did not answer in time", cors_headers
            )
        except httpx.HTTPError as exc:
            return json_error(
                502,
                "upstream_unreachable",
                f"could not reach the upstream ({type(exc).__name__})",
                cors_headers,
            )
        if upstream.status_code != 200:
            detail = (await upstream.aread())[:4000].decode("utf-8", "replace")
            await upstream.aclose()
            message = error_message(detail, 4000)
            extra = dict(cors_headers)
            if "retry-after" in upstream.headers:
                extra["retry-after"] = upstream.headers["retry-after"]
            return json_error(
                upstream.status_code,
                "upstream_error",
                message or f"upstream answered {upstream.status_code}",
                extra,
            )

        async def passthrough() -> AsyncIterator[bytes]:
            it = upstream.aiter_raw().__aiter__()
            try:
                while True:
                    try:
                        chunk = await asyncio.wait_for(it.__anext__(), cfg.idle_timeout)
                    except StopAsyncIteration:
                        return
                    except (TimeoutError, httpx.HTTPError):
                        return  # the page sees the stream end without its terminal signal
                    yield chunk
            finally:
                await upstream.aclose()  # also runs when the browser disconnects

        out_headers = {
            "content-type": upstream.headers.get("content-type", "text/event-stream"),
            "cache-control": "no-cache",
            "x-accel-buffering": "no",
            **cors_headers,
        }
        return StreamingResponse(passthrough(), 200, headers=out_headers)

    return endpoint


def create_relay_app(cfg: RelayConfig, client: httpx.AsyncClient | None = None) -> Starlette:
    return Starlette(
        routes=[
            Route("/", relay_endpoint(cfg, client), methods=["POST", "OPTIONS"]),
            Route("/relay", relay_endpoint(cfg, client), methods=["POST", "OPTIONS"]),
        ]
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m pysse.server.relay", description=(__doc__ or "").split("\n\n")[0]
    )
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--api-key-env", required=True)
    ap.add_argument("--format", choices=list(PROVIDERS), default=None)
    ap.add_argument("--allow-origin", action="append", default=[])
    ap.add_argument("--allow-model", action="append", default=[])
    ap.add_argument("--secret-env", help="env var with a shared secret the page must send")
    ap.add_argument("--max-body", type=int, default=1 << 20)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8787)
    args = ap.parse_args(argv)
    try:
        cfg = RelayConfig.from_args(
            args.upstream,
            args.api_key_env,
            args.format,
            args.allow_origin,
            allowed_models=args.allow_model,
            max_body=args.max_body,
            shared_secret=os.environ.get(args.secret_env) if args.secret_env else None,
        )
    except ConfigError as exc:
        ap.error(str(exc))
    import uvicorn

    print(
        f"pysse relay: POST http://{args.host}:{args.port}/relay -> {cfg.upstream} ({cfg.format})",
        flush=True,
    )
    uvicorn.run(create_relay_app(cfg), host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
