"""The relay's configuration: every option with its default (``RelayConfig``), the command
line that sets them (shared by ``pysse-relay`` and ``build.py serve --upstream``; several
named upstreams in ``named_upstreams``), and the checks a request's model must pass before
anything is forwarded (``check_model``, which also picks its upstream: ``routing``)."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..providers import PROVIDERS, Provider, get_provider, valid_model_name
from .command_line import header_name, positive_count, positive_seconds, seconds_or_zero
from .named_upstreams import named_upstreams
from .origins import normalize_origin
from .redis_store import RedisStore
from .resume import Answers
from .routing import DEFAULT_NAME, Refusal, Upstream, guess_format, route
from .store import REDIS_SCHEMES, AnswerStore, MemoryStore, check_store

__all__ = [
    "Refusal",
    "RelayConfig",
    "Upstream",
    "add_relay_arguments",
    "check_model",
    "config_from_args",
    "guess_format",
    "open_store",
]


@dataclass
class RelayConfig:
    """The relay's settings. ``upstream``, ``format`` and ``api_key``: the single upstream
    (``--upstream URL``), or the first of ``upstreams`` (``--upstream NAME=URL``, repeated),
    which a request picks by its model (``routing``). Left empty, ``upstreams`` is the single
    one, named ``default``, taking any model."""

    upstream: str
    format: str = "openai-chat"
    api_key: str | None = field(default=None, repr=False)
    allow_origins: list[str] = field(default_factory=list)
    own_origins: list[str] = field(default_factory=list)  # where this server's page lives
    serves_page: bool = False  # the page is served by this same server (build.py serve)
    allow_headers: list[str] = field(default_factory=list)  # beyond content-type, secret
    max_body: int = 16 << 20  # room for a question's images (up to 5 MB each, in base64)
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
    metrics_every: float = 0.0  # log a metrics line this often (0: never; GET /metrics always)
    upstreams: list[Upstream] = field(default_factory=list)

    def __post_init__(self) -> None:
        get_provider(self.format)  # a ValueError naming the valid formats
        if not self.upstreams:
            self.upstreams = [Upstream(DEFAULT_NAME, self.upstream, self.format, self.api_key)]
        for origin in self.allow_origins:
            if origin != "*":
                try:
                    normalize_origin(origin)
                except ValueError as exc:  # it says what an origin looks like
                    raise ValueError(f"--allow-origin {exc}") from None
        for origin in self.own_origins:
            if origin != "*":
                normalize_origin(origin)
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
        return cls.checked(
            upstream=upstream.rstrip("/"),
            format=fmt or guess_format(upstream),
            api_key=key,
            allow_origins=allow_origins,
            **kw,
        )

    @classmethod
    def checked(cls, **kw: Any) -> RelayConfig:
        """A ``RelayConfig`` whose every ``ValueError`` is a ``ConfigError`` (one line at start)."""
        try:
            return cls(**kw)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None

    @property
    def secrets(self) -> list[str]:
        """Every upstream's key: scrubbed from whatever any upstream sends back."""
        return [u.api_key for u in self.upstreams if u.api_key]

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


def open_store(spec: str, ttl: float = 600.0, max_bytes: int = 64 << 20) -> AnswerStore:
    """The store named by ``--store``: ``memory`` (the default) or ``redis://host:port/db``.
    Here, above both implementations, so that the store's interface (``store``) never names
    the Redis one built on it."""
    check_store(spec)
    if spec.startswith(REDIS_SCHEMES):
        return RedisStore(spec, ttl, max_bytes)
    return MemoryStore(ttl, max_bytes)


def check_model(cfg: RelayConfig, body: dict[str, Any], path_model: str | None) -> Upstream:
    """The upstream for ``body`` (``routing.route``: by its model, whose ``NAME/`` prefix is
    dropped from ``body``), once the model passes every check; else a ``Refusal``."""
    model = body.get("model")
    if model is not None and not isinstance(model, str):
        raise Refusal(400, "invalid_model", "the model must be a string")
    if path_model is not None:
        if model is not None and model != path_model:
            raise Refusal(400, "invalid_model", "the body's model differs from the path's")
        body["model"] = model = path_model
    if model is not None and any(ord(c) < 0x20 or c == "\x7f" for c in model):
        raise Refusal(400, "invalid_model", "the model name contains control characters")
    up, routed = route(cfg.upstreams, model, cfg.allowed_models)
    if routed != model:
        body["model"] = model = routed
    if cfg.allowed_models and model not in cfg.allowed_models:
        shown = json.dumps(model)[:100] if model is not None else "(none)"
        raise Refusal(
            400,
            "model_not_allowed",
            f"model {shown} is not allowed by this relay (allowed: "
            f"{', '.join(cfg.allowed_models)})",
        )
    if up.provider.model_in_path and model is not None:
        name = model.removeprefix("models/")
        if not valid_model_name(name):
            raise Refusal(
                400,
                "invalid_model",
                "invalid model name: use letters, digits, '.', '-' and '_'",
            )
    return up


