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
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
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
    Provider,
    error_message,
    get_provider,
    valid_model_name,
)
from .body import json_error, read_json_body
from .origins import OriginPolicy, log_refusal, normalize_origin
from .resume import Answers, TailResponse
from .serve import STOPPING, ServerLimits, Stopped
from .store import check_store, open_store
from .upstream import Decompressor, Scrubber, UpstreamPool, read_capped

__all__ = [
    "RelayConfig",
    "create_relay_app",
    "guess_format",
    "json_error",
    "main",
    "read_json_body",
    "relay_endpoint",
]

log = logging.getLogger("pysse.relay")


@dataclass
class RelayConfig:
    upstream: str
    format: str = "openai-chat"
    api_key: str | None = field(default=None, repr=False)
    allow_origins: list[str] = field(default_factory=list)
    own_origins: list[str] = field(default_factory=list)  # where this server's page lives
    serves_page: bool = False  # the page is served by this same server (build.py serve)
    allow_headers: list[str] = field(default_factory=list)  # beyond content-type, secret
    max_body: int = 1 << 20
    allowed_models: list[str] = field(default_factory=list)
    shared_secret: str | None = field(default=None, repr=False)
    connect_timeout: float = 10.0
    first_byte_timeout: float = 60.0
    idle_timeout: float = 60.0
    content_timeout: float = 300.0  # no chat content (only keep-alives) for this long: end
    max_duration: float | None = None  # end any answer after this many seconds
    body_timeout: float = 30.0  # the client's request body must arrive within this
    max_error_body: int = 64 * 1024  # bytes of an upstream error body read, at most
    max_connections: int = 1000
    keepalive: int = 1000  # pooled idle upstream connections (0: a new connection per chat)
    ca_bundle: str | None = None  # PEM file of CAs to trust for the upstream (else the system's)
    pool_shards: int = 32  # upstream connection pools (see UpstreamPool: why more than one)
    resume: bool = True  # record answers so a dropped page can resume (pysse.server.resume)
    store: str = "memory"  # where answers are kept: "memory" or "redis://host:port/db"
    answer_ttl: float = 600.0  # an ended answer is kept this long for resumes
    store_max_bytes: int = 64 << 20  # all recorded answers together (memory store)
    unwatched_timeout: float = 120.0  # cancel an answer nobody has read for this long

    def __post_init__(self) -> None:
        get_provider(self.format)  # a ValueError naming the valid formats
        for origin in [*self.allow_origins, *self.own_origins]:
            if origin != "*":
                normalize_origin(origin)  # a ValueError saying what an origin looks like
        if self.resume:
            check_store(self.store, self.unwatched_timeout)

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
        if not upstream.startswith(("http://", "https://")):
            raise ConfigError(
                f"--upstream {upstream!r} is not a URL: give the provider's base URL, "
                "e.g. https://api.openai.com/v1"
            )
        try:
            return cls(
                upstream=upstream.rstrip("/"),
                format=fmt or guess_format(upstream),
                api_key=key,
                allow_origins=allow_origins,
                **kw,
            )
        except ValueError as exc:
            raise ConfigError(str(exc)) from None

    @property
    def provider(self) -> Provider:
        return get_provider(self.format)

    def url_for(self, body: dict[str, Any]) -> str:
        """The upstream URL: used as given if it already names an endpoint, else the
        format's endpoint is appended to it (``.../v1`` + ``/chat/completions``). A model
        that would go into the path must be a plain name (``ValueError`` otherwise)."""
        model = body.get("model")
        return self.provider.upstream_url(self.upstream, model if isinstance(model, str) else "")

    def auth_headers(self) -> dict[str, str]:
        return self.provider.auth_headers(self.api_key) if self.api_key else {}

    def answers(self) -> Answers | None:
        """The answer store and producers (None with ``resume=False``)."""
        if not self.resume:
            return None
        store = open_store(self.store, self.answer_ttl, self.store_max_bytes)
        return Answers(store, self.unwatched_timeout)


def guess_format(upstream: str) -> str:
    u = upstream.lower()
    if "anthropic" in u or u.endswith("/messages"):
        return "anthropic"
    if "generativelanguage" in u or "gemini" in u:
        return "gemini"
    if u.endswith("/responses"):
        return "openai-responses"
    return "openai-chat"


class Refusal(Exception):
    """A request the relay answers with a JSON error instead of forwarding."""

    def __init__(self, status: int, kind: str, message: str, log_it: bool = True) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.log_it = log_it


def check_model(cfg: RelayConfig, body: dict[str, Any], path_model: str | None) -> None:
    model = body.get("model")
    if model is not None and not isinstance(model, str):
        raise Refusal(400, "invalid_model", "the model must be a string")
    if path_model is not None:
        if model is not None and model != path_model:
            raise Refusal(400, "invalid_model", "the body's model differs from the path's")
        body["model"] = model = path_model
    if model is not None and any(ord(c) < 0x20 or c == "\x7f" for c in model):
        raise Refusal(400, "invalid_model", "the model name contains control characters")
    if cfg.allowed_models and model not in cfg.allowed_models:
        shown = json.dumps(model)[:100] if model is not None else "(none)"
        raise Refusal(
            400,
            "model_not_allowed",
            f"model {shown} is not allowed by this relay (allowed: "
            f"{', '.join(cfg.allowed_models)})",
        )
    if cfg.provider.model_in_path and model is not None:
        name = model.removeprefix("models/")
        if not valid_model_name(name):
            raise Refusal(
                400,
                "invalid_model",
                "invalid model name: use letters, digits, '.', '-' and '_'",
            )


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
        try:
            try:
                upstream = await STOPPING.race(
                    http.send(
                        http.build_request("POST", url, content=content, headers=headers),
                        stream=True,
                    ),
                    None,
                )
            except httpx.RemoteProtocolError:
                # A pooled connection the server closed as it was reused (its idle timeout
                # and ours crossed): the server sent nothing, so it processed nothing. Once,
                # on a connection of its own.
                log.info("upstream closed a reused connection; sending again")
                upstream = await STOPPING.race(
                    http.send(
                        http.build_request("POST", url, content=content, headers=headers),
                        stream=True,
                    ),
                    None,
                )
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
        own = cfg.provider.demo_path.split("?", 1)[0]
        return json_error(
            404,
            "wrong_format",
            f"this relay forwards {cfg.provider.label} (--format {cfg.format}), not "
            f"{PROVIDERS[name].label}: POST to {own} or /relay",
        )

    return endpoint


