"""The relay's request handler: who may ask (origins, the shared secret), what they ask (a
new answer, a resume, Stop, or the relay's description), and the checks a request passes
before anything is forwarded (body size and deadlines, strict JSON, the model). Every
refusal is a JSON error with CORS headers and one log line naming the fix."""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .body import json_error, read_json_body
from .config import Refusal, RelayConfig, check_model
from .forward import Forwarder, upstream_pool
from .native import native_paths
from .origins import OriginPolicy, log_refusal
from .resume import Answers, TailResponse
from .routing import model_list
from .serve import Stopped
from .upstream import UpstreamPool

__all__ = ["models_endpoint", "relay_endpoint"]


def relay_endpoint(
    cfg: RelayConfig,
    client: httpx.AsyncClient | UpstreamPool | None = None,
    *,
    path_model: bool = False,
    path_format: str | None = None,
    answers: Answers | None = None,
    forwarder: Forwarder | None = None,
) -> Callable[[Request], Awaitable[Response | TailResponse]]:
    """The relay's request handler. ``path_model``: the model is taken from the route's
    ``{model}`` (Gemini's native path) instead of the body. ``path_format``: the route is
    that format's native path, so the model's upstream must speak it (``/relay`` takes
    any). ``answers``, ``forwarder``: shared by every route of one relay (made from ``cfg``
    if not given)."""
    if forwarder is None:
        pool = client if isinstance(client, UpstreamPool) else upstream_pool(cfg, client)
        forwarder = Forwarder(cfg, pool, cfg.answers() if answers is None else answers)
    answers = forwarder.answers
    forward = forwarder.forward
    metrics = forwarder.metrics
    policy = OriginPolicy(cfg.allow_origins, cfg.own_origins, cfg.allow_headers)
    ident = {
        "x-pysse-relay": "1",
        "x-pysse-format": cfg.format,
        "x-content-type-options": "nosniff",
    }

    async def endpoint(request: Request) -> Response | TailResponse:
        metrics.start()  # the lag monitor, in the server's own event loop
        origin = request.headers.get("origin")
        server = request.scope.get("server")
        served_at = (str(server[0]), int(server[1])) if cfg.serves_page and server else None
        verdict = policy.verdict(origin, served_at)
        cors = {**ident, **policy.headers_for(origin, verdict)}
        method, path = request.method, request.scope["path"]  # not .url: it builds a URL

        def refuse(status: int, kind: str, message: str, log_it: bool = True) -> Response:
            if log_it:
                log_refusal(method, path, origin, message)
            return json_error(status, kind, message, cors)

        if verdict == "refused":
            assert origin is not None
            return refuse(403, "origin_not_allowed", policy.refusal_message(origin))
        if method == "OPTIONS":
            requested = request.headers.get("access-control-request-headers", "").split(",")
            missing = policy.missing_headers(requested)
            if missing:
                log_refusal(
                    method,
                    path,
                    origin,
                    f"the request header {', '.join(missing)} is not allowed; start the relay "
                    f"with {' '.join('--allow-header ' + h for h in missing)}",
                )
            return Response(status_code=204, headers=cors)
        resuming = "answer" in request.query_params and method in ("GET", "DELETE")
        if method == "GET" and not resuming:  # what the page asks to diagnose a failure
            return JSONResponse(
                {
                    "relay": "pysse",
                    "format": cfg.format,
                    "upstreams": [{"name": u.name, "format": u.format} for u in cfg.upstreams],
                    "models": "/v1/models",
                    "allow_headers": policy.headers,
                    "secret_required": bool(cfg.shared_secret),
                },
                headers={**cors, "cache-control": "no-store"},
            )
        if cfg.shared_secret:
            given = request.headers.get("x-relay-secret", "")
            if not hmac.compare_digest(given.encode(), cfg.shared_secret.encode()):
                what = "wrong" if given else "missing"
                return refuse(
                    401,
                    "relay_secret",
                    f"{what} relay secret: add the line 'X-Relay-Secret: <the secret>' to "
                    "Settings → Extra request headers",
                )
        if resuming:
            if answers is None:
                return refuse(404, "resume_off", "this relay does not keep answers (--no-resume)")
            if method == "GET":
                return await answers.resume(request, cors)
            return await answers.stop_request(request, cors)
        if method != "POST":
            return refuse(405, "method_not_allowed", f"{method} needs ?answer=ID")
        got = await read_json_body(
            request,
            cfg.max_body,
            cors,
            idle_s=min(10.0, cfg.body_timeout),
            total_s=cfg.body_timeout,
        )
        if isinstance(got, Response):
            log_refusal(method, path, origin, f"bad request body ({got.status_code})")
            return got
        _, body = got
        try:
            up = check_model(cfg, body, request.path_params.get("model") if path_model else None)
            model = body.get("model")
            url = up.url_for(model if isinstance(model, str) else None)
        except Refusal as exc:
            return refuse(exc.status, exc.kind, str(exc), exc.log_it)
        except ValueError as exc:
            return refuse(400, "invalid_model", str(exc))
        cors["x-pysse-format"] = up.format  # what the page decodes: this upstream's format
        if path_format is not None and up.format != path_format:
            paths = " or ".join(p.replace("{model}", "MODEL") for p in native_paths(up.provider))
            return refuse(
                400,
                "wrong_format",
                f"model {str(model)[:100]!r} is served by upstream {up.name} in "
                f"{up.provider.label} ({up.format}): POST it to {paths} or /relay",
            )
        if path_model:
            body.pop("model", None)  # Gemini takes the model from the path only
        try:
            return await forward(url, body, cors, request.is_disconnected, up)
        except Stopped:
            return json_error(503, "relay_stopping", "the relay is shutting down", cors)

    return endpoint


def models_endpoint(cfg: RelayConfig) -> Callable[[Request], Awaitable[Response]]:
    """``GET /v1/models``: the models the relay serves (``routing.model_list``), for the
    pages its origins allow (CORS as for ``/relay``) and for SDKs (no origin). No shared
    secret, like the relay's own description (``GET /relay``): it names models and formats,
    never a key or a key's variable."""
    policy = OriginPolicy(cfg.allow_origins, cfg.own_origins, cfg.allow_headers)
    listing = model_list(cfg.upstreams, cfg.allowed_models)

    async def endpoint(request: Request) -> Response:
        origin = request.headers.get("origin")
        server = request.scope.get("server")
        served_at = (str(server[0]), int(server[1])) if cfg.serves_page and server else None
        verdict = policy.verdict(origin, served_at)
        cors = {"x-content-type-options": "nosniff", **policy.headers_for(origin, verdict)}
        if verdict == "refused":
            assert origin is not None
            message = policy.refusal_message(origin)
            log_refusal(request.method, request.scope["path"], origin, message)
            return json_error(403, "origin_not_allowed", message, cors)
        if request.method == "OPTIONS":
            return Response(status_code=204, headers=cors)
        return JSONResponse(listing, headers={**cors, "cache-control": "no-store"})

    return endpoint
