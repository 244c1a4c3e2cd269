"""When the page reconnects to a dropped answer, and when it gives up. Pure: the bridge
(``web/bridge.js``) asks ``Reconnect.on_drop`` for a delay after each failure and waits it.

The rules, and why:

* **Only answers the relay keeps can be resumed**: no answer id (a relay without resume, a
  plain provider URL), no reconnect; the drop ends the answer as before (``truncated``).
* **Backoff**: 250 ms, then doubling up to 8 s, each with up to 20 % of jitter (many pages
  reconnecting to a restarted relay must not arrive in the same millisecond). A stream that
  set ``retry:`` (the SSE field) chose its own first delay: honoured, and the doubling starts
  from it. The field has no maximum (``pysse.sse`` keeps any length); a delay longer than
  ``give_up_s`` could never be waited within the outage, so it counts as ``give_up_s``.
* **Bounded**: one outage may last ``give_up_s`` (30 s) of reconnecting; then the answer ends
  ``truncated`` with the reason. Bytes arriving again end the outage, so a later drop starts
  afresh.
* **Silence is not always a drop**: an idle timeout (no bytes for a while) is what a pulled
  cable looks like, so it reconnects once; if the resumed connection brings nothing new
  either, the answer itself is silent and the timeout stands.
* **An early clean end is a drop** (issue #27): a body that ends cleanly (``done: true``)
  before the format's terminal signal is how WebKit, and Apple's network stack under every
  iPhone browser, report a connection cut between chunks (Chromium's read rejects instead).
  So when the relay keeps the answer, it is resumed like any drop; the relay then sends the
  rest, or nothing: a resume that ends cleanly at the same byte again means the answer really
  ended there (``truncated``). A relay that ended the answer itself said so in a closing
  comment (``relay_reason``): no resume, its reason is the answer's.
* **Coming back revives**: a page returning from the background or the back-forward cache
  may hold a connection the system killed without telling it (iOS does). A dead one
  (``pageshow`` with ``persisted``) or a silent one (``REVIVE_SILENCE_MS`` without a byte) is
  resumed at once (``revive_on_return``), not after the idle timeout.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "REVIVE_SILENCE_MS",
    "Drop",
    "Reconnect",
    "early_end_is_drop",
    "relay_reason",
    "resume_url",
    "revive_on_return",
]

Drop = Literal["read-error", "network-error", "idle", "http-error", "early-end", "revived"]

# The comment a pysse relay ends an answer with when it ended it itself (an idle upstream, an
# unwatched answer, Stop, shutdown): ``pysse.server.resume.relay_note`` writes it.
RELAY_NOTE = "pysse relay: stream ended, "
# A page back in view whose answer got no byte for this long gets a fresh connection: a live
# stream sends several a second, and a wrong guess costs one resume (the same bytes).
REVIVE_SILENCE_MS = 2000.0
# Drops that, coming twice at the same byte count (the resume between them brought nothing),
# mean the answer has nothing more: why, in words.
ENDED_IF_AGAIN: dict[str, str] = {
    "idle": "the answer is silent: reconnecting brought nothing new",
    "early-end": "the relay has nothing after byte {received:,}: the answer ended there",
}


@dataclass
class Reconnect:
    """The reconnect state of one answer (see the module docstring)."""

    base_ms: float = 250.0
    max_ms: float = 8000.0
    give_up_s: float = 30.0
    jitter: float = 0.2
    rnd: random.Random = field(default_factory=random.Random, repr=False)
    attempts: int = 0  # failed tries in the current outage
    total: int = 0  # reconnects over the answer's life (shown in the inspector)
    outage_since: float | None = None  # ms, when the current outage began
    # for the drops in ENDED_IF_AGAIN: the bytes received when that kind last came
    received_at: dict[str, int] = field(default_factory=dict)
    why: str = ""  # why the answer gave up, in words

    def on_drop(
        self, now_ms: float, kind: Drop, received: int, retry_ms: int | None = None
    ) -> float | None:
        """A connection failed (``kind``) with ``received`` bytes of the answer in hand:
        the delay in ms before the next try, or None to give up (``why`` says why)."""
        if kind in ENDED_IF_AGAIN:
            if self.received_at.get(kind) == received:
                self.why = ENDED_IF_AGAIN[kind].format(received=received)
                return None
            self.received_at[kind] = received
        if self.outage_since is None:
            self.outage_since = now_ms
        elif now_ms - self.outage_since >= self.give_up_s * 1000:
            self.why = f"reconnecting failed for {self.give_up_s:g} s"
            return None
        self.total += 1
        if kind == "revived":  # the page is back and the connection dead: no reason to wait
            return 0.0
        base = self.base_ms
        if retry_ms is not None and retry_ms >= 0:
            # Capped before float(): a retry: of 400 digits would overflow it.
            base = float(min(retry_ms, self.give_up_s * 1000))
        delay: float = min(max(self.max_ms, base), base * 2.0**self.attempts)
        delay *= 1 + self.jitter * (2 * self.rnd.random() - 1)
        self.attempts += 1
        left = self.give_up_s * 1000 - (now_ms - self.outage_since)
        return max(0.0, min(delay, left))

    def on_bytes(self) -> None:
        """Bytes arrived: the outage, if any, is over."""
        self.attempts = 0
        self.outage_since = None

    @property
    def reconnecting(self) -> bool:
        return self.outage_since is not None


def relay_reason(comment: str) -> str | None:
    """Why a pysse relay ended an answer itself, from one SSE comment's text (the part after
    ``:``), or None when the comment is anything else (a keep-alive)."""
    text = comment.strip()
    if not text.startswith(RELAY_NOTE):
        return None
    return text.removeprefix(RELAY_NOTE).strip() or "no reason given"


def early_end_is_drop(*, resumable: bool, relay_ended: bool) -> bool:
    """A body ended cleanly before the format's terminal signal: True when that is a drop to
    resume (the relay keeps the answer and did not end it itself), False when it is the
    answer's end (``truncated``), as it always was without an answer id."""
    return resumable and not relay_ended


def revive_on_return(*, resumable: bool, persisted: bool, silent_ms: float) -> bool:
    """The page came back into view (``visibilitychange``) or out of the back-forward cache
    (``pageshow``, ``persisted``): True when the answer's connection should be replaced by a
    resume now. From the cache it is dead (the browser closed it); from the background, a
    connection silent for ``REVIVE_SILENCE_MS`` may have been killed without a word."""
    return resumable and (persisted or silent_ms >= REVIVE_SILENCE_MS)


def resume_url(url: str, answer_id: str, start: int | None = None) -> str:
    """``url`` with ``answer=ID`` (and ``from=N``) added to its query: a relay URL may
    already have one (``...:streamGenerateContent?alt=sse``)."""
    from urllib.parse import quote

    sep = "&" if "?" in url else "?"
    out = f"{url}{sep}answer={quote(answer_id, safe='')}"
    return out if start is None else f"{out}&from={int(start)}"
