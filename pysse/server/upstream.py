"""Talking to the upstream without trusting it: a pooled client, error bodies read to a bound,
compressed bodies refused or decoded with a bound, and the API key scrubbed from anything an
upstream sends back.

Why each piece exists:

* ``make_client``: connections are reused (keep-alive): a new TCP + TLS handshake per chat
  costs the first byte tens of milliseconds against a real provider. The pool is as large as
  the relay's connection cap, because every streaming chat holds its connection for the whole
  answer.
* ``read_capped``: an error body is read to at most ``max_bytes`` within idle and total
  deadlines; a 50 MiB or endless 500 body must cost neither memory nor a stuck task.
* ``Decompressor``: the relay asks for ``identity``; an upstream that compresses anyway is
  decoded here (gzip/deflate, output bounded per step) instead of forwarding ``1f8b...`` to a
  browser that was never told the body is gzip.
* ``Scrubber``: an upstream that echoes request headers (a debugging proxy, a misconfigured
  gateway) would hand the key to the browser. The scrubber replaces it in error messages and in
  the stream; at a chunk boundary it holds back only a tail that could begin the key, which for
  SSE (chunks end in a blank line) is nothing.
"""

from __future__ import annotations

import ssl
import time
import zlib
from collections.abc import AsyncIterator

import httpx

from .serve import STOPPING

__all__ = ["REDACTED", "Decompressor", "Scrubber", "UpstreamPool", "make_client", "read_capped"]

REDACTED = b"[redacted]"


def tls_context(ca_bundle: str | None = None) -> ssl.SSLContext:
    """One TLS context for all the relay's pools (loading the CA bundle once). ``ca_bundle``:
    a PEM file of certificate authorities to trust instead of the default ones (a private or
    self-signed upstream)."""
    if ca_bundle:
        return ssl.create_default_context(cafile=ca_bundle)
    return httpx.create_ssl_context()


def make_client(
    connect_timeout: float,
    first_byte_timeout: float,
    max_connections: int,
    keepalive: int,
    ca_bundle: str | None = None,
    context: ssl.SSLContext | None = None,
) -> httpx.AsyncClient:
    """The relay's upstream client (see ``tls_context`` for ``ca_bundle``)."""
    return httpx.AsyncClient(
        verify=context or tls_context(ca_bundle),
        timeout=httpx.Timeout(
            connect=connect_timeout, read=first_byte_timeout, write=30.0, pool=connect_timeout
        ),
        follow_redirects=False,
        limits=httpx.Limits(
            max_connections=max_connections,
            max_keepalive_connections=keepalive,
            keepalive_expiry=4.0,  # below uvicorn's and most servers' 5 s idle close
        ),
        trust_env=False,  # never send the key through a proxy named by the environment
    )


