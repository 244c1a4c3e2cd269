"""The reference relay: keeps the provider API key server-side and streams the upstream's
bytes straight back, unbuffered and unchanged.

    pip install 'pysse[relay]'
    pysse-relay --upstream https://api.openai.com/v1 --api-key-env OPENAI_API_KEY \\
        --allow-origin https://chat.example [--format openai-chat] [--port 8787]

What it guarantees, and why:

* **Byte-exact passthrough.** The relay never re-frames the stream; each upstream chunk is
  written as it arrives (``X-Accel-Buffering: no`` tells nginx-style proxies not to buffer
  either). It asks for ``identity`` encoding (and decodes gzip/deflate if an upstream
  compresses anyway). The only change ever made to the bytes: the API key, if an upstream
  echoes it, is replaced by ``[redacted]``.
* **The answer outlives the connection** (``pysse.server.resume``). Each answer gets an id
  (``X-Pysse-Answer-Id``) and its bytes are recorded; a page whose connection dropped asks for
  the rest from the byte it has (``GET ?answer=ID&from=N``) and gets exactly that, so a
  reload or a network cut never costs a second, billed generation.
* **Stop travels.** Stop is an explicit ``DELETE ?answer=ID`` that cancels the upstream at
  once; an answer nobody reads is cancelled after ``unwatched_timeout``. With
  ``resume=False`` (``--no-resume``) a disconnect cancels the upstream at once, as before.
* **The key stays here.** Read from the environment, added to the upstream request, scrubbed
  from whatever comes back, never logged.
* **Every refusal is a clean JSON error the page can read** (CORS headers included) and one
  log line naming the fix; nothing a client or an upstream sends produces a 500.
* **Guards.** Origins from configuration (never the request's Host: DNS rebinding), a body
  limit with read deadlines, strict JSON (no duplicate keys, bounded nesting), a model
  allow-list, model names that can never shape a URL, a shared secret, and connect /
  first-byte / idle / no-content / total timeouts on the upstream.
"""

from __future__ import annotations

import argparse
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, cast

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..chat import ChatStream
from ..errors import ConfigError
from ..providers import (
    PROVIDERS,
    Format,
    error_message,
)
from .body import json_error, read_json_body
from .config import (
    Refusal,
    RelayConfig,
    add_relay_arguments,
    check_model,
    config_from_args,
    guess_format,
)
from .native import ANY_METHOD, error_handlers, native_paths, not_streamed_endpoint, unary_paths
from .origins import OriginPolicy, log_refusal
from .resume import Answers, TailResponse
from .serve import STOPPING, ServerLimits, Stopped
from .upstream import Decompressor, Scrubber, UpstreamPool, read_capped

__all__ = [  # the configuration too, from .config: one import for a relay
    "RelayConfig",
    "add_relay_arguments",
    "config_from_args",
    "create_relay_app",
    "guess_format",
    "json_error",
    "main",
    "read_json_body",
    "relay_endpoint",
]

log = logging.getLogger("pysse.relay")


def upstream_pool(cfg: RelayConfig, client: httpx.AsyncClient | None = None) -> UpstreamPool:
    """The upstream connections: ``client`` if given (tests), else ``cfg.pool_shards`` pools."""
    if client is not None:
        return UpstreamPool([client])
    return UpstreamPool.create(
        cfg.connect_timeout,
        cfg.first_byte_timeout,
        cfg.max_connections,
        cfg.keepalive,
        cfg.ca_bundle,
        cfg.pool_shards,
    )


