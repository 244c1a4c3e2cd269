"""The reference relay: keeps the provider API key server-side and streams the upstream's
bytes straight back, unbuffered and unchanged.

    pip install 'pysse[relay]'
    pysse-relay --upstream https://api.openai.com/v1 --api-key-env OPENAI_API_KEY \\
        --allow-origin https://chat.example [--format openai-chat] [--port 8787]

Several upstreams: ``--upstream NAME=URL`` (repeat) with ``--upstream-key-env``,
``--upstream-format`` and ``--upstream-models NAME=...`` (``named_upstreams``); a request
goes to the upstream serving its model (``routing``), and ``GET /v1/models`` lists them.

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

Where each job lives: the routes and the command line here; the request handler in
``endpoint``; the upstream request and its error answers in ``forward``; the per-chunk path
and its deadlines in ``stream`` (and ``watch``, content or keep-alive); answers kept for
resuming in ``resume``, ``store``, ``record`` and ``redis_store``; the numbers in
``metrics``; the checks a start can fail in ``startup`` (each one line on stderr and exit
status 2, ``command_line``).
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..errors import ConfigError
from ..providers import PROVIDERS
from .body import json_error, read_json_body
from .command_line import OneLineParser, exit_with, port_number
from .config import RelayConfig, add_relay_arguments, config_from_args, guess_format
from .endpoint import models_endpoint, relay_endpoint
from .forward import Forwarder, upstream_pool
from .metrics import metrics_endpoint
from .native import ANY_METHOD, error_handlers, native_paths, not_streamed_endpoint, unary_paths
from .resume import Answers
from .serve import ServerLimits, run
from .startup import start_server

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
    "upstream_pool",
    "upstreams_line",
]


def served_formats(cfg: RelayConfig) -> list[str]:
    """The wire formats of the relay's upstreams, the first upstream's first."""
    return list(dict.fromkeys(u.format for u in cfg.upstreams))


def upstreams_line(cfg: RelayConfig) -> str:
    """Where the relay forwards, for the banner: ``URL (format)``, or with several upstreams
    ``NAME: URL (format; models)`` for each (never a key: only its upstream's name)."""
    if len(cfg.upstreams) == 1:
        return f"{cfg.upstream} ({cfg.format})"
    return ", ".join(
        f"{u.name}: {u.url} ({u.format}{'; ' + ','.join(u.models) if u.models else ''})"
        for u in cfg.upstreams
    )


def other_format_endpoint(cfg: RelayConfig, name: str) -> Callable[[Request], Awaitable[Response]]:
    """Another format's native path: a clear 404 saying where this relay listens."""

    async def endpoint(request: Request) -> Response:
        served = [PROVIDERS[f] for f in served_formats(cfg)]
        own = " or ".join(p.replace("{model}", "MODEL") for f in served for p in native_paths(f))
        what = ", ".join(f"{p.label} ({p.name})" for p in served)
        return json_error(
            404,
            "wrong_format",
            f"this relay forwards {what}, not {PROVIDERS[name].label}: POST to {own} or /relay",
        )

    return endpoint


def create_relay_app(
    cfg: RelayConfig,
    client: httpx.AsyncClient | None = None,
    answers: Answers | None = None,
    *,
    forwarder: Forwarder | None = None,
) -> Starlette:
    """The relay at ``/relay`` and ``/``, and at its format's native paths (``/v1/...``,
    ``pysse.server.native``) so an official SDK can use it as its base URL; other formats'
    paths say where to go, any other path is a JSON 404; its numbers at ``/metrics``.
    ``answers``: the answer store and producers (made from ``cfg`` if not given; tests pass
    their own to look inside). ``forwarder``: the relay's pools and answers already made
    and checked (``startup.start_relay``); ``client`` and ``answers`` are not used then.
    With several upstreams, every format they speak has its native paths, and
    ``GET /v1/models`` lists what they serve."""
    if forwarder is None:
        if answers is None:
            answers = cfg.answers()
        forwarder = Forwarder(cfg, upstream_pool(cfg, client), answers)
    handler = relay_endpoint(cfg, forwarder=forwarder)
    methods = ["POST", "OPTIONS", "GET", "DELETE"]
    routes = [Route("/", handler, methods=methods), Route("/relay", handler, methods=methods)]
    routes.append(Route("/v1/models", models_endpoint(cfg), methods=["GET", "OPTIONS"]))
    for fmt in served_formats(cfg):
        own = PROVIDERS[fmt]
        native = relay_endpoint(
            cfg, path_model=own.model_in_path, path_format=fmt, forwarder=forwarder
        )
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
    metrics = forwarder.metrics
    routes.append(Route("/metrics", metrics_endpoint(metrics, cfg.shared_secret), methods=["GET"]))
    return Starlette(routes=routes, exception_handlers=error_handlers([*served, "/metrics"]))


def main(argv: list[str] | None = None) -> int:
    """``pysse-relay`` / ``python -m pysse.server.relay``. A setting that cannot work is one
    line on stderr and exit status 2 (``startup``, ``command_line``), before the banner."""
    ap = OneLineParser(
        prog="pysse-relay",
        description="Keep a provider API key server-side and stream its answers to a web page.",
    )
    add_relay_arguments(ap, upstream_required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=port_number, default=8787)
    ap.add_argument(
        "--loop",
        choices=["asyncio", "uvloop"],
        default="asyncio",
        help="the event loop: uvloop costs less per chunk (pip install uvloop; docs/relay.md)",
    )
    args = ap.parse_args(argv)
    if args.loop == "uvloop":
        try:  # imported, not only found: a broken install is missing too
            importlib.import_module("uvloop")
        except ImportError:
            exit_with(ap.prog, "--loop uvloop needs the uvloop package: pip install uvloop")
    try:
        start = start_server(args, relay=True)
    except ConfigError as exc:
        exit_with(ap.prog, str(exc))
    cfg = start.relay
    assert cfg is not None  # start_server(relay=True) makes one
    origins = ", ".join(cfg.allow_origins) or "none (add --allow-origin for a web page)"
    # Never the Redis URL itself: it may hold a password.
    kept = "in Redis" if cfg.store.startswith("redis") or "://" in cfg.store else "in memory"
    print(
        f"pysse relay: POST http://{args.host}:{args.port}/relay -> {upstreams_line(cfg)}; "
        f"pages allowed from: {origins}; answers kept for resuming: "
        f"{kept if cfg.resume else 'no (--no-resume)'}",
        flush=True,
    )
    run(
        create_relay_app(cfg, forwarder=start.forwarder),
        args.host,
        args.port,
        ServerLimits(
            max_connections=args.max_connections,
            header_timeout=args.header_timeout,
            loop=args.loop,
        ),
        sockets=start.sockets,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
