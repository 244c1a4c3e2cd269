"""The ASGI side (Starlette): the static chat page, the built-in demo relay, and optionally a
real relay to an upstream provider (``pysse.server.relay``).

Server-side only: not in the wheel the page loads, and it needs the ``serve`` extra.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Match, Mount, Route

from ..app.next_request import first_visit
from ..providers import PROVIDERS
from ..testing.asgi import ScriptResponse
from . import demo, demo_received
from .body import json_error, read_json_body
from .demo_relay import DemoAnswers, demo_models
from .endpoint import models_endpoint
from .forward import Forwarder
from .native import (
    ANY_METHOD,
    GEMINI_VERSIONS,
    error_handlers,
    native_paths,
    not_streamed_endpoint,
    unary_paths,
)
from .relay import RelayConfig, relay_endpoint
from .resume import TailResponse
from .static import PREFERENCE, CachedStatic, Encoding

MAX_BODY = 16 << 20  # a question with images (attachments.py: up to 5 MB each, in base64)
DEMO_PATHS = {name: p.demo_path for name, p in PROVIDERS.items()}


def demo_endpoint(fmt: str, default_pace: float = 1.0, kept: DemoAnswers | None = None) -> Any:
    kept = kept or DemoAnswers()

    async def endpoint(request: Request) -> Response | ScriptResponse | TailResponse:
        if request.method != "POST":  # resume or stop a kept answer (pysse.server.resume)
            return await kept.other(request)
        got = await read_json_body(request, MAX_BODY, allow_empty=True)
        if isinstance(got, Response):
            return got
        _, body = got
        try:
            prompt = demo.last_user_text(body)
            cont = demo.continuation(body)
        except ValueError as exc:
            return json_error(400, "invalid_request", str(exc))
        try:
            pace = float(request.headers.get("x-demo-pace", default_pace))
            seed = int(request.headers.get("x-demo-seed", "0") or 0)
        except ValueError:
            return json_error(
                400, "invalid_header", "X-Demo-Pace must be a number and X-Demo-Seed an integer"
            )
        if not pace >= 0:  # also NaN
            pace = default_pace
        # Played into the answer store (a page can resume it, like the real relay's); ended
        # at once when the server shuts down (Ctrl+C must not wait for a stream).
        partial = None
        if cont is not None:  # Continue: the rest of the answer to the original prompt
            prompt, partial = cont
        files = demo_received.describe(demo_received.received_files(body, fmt))
        script = demo.plan(
            fmt,
            prompt,
            seed=seed,
            pace=min(pace, 100.0),
            partial=partial,
            preface=files,
            model=demo.model_of(body),
        )
        return await kept.respond(script, demo.cut_after(script, prompt))

    return endpoint


def demo_routes(demo_pace: float = 1.0) -> list[Route]:
    """The demo relay at each format's native paths (``pysse.server.native``: what the
    official SDKs call, e.g. Gemini's under ``/v1/`` and ``/v1beta/``, any model name), a
    clear 400 for Gemini's non-streaming call, a JSON 404 for any other ``/v1`` path, and
    its models at ``GET /v1/models`` (``demo_relay.demo_models``)."""
    routes = [Route("/v1/models", demo_models, methods=["GET"])]
    kept = DemoAnswers()  # one store for every format's path
    methods = ["POST", "GET", "DELETE"]
    for name, provider in PROVIDERS.items():
        handler = demo_endpoint(name, demo_pace, kept)
        routes += [Route(path, handler, methods=methods) for path in native_paths(provider)]
        refuse = not_streamed_endpoint(provider)
        routes += [Route(path, refuse, methods=ANY_METHOD) for path in unary_paths(provider)]
    served = list(routes)
    refusal = error_handlers(r.path for r in served)[404]
    routes += [
        Route(f"/{v}/{{rest:path}}", _not_found(served, refusal), methods=ANY_METHOD)
        for v in GEMINI_VERSIONS
    ]
    return routes


def _not_found(served: list[Route], handler: Any) -> Any:
    """Any other ``/v1`` path: a JSON 404, or a JSON 405 for a served path asked with
    another method (the static files behind would answer with a page)."""

    async def endpoint(request: Request) -> Response:
        wrong_method = any(r.matches(request.scope)[0] == Match.PARTIAL for r in served)
        result: Response = await handler(request, HTTPException(405 if wrong_method else 404))
        return result

    return endpoint


def create_app(
    site: Path | None,
    *,
    upstream: str | None = None,
    api_key_env: str | None = None,
    upstream_format: str | None = None,
    allow_origins: list[str] | None = None,
    demo_pace: float = 1.0,
    relay: RelayConfig | None = None,
    forwarder: Forwarder | None = None,
    encodings: tuple[Encoding, ...] = PREFERENCE,
) -> Starlette:
    """The page at ``/``, the demo relay at the providers' usual paths, and (with
    ``relay``, or ``upstream`` and friends) a real relay at ``/relay``. The page served here
    is same-origin for the relay (recognised by the listening socket's address, never the
    Host header). ``forwarder``: the relay's pools and answer store, already made and checked
    at start (``startup.start_relay``; else made here). ``encodings``: the precompressed
    files it may send (``()``: every file as it is, as before #14)."""
    routes: list[Any] = demo_routes(demo_pace)
    relay_cfg: dict[str, Any] = {}
    if relay is None and upstream:
        relay = RelayConfig.from_args(upstream, api_key_env, upstream_format, allow_origins or [])
    if relay is not None:
        relay.serves_page = True
        # The relay's models, not the demo's: a page picks among what /relay serves.
        routes.insert(0, Route("/v1/models", models_endpoint(relay), methods=["GET", "OPTIONS"]))
        routes.append(
            Route(
                "/relay",
                relay_endpoint(relay, forwarder=forwarder),
                methods=["POST", "OPTIONS", "GET", "DELETE"],
            )
        )
        relay_cfg = {"relay": "/relay", "format": relay.format}

    if site is not None:
        site_json = json.loads((site / "site.json").read_text())
        site_json.update(relay_cfg)
        site_json["demo"] = DEMO_PATHS
        site_json.pop("first", None)  # (made for the site as built: this one is served)
        first = first_visit(site_json)
        if first is not None:  # a first visit's message goes out before Python is up
            site_json["first"] = first

        async def site_config(request: Request) -> Response:
            return JSONResponse(site_json, headers={"cache-control": "no-cache"})

        files = CachedStatic(directory=str(site), encodings=encodings)

        async def index(request: Request) -> Response:
            page = site / "index.html"
            resp = files.file_response(page, os.stat(page), request.scope)
            resp.headers["cache-control"] = "no-cache"
            return resp

        routes += [
            Route("/site.json", site_config),
            Route("/", index),
            Mount("/", files, name="site"),
        ]
    served = [
        r.path
        for r in routes
        if isinstance(r, Route) and r.path.startswith(("/v1", "/relay")) and "{rest" not in r.path
    ]
    return Starlette(routes=routes, exception_handlers=error_handlers(served))