def relay_endpoint(
    cfg: RelayConfig,
    client: httpx.AsyncClient | UpstreamPool | None = None,
    *,
    path_model: bool = False,
    answers: Answers | None = None,
) -> Callable[[Request], Awaitable[Response | TailResponse]]:
    """The relay's request handler. ``path_model``: the model is taken from the route's
    ``{model}`` (Gemini's native path) instead of the body. ``answers``: shared by every
    route of one relay (made from ``cfg`` if not given)."""
    pool = client if isinstance(client, UpstreamPool) else upstream_pool(cfg, client)
    if answers is None:
        answers = cfg.answers()
    policy = OriginPolicy(cfg.allow_origins, cfg.own_origins, cfg.allow_headers)
    scrub_secrets = [cfg.api_key] if cfg.api_key else []
    ident = {
        "x-pysse-relay": "1",
        "x-pysse-format": cfg.format,
        "x-content-type-options": "nosniff",
    }

    async def endpoint(request: Request) -> Response | TailResponse:
        origin = request.headers.get("origin")
        server = request.scope.get("server")
        served_at = (str(server[0]), int(server[1])) if cfg.serves_page and server else None
        verdict = policy.verdict(origin, served_at)
        cors = {**ident, **policy.headers_for(origin, verdict)}
        method, path = request.method, request.url.path

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

    async def forward(
        url: str,
        body: dict[str, Any],
        cors: dict[str, str],
        gone: Callable[[], Awaitable[bool]] | None = None,
    ) -> Response | TailResponse:
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            "accept-encoding": "identity",
            **cfg.auth_headers(),
        }
        # The body as parsed and checked, re-serialised: what was checked is what is sent.
        content = json.dumps(body, ensure_ascii=False).encode()
        shard, http = pool.acquire()
        response: Response | TailResponse | None = None
        try:
            release = lambda: pool.release(shard)  # noqa: E731
            response = await send(http, url, content, headers, cors, release, gone)
            return response
        finally:
            if not isinstance(response, StreamingResponse | TailResponse):
                pool.release(shard)  # else the stream releases it when it ends

    async def send(
        http: httpx.AsyncClient,
        url: str,
        content: bytes,
        headers: dict[str, str],
        cors: dict[str, str],
        release: Callable[[], None],
        gone: Callable[[], Awaitable[bool]] | None = None,
    ) -> Response | TailResponse:
        async def post() -> httpx.Response:
            request = http.build_request("POST", url, content=content, headers=headers)
            return await STOPPING.race(http.send(request, stream=True), None)

        try:
            try:
                upstream = await post()
            except httpx.RemoteProtocolError:
                # A pooled connection the server closed as it was reused (its idle timeout
                # and ours crossed): the server sent nothing, so it processed nothing. Once,
                # on a connection of its own.
                log.info("upstream closed a reused connection; sending again")
                upstream = await post()
        except httpx.TimeoutException:
            log.warning("upstream timeout: no answer from %s", cfg.upstream)
            return json_error(504, "upstream_timeout", "the upstream did not answer in time", cors)
        except httpx.HTTPError as exc:
            log.warning("upstream unreachable: %s (%s)", cfg.upstream, type(exc).__name__)
            return json_error(
                502,
                "upstream_unreachable",
                f"the relay could not reach its upstream ({type(exc).__name__}); check "
                "--upstream and that the provider is up",
                cors,
            )
        status = upstream.status_code
        ctype = upstream.headers.get("content-type", "")
        scrub = Scrubber(scrub_secrets)
        if status == 200 and ctype.lower().startswith("text/event-stream"):
            try:
                dec = Decompressor.for_response(upstream)
            except ValueError as exc:
                await upstream.aclose()
                return json_error(502, "upstream_encoding", str(exc), cors)
            if answers is not None:
                if gone is not None and await gone():
                    # Stop before the first byte: the page left before it could learn the
                    # answer's id, so nobody could ever resume or stop it. Cancel now.
                    await upstream.aclose()
                    return Response(status_code=499)
                # The upstream is read by a task of its own into the record; this response
                # is one reader of it, like any later resume.
                source = passthrough(upstream, dec, scrub, release)
                answer_id = await answers.start(source, ctype)
                opened = await answers.store.open(answer_id, 0)
                return TailResponse(opened, answer_id, cors)
            return StreamingResponse(
                passthrough(upstream, dec, scrub, release),
                200,
                headers={
                    "content-type": ctype,
                    "cache-control": "no-cache",
                    "x-accel-buffering": "no",
                    **cors,
                },
            )
        raw, why = await read_capped(
            upstream, cfg.max_error_body, cfg.idle_timeout, cfg.first_byte_timeout
        )
        text = scrub.text(raw.decode("utf-8", "replace"))
        detail = error_message(text, 4000, ctype)
        if why:
            detail = f"{detail} ({why})" if detail else why
        extra = dict(cors)
        if 400 <= status <= 599:
            if "retry-after" in upstream.headers:
                extra["retry-after"] = scrub.text(upstream.headers["retry-after"])[:40]
            log.info("upstream answered %s", status)
            return json_error(
                status, "upstream_error", detail or f"the upstream answered {status}", extra
            )
        if status == 200:
            what = ctype.split(";", 1)[0].strip() or "no content type"
            message = (
                f"the upstream answered 200 with {what}, not an "
                f"event stream (check --upstream and --format): {detail}"
            )
        elif 300 <= status <= 399:
            message = f"the upstream answered a redirect ({status}); give --upstream the final URL"
        else:
            message = f"the upstream answered an unexpected status {status}: {detail}"
        log.warning("upstream answered %s %s", status, ctype)
        return json_error(502, "upstream_bad_response", message.rstrip(": "), extra)

    async def passthrough(
        upstream: httpx.Response,
        dec: Decompressor | None,
        scrub: Scrubber,
        release: Callable[[], None],
    ) -> AsyncIterator[bytes]:
        """The upstream's bytes as they arrive. Ends (without the format's terminal signal,
        so the page reports it as truncated) when the upstream is silent for the idle timeout,
        sends only keep-alives for the content timeout, or the answer's total deadline
        passes; a comment line says which."""
        # A copy of the bytes goes through a parser, to tell content from keep-alives.
        watch = ChatStream(cast(Format, cfg.format))
        it = upstream.aiter_raw().__aiter__()
        now = time.monotonic()
        last_content = now
        deadline = now + cfg.max_duration if cfg.max_duration else None
        note = ""
        try:
            while True:
                now = time.monotonic()
                waits = {"idle": cfg.idle_timeout}
                if not watch.done:
                    waits["content"] = last_content + cfg.content_timeout - now
                if deadline is not None:
                    waits["total"] = deadline - now
                kind, wait = min(waits.items(), key=lambda kv: kv[1])
                try:
                    if wait <= 0:
                        raise TimeoutError
                    chunk = await STOPPING.race(it.__anext__(), wait)
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    note = {
                        "idle": f"no bytes for {cfg.idle_timeout:g} s",
                        "content": f"only keep-alives for {cfg.content_timeout:g} s",
                        "total": f"the answer took over {cfg.max_duration or 0:g} s",
                    }[kind]
                    break
                except Stopped:
                    note = "the relay is shutting down"
                    break
                except httpx.HTTPError as exc:
                    note = f"the upstream connection broke ({type(exc).__name__})"
                    break
                for piece in dec.feed(chunk) if dec else [chunk]:
                    if watch.feed(piece) or watch.done:
                        last_content = time.monotonic()
                    out = scrub.feed(piece)
                    if out:
                        yield out
            tail = scrub.flush()
            if tail:
                yield tail
            if note:
                if not STOPPING.is_set():  # at shutdown the one line is "pysse: stopped"
                    log.warning("stream ended: %s", note)
                yield f"\n\n: pysse relay: stream ended, {note}\n\n".encode()
        finally:
            try:
                await upstream.aclose()  # also runs when the browser disconnects
            finally:
                release()

    return endpoint