def add_relay_arguments(ap: argparse.ArgumentParser, upstream_required: bool) -> None:
    """The relay's options, shared by ``pysse-relay`` and ``build.py serve --upstream``. A
    number out of its range is refused here, naming the option (``command_line``), rather
    than a relay that refuses every request or never times out."""
    ap.add_argument(
        "--upstream",
        action="append",
        required=upstream_required,
        metavar="URL|NAME=URL",
        help="the provider's base URL, e.g. https://api.openai.com/v1 (or a full endpoint URL); "
        "several: NAME=URL for each (repeat), a request picks one by its model",
    )
    for flag, what in (
        ("--upstream-key-env", "NAME=VAR: the variable holding upstream NAME's key"),
        ("--upstream-format", f"NAME=FORMAT: upstream NAME's wire format ({', '.join(PROVIDERS)})"),
        ("--upstream-models", "NAME=M1,M2: the models upstream NAME serves (repeat to add)"),
    ):
        ap.add_argument(flag, action="append", default=[], metavar="NAME=...", help=what)
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
        type=header_name,
        default=[],
        metavar="NAME",
        help="an extra request header pages may send (repeat)",
    )
    ap.add_argument("--allow-model", action="append", default=[], metavar="MODEL")
    ap.add_argument("--secret-env", help="env var with a shared secret the page must send")
    ap.add_argument("--max-body", type=positive_count, default=16 << 20, metavar="BYTES")
    ap.add_argument("--content-timeout", type=positive_seconds, default=300.0, metavar="SECONDS")
    ap.add_argument("--max-duration", type=positive_seconds, default=None, metavar="SECONDS")
    ap.add_argument("--max-connections", type=positive_count, default=1000, metavar="N")
    ap.add_argument("--header-timeout", type=positive_seconds, default=10.0, metavar="SECONDS")
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
    ap.add_argument("--answer-ttl", type=positive_seconds, default=600.0, metavar="SECONDS")
    ap.add_argument("--store-max-bytes", type=positive_count, default=64 << 20, metavar="BYTES")
    ap.add_argument("--unwatched-timeout", type=positive_seconds, default=120.0, metavar="SECONDS")
    ap.add_argument(
        "--metrics-every",
        type=seconds_or_zero,
        default=0.0,
        metavar="SECONDS",
        help="log a line of metrics (open streams, store bytes, event-loop lag...) this often",
    )


def config_from_args(args: argparse.Namespace, **kw: Any) -> RelayConfig:
    secret = None
    if args.secret_env:
        secret = os.environ.get(args.secret_env)
        if not secret:
            raise ConfigError(
                f"the environment variable {args.secret_env} is not set: export the shared "
                "secret the page must send, or leave out --secret-env"
            )
    specs = args.upstream if isinstance(args.upstream, list) else [args.upstream]
    named = named_upstreams(
        specs,
        args.api_key_env,
        args.format,
        getattr(args, "upstream_key_env", []),
        getattr(args, "upstream_format", []),
        getattr(args, "upstream_models", []),
    )
    if named is None:
        return RelayConfig.from_args(
            specs[0], args.api_key_env, args.format, args.allow_origin, **_options(args, secret, kw)
        )
    first = named[0]
    return RelayConfig.checked(
        upstream=first.url,
        format=first.format,
        api_key=first.api_key,
        upstreams=named,
        allow_origins=args.allow_origin,
        **_options(args, secret, kw),
    )


def _options(args: argparse.Namespace, secret: str | None, kw: dict[str, Any]) -> dict[str, Any]:
    """The settings besides the upstreams, as ``RelayConfig`` names them."""
    return dict(
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
        metrics_every=getattr(args, "metrics_every", 0.0),
        **kw,
    )