def native_path(provider: Provider) -> str:
    """A format's usual path (``/v1/chat/completions``; Gemini's with a ``{model}``)."""
    path = provider.demo_path.split("?", 1)[0]
    if provider.model_in_path:
        prefix, _, method = path.rpartition("/")
        return prefix + "/{model}:" + method.split(":", 1)[1]
    return path


def create_relay_app(
    cfg: RelayConfig, client: httpx.AsyncClient | None = None, answers: Answers | None = None
) -> Starlette:
    """The relay at ``/relay`` and ``/``, and at its format's native path (``/v1/...``) so an
    official SDK can use it as its base URL. ``answers``: the answer store and producers
    (made from ``cfg`` if not given; tests pass their own to look inside)."""
    http = upstream_pool(cfg, client)
    if answers is None:
        answers = cfg.answers()
    handler = relay_endpoint(cfg, http, answers=answers)
    methods = ["POST", "OPTIONS", "GET", "DELETE"]
    routes = [Route("/", handler, methods=methods), Route("/relay", handler, methods=methods)]
    for name, provider in PROVIDERS.items():
        path = native_path(provider)
        if name == cfg.format:
            routes.append(
                Route(
                    path,
                    relay_endpoint(cfg, http, path_model=provider.model_in_path, answers=answers),
                    methods=methods,
                )
            )
        elif path not in {r.path for r in routes}:
            routes.append(Route(path, other_format_endpoint(cfg, name), methods=["POST"]))
    return Starlette(routes=routes)


def add_relay_arguments(ap: argparse.ArgumentParser, upstream_required: bool) -> None:
    """The relay's options, shared by ``pysse-relay`` and ``build.py serve --upstream``."""
    ap.add_argument(
        "--upstream",
        required=upstream_required,
        help="the provider's base URL, e.g. https://api.openai.com/v1 (or a full endpoint URL)",
    )
    ap.add_argument(
        "--api-key-env",
        default=None,
        help="the environment variable holding the upstream's API key (leave out for a "
        "keyless upstream such as a local server)",
    )
    ap.add_argument("--format", choices=list(PROVIDERS), default=None, help="the wire format")
    ap.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a web page origin that may use the relay, e.g. https://chat.example (repeat)",
    )
    ap.add_argument(
        "--allow-header",
        action="append",
        default=[],
        metavar="NAME",
        help="an extra request header pages may send (repeat)",
    )
    ap.add_argument("--allow-model", action="append", default=[], metavar="MODEL")
    ap.add_argument("--secret-env", help="env var with a shared secret the page must send")
    ap.add_argument("--max-body", type=int, default=1 << 20)
    ap.add_argument("--content-timeout", type=float, default=300.0, metavar="SECONDS")
    ap.add_argument("--max-duration", type=float, default=None, metavar="SECONDS")
    ap.add_argument("--max-connections", type=int, default=1000)
    ap.add_argument("--header-timeout", type=float, default=10.0, metavar="SECONDS")
    ap.add_argument(
        "--no-keepalive", action="store_true", help="a new upstream connection for every chat"
    )
    ap.add_argument(
        "--ca-bundle", metavar="PEM", help="trust these CAs for the upstream (self-signed TLS)"
    )
    ap.add_argument(
        "--no-resume",
        action="store_true",
        help="keep no record of answers: a dropped connection cancels the upstream at once",
    )
    ap.add_argument(
        "--store",
        default="memory",
        metavar="URL",
        help="where answers are kept for resuming: memory (default) or redis://host:port/db "
        "(several relay processes sharing one Redis can resume each other's answers)",
    )
    ap.add_argument("--answer-ttl", type=float, default=600.0, metavar="SECONDS")
    ap.add_argument("--store-max-bytes", type=int, default=64 << 20, metavar="BYTES")
    ap.add_argument("--unwatched-timeout", type=float, default=120.0, metavar="SECONDS")


def config_from_args(args: argparse.Namespace, **kw: Any) -> RelayConfig:
    secret = None
    if args.secret_env:
        secret = os.environ.get(args.secret_env)
        if not secret:
            raise ConfigError(
                f"the environment variable {args.secret_env} is not set: export the shared "
                "secret the page must send, or leave out --secret-env"
            )
    return RelayConfig.from_args(
        args.upstream,
        args.api_key_env,
        args.format,
        args.allow_origin,
        allow_headers=args.allow_header,
        allowed_models=args.allow_model,
        max_body=args.max_body,
        shared_secret=secret,
        content_timeout=args.content_timeout,
        max_duration=args.max_duration,
        max_connections=args.max_connections,
        keepalive=0 if args.no_keepalive else args.max_connections,
        ca_bundle=args.ca_bundle,
        resume=not args.no_resume,
        store=args.store,
        answer_ttl=args.answer_ttl,
        store_max_bytes=args.store_max_bytes,
        unwatched_timeout=args.unwatched_timeout,
        **kw,
    )


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