def other_format_endpoint(cfg: RelayConfig, name: str) -> Callable[[Request], Awaitable[Response]]:
    """Another format's native path: a clear 404 saying where this relay listens."""

    async def endpoint(request: Request) -> Response:
        own = " or ".join(p.replace("{model}", "MODEL") for p in native_paths(cfg.provider))
        return json_error(
            404,
            "wrong_format",
            f"this relay forwards {cfg.provider.label} (--format {cfg.format}), not "
            f"{PROVIDERS[name].label}: POST to {own} or /relay",
        )

    return endpoint


def create_relay_app(
    cfg: RelayConfig, client: httpx.AsyncClient | None = None, answers: Answers | None = None
) -> Starlette:
    """The relay at ``/relay`` and ``/``, and at its format's native paths (``/v1/...``,
    ``pysse.server.native``) so an official SDK can use it as its base URL; other formats'
    paths say where to go, any other path is a JSON 404. ``answers``: the answer store and
    producers (made from ``cfg`` if not given; tests pass their own to look inside)."""
    http = upstream_pool(cfg, client)
    if answers is None:
        answers = cfg.answers()
    handler = relay_endpoint(cfg, http, answers=answers)
    methods = ["POST", "OPTIONS", "GET", "DELETE"]
    routes = [Route("/", handler, methods=methods), Route("/relay", handler, methods=methods)]
    own = cfg.provider
    native = relay_endpoint(cfg, http, path_model=own.model_in_path, answers=answers)
    routes += [Route(path, native, methods=methods) for path in native_paths(own)]
    refuse = not_streamed_endpoint(own)
    routes += [Route(path, refuse, methods=ANY_METHOD) for path in unary_paths(own)]
    served = [r.path for r in routes]
    for name, provider in PROVIDERS.items():
        routes += [
            Route(path, other_format_endpoint(cfg, name), methods=ANY_METHOD)
            for path in native_paths(provider)
            if path not in {r.path for r in routes}
        ]
    return Starlette(routes=routes, exception_handlers=error_handlers(served))


def main(argv: list[str] | None = None) -> int:
    """``pysse-relay`` / ``python -m pysse.server.relay``."""
    ap = argparse.ArgumentParser(
        prog="pysse-relay",
        description="Keep a provider API key server-side and stream its answers to a web page.",
    )
    add_relay_arguments(ap, upstream_required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8787)
    args = ap.parse_args(argv)
    try:
        cfg = config_from_args(args)
    except ConfigError as exc:
        ap.error(str(exc))
    from .serve import run

    origins = ", ".join(cfg.allow_origins) or "none (add --allow-origin for a web page)"
    # Never the Redis URL itself: it may hold a password.
    kept = "in Redis" if cfg.store.startswith("redis") or "://" in cfg.store else "in memory"
    print(
        f"pysse relay: POST http://{args.host}:{args.port}/relay -> {cfg.upstream} "
        f"({cfg.format}); pages allowed from: {origins}; answers kept for resuming: "
        f"{kept if cfg.resume else 'no (--no-resume)'}",
        flush=True,
    )
    run(
        create_relay_app(cfg),
        args.host,
        args.port,
        ServerLimits(max_connections=args.max_connections, header_timeout=args.header_timeout),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