class UpstreamPool:
    """Several httpx clients, each with its own connection pool; a request goes to the one
    with the fewest requests in flight.

    Why: httpcore's pool bookkeeping (``AsyncConnectionPool._assign_requests_to_connections``,
    httpcore 1.0.x) runs on every request start and every response end, walks the whole pool,
    and for each idle connection builds a list over *all* connections (O(n) inside an O(n)
    loop) and asks the socket whether the server closed it (``has_expired`` ->
    ``get_extra_info("is_readable")``: anyio builds every extra attribute, two syscalls, then
    a select). With 200 pooled connections that is seconds of event-loop time per round of 200
    chats (measured: 9.2 s of 27 s CPU in that function), during which no chat gets a byte:
    the multi-second first-byte stalls that had made keep-alive opt-in. The cost is quadratic
    in one pool's size, so k pools of n/k connections cost about k times less in total (32
    pools: measured 8x less time in that function than one pool, and no stall), and
    keep-alive can stay on."""

    def __init__(self, clients: list[httpx.AsyncClient]) -> None:
        self.clients = clients
        self.busy = [0] * len(clients)

    @classmethod
    def create(
        cls,
        connect_timeout: float,
        first_byte_timeout: float,
        max_connections: int,
        keepalive: int,
        ca_bundle: str | None = None,
        shards: int = 32,
    ) -> UpstreamPool:
        shards = max(1, shards)
        per_shard = -(-keepalive // shards) if keepalive else 0
        context = tls_context(ca_bundle)
        return cls(
            [
                make_client(
                    connect_timeout, first_byte_timeout, max_connections, per_shard, None, context
                )
                for _ in range(shards)
            ]
        )

    def acquire(self) -> tuple[int, httpx.AsyncClient]:
        """A client for one request; ``release(i)`` when its response is closed."""
        i = min(range(len(self.busy)), key=self.busy.__getitem__)
        self.busy[i] += 1
        return i, self.clients[i]

    def release(self, i: int) -> None:
        self.busy[i] -= 1


class Scrubber:
    """Replaces secrets in a byte stream cut anywhere, holding back at most a tail that is a
    proper prefix of a secret."""

    def __init__(self, secrets: list[str]) -> None:
        self.secrets = [s.encode() for s in secrets if s and len(s) >= 4]
        self._held = b""

    def feed(self, chunk: bytes) -> bytes:
        if not self.secrets:
            return chunk
        data = self._held + chunk if self._held else chunk
        for secret in self.secrets:
            if secret in data:
                data = data.replace(secret, REDACTED)
        keep = 0
        last = data[-1:]
        for secret in self.secrets:
            if last not in secret:
                continue  # no prefix of the secret ends with this byte (SSE chunks end in LF)
            for n in range(min(len(secret) - 1, len(data)), keep, -1):
                if data.endswith(secret[:n]):
                    keep = n
                    break
        self._held = data[len(data) - keep :] if keep else b""
        return data[: len(data) - keep] if keep else data

    def flush(self) -> bytes:
        held, self._held = self._held, b""
        return held

    def text(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret.decode(), REDACTED.decode())
        return text


class Decompressor:
    """gzip/deflate decoding with bounded output per step (a decompression bomb cannot inflate
    one chunk into gigabytes at once). ``None`` for identity; ``ValueError`` for encodings the
    relay cannot decode."""

    STEP = 1 << 16

    def __init__(self, encoding: str) -> None:
        enc = encoding.strip().lower()
        if enc == "gzip" or enc == "x-gzip":
            self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif enc == "deflate":
            self._z = zlib.decompressobj()
        else:
            raise ValueError(f"the upstream sent content-encoding {encoding!r}")

    @staticmethod
    def for_response(resp: httpx.Response) -> Decompressor | None:
        enc = resp.headers.get("content-encoding", "").strip().lower()
        return None if enc in ("", "identity") else Decompressor(enc)

    def feed(self, chunk: bytes) -> list[bytes]:
        out: list[bytes] = []
        data = chunk
        while True:
            piece = self._z.decompress(data, self.STEP)
            if piece:
                out.append(piece)
            data = self._z.unconsumed_tail
            if not data:
                return out


async def read_capped(
    resp: httpx.Response, max_bytes: int, idle_s: float, total_s: float
) -> tuple[bytes, str]:
    """At most ``max_bytes`` of ``resp``'s body (decoded if compressed), and why the read
    stopped early ("" when the body ended). The response is closed either way."""
    parts: list[bytes] = []
    size = 0
    why = ""
    deadline = time.monotonic() + total_s
    try:
        dec = Decompressor.for_response(resp)
    except ValueError as exc:
        await resp.aclose()
        return b"", str(exc)
    it: AsyncIterator[bytes] = resp.aiter_raw().__aiter__()
    try:
        while size < max_bytes:
            wait = min(idle_s, deadline - time.monotonic())
            if wait <= 0:
                why = "the error body did not end in time"
                break
            try:
                chunk = await STOPPING.race(it.__anext__(), wait)
            except StopAsyncIteration:
                break
            except TimeoutError:
                why = "the error body stalled"
                break
            except httpx.HTTPError as exc:
                why = f"the error body broke ({type(exc).__name__})"
                break
            for piece in dec.feed(chunk) if dec else [chunk]:
                parts.append(piece)
                size += len(piece)
        else:
            why = f"the error body was cut at {max_bytes} bytes"
    finally:
        await resp.aclose()
    return b"".join(parts)[:max_bytes], why
