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
from .origins import OriginPolicy, log_refusal
from .resume import Answers, TailResponse
from .serve import Stopped
from .upstream import UpstreamPool

__all__ = ["relay_endpoint"]


def relay_endpoint(
    cfg: RelayConfig,
    client: httpx.AsyncClient | UpstreamPool | None = None,
    *,
    path_model: bool = False,
    answers: Answers | None = None,
    forwarder: Forwarder | None = None,
) -> Callable[[Request], Awaitable[Response | TailResponse]]:
    """The relay's request handler. ``path_model``: the model is taken from the route's
    ``{model}`` (Gemini's native path) instead of the body. ``answers``, ``forwarder``:
    shared by every route of one relay (made from ``cfg`` if not given)."""
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
            check_model(cfg, body, request.path_params.get("model") if path_model else None)
            url = cfg.url_for(body)
        except Refusal as exc:
            return refuse(exc.status, exc.kind, str(exc), exc.log_it)
        except ValueError as exc:
            return refuse(400, "invalid_model", str(exc))
        if path_model:
            body.pop("model", None)  # Gemini takes the model from the path only
        try:
            return await forward(url, body, cors, request.is_disconnected)
        except Stopped:
            return json_error(503, "relay_stopping", "the relay is shutting down", cors)

    return endpoint
