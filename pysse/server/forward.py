"""Sending a checked request to the upstream, and turning what comes back into the relay's
answer: the stream (recorded for resuming, or passed straight through with ``--no-resume``),
or a clean JSON error naming the cause (timeout, unreachable, an error status, a body that
is not an event stream), the key scrubbed from anything the upstream said."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from starlette.responses import Response, StreamingResponse

from ..providers import error_message
from .body import json_error
from .config import RelayConfig
from .metrics import RelayMetrics
from .resume import Answers, TailResponse
from .routing import Upstream
from .serve import STOPPING
from .stream import StreamGuard, passthrough
from .upstream import Decompressor, Scrubber, UpstreamPool, read_capped

__all__ = ["Forwarder", "upstream_pool"]

log = logging.getLogger("pysse.relay")


def upstream_pool(cfg: RelayConfig, client: httpx.AsyncClient | None = None) -> UpstreamPool:
    """The upstream connections: ``client`` if given (tests), else ``cfg.pool_shards`` pools."""
    if client is not None:
        return UpstreamPool([client])
    # At most ~32 connections a pool: httpcore's bookkeeping walks a pool's connections on
    # every request start and end (see UpstreamPool), so 5,000 streams in 32 pools cost
    # 156-connection walks twice a request; in 188 pools, 27.
    shards = max(cfg.pool_shards, cfg.max_connections // 32)
    return UpstreamPool.create(
        cfg.connect_timeout,
        cfg.first_byte_timeout,
        cfg.max_connections,
        cfg.keepalive,
        cfg.ca_bundle,
        shards,
    )


class Forwarder:
    """One relay's way upstream: its connection pools, its answers and its deadlines, and
    the numbers they add up to (``metrics``: one per relay, whichever routes serve it)."""

    def __init__(self, cfg: RelayConfig, pool: UpstreamPool, answers: Answers | None) -> None:
        self.cfg = cfg
        self.pool = pool
        self.answers = answers
        self.guard = StreamGuard(cfg.idle_timeout, cfg.content_timeout, cfg.max_duration)
        self.secrets = cfg.secrets  # every upstream's: any of them could echo another's
        self.metrics = RelayMetrics(self.guard, answers, cfg.metrics_every)
        self._urls: dict[str, httpx.URL] = {}  # parsed once, not per request

    def _url(self, url: str) -> httpx.URL:
        parsed = self._urls.get(url)
        if parsed is None:
            if len(self._urls) >= 256:  # a model in the path makes many: stay bounded
                self._urls.clear()
            parsed = self._urls[url] = httpx.URL(url)
        return parsed

    async def forward(
        self,
        url: str,
        body: dict[str, Any],
        cors: dict[str, str],
        gone: Callable[[], Awaitable[bool]] | None = None,
        upstream: Upstream | None = None,
    ) -> Response | TailResponse:
        """POST ``body`` to ``url`` at ``upstream`` (whose key it carries; the first
        upstream's if not given)."""
        upstream = upstream or self.cfg.upstreams[0]
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            "accept-encoding": "identity",
            **upstream.auth_headers(),
        }
        # The body as parsed and checked, re-serialised: what was checked is what is sent.
        content = json.dumps(body, ensure_ascii=False).encode()
        shard, http = self.pool.acquire()
        response: Response | TailResponse | None = None
        try:
            release = lambda: self.pool.release(shard)  # noqa: E731
            response = await self._send(
                http, url, content, headers, cors, release, gone, upstream.name
            )
            return response
        finally:
            if not isinstance(response, StreamingResponse | TailResponse):
                self.pool.release(shard)  # else the stream releases it when it ends

    async def _send(
        self,
        http: httpx.AsyncClient,
        url: str,
        content: bytes,
        headers: dict[str, str],
        cors: dict[str, str],
        release: Callable[[], None],
        gone: Callable[[], Awaitable[bool]] | None,
        name: str,
    ) -> Response | TailResponse:
        target = self._url(url)
        where = f"{name} ({target.host})"  # never the URL's query: it may hold a key

        async def post() -> httpx.Response:
            request = http.build_request("POST", target, content=content, headers=headers)
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
            log.warning("upstream timeout: no answer from %s", where)
            return json_error(504, "upstream_timeout", "the upstream did not answer in time", cors)
        except httpx.HTTPError as exc:
            log.warning("upstream unreachable: %s (%s)", where, type(exc).__name__)
            return json_error(
                502,
                "upstream_unreachable",
                f"the relay could not reach its upstream ({type(exc).__name__}); check "
                "--upstream and that the provider is up",
                cors,
            )
        ctype = upstream.headers.get("content-type", "")
        scrub = Scrubber(self.secrets)
        if upstream.status_code == 200 and ctype.lower().startswith("text/event-stream"):
            return await self._stream(upstream, ctype, scrub, cors, release, gone)
        return await self._refusal(upstream, ctype, scrub, cors)

    async def _stream(
        self,
        upstream: httpx.Response,
        ctype: str,
        scrub: Scrubber,
        cors: dict[str, str],
        release: Callable[[], None],
        gone: Callable[[], Awaitable[bool]] | None,
    ) -> Response | TailResponse:
        try:
            dec = Decompressor.for_response(upstream)
        except ValueError as exc:
            await upstream.aclose()
            return json_error(502, "upstream_encoding", str(exc), cors)
        answers = self.answers
        if answers is not None:
            if gone is not None and await gone():
                # Stop before the first byte: the page left before it could learn the
                # answer's id, so nobody could ever resume or stop it. Cancel now.
                await upstream.aclose()
                return Response(status_code=499)
            # The upstream is read by a task of its own into the record; this response is
            # one reader of it, like any later resume.
            source = passthrough(upstream, dec, scrub, self.guard, release)
            answer_id = await answers.start(source, ctype)
            opened = await answers.store.open(answer_id, 0)
            return TailResponse(opened, answer_id, cors)
        return StreamingResponse(
            passthrough(upstream, dec, scrub, self.guard, release),
            200,
            headers={
                "content-type": ctype,
                "cache-control": "no-cache",
                "x-accel-buffering": "no",
                **cors,
            },
        )

    async def _refusal(
        self, upstream: httpx.Response, ctype: str, scrub: Scrubber, cors: dict[str, str]
    ) -> Response:
        """An answer that is not a stream: a JSON error saying what the upstream said."""
        cfg = self.cfg
        status = upstream.status_code
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
