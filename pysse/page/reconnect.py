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
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Drop", "Reconnect", "resume_url"]

Drop = Literal["read-error", "network-error", "idle", "http-error"]


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
    received_at_idle: int | None = None  # bytes received when an idle timeout last fired
    why: str = ""  # why the answer gave up, in words

    def on_drop(
        self, now_ms: float, kind: Drop, received: int, retry_ms: int | None = None
    ) -> float | None:
        """A connection failed (``kind``) with ``received`` bytes of the answer in hand:
        the delay in ms before the next try, or None to give up (``why`` says why)."""
        if kind == "idle":
            if self.received_at_idle == received:
                self.why = "the answer is silent: reconnecting brought nothing new"
                return None
            self.received_at_idle = received
        if self.outage_since is None:
            self.outage_since = now_ms
        elif now_ms - self.outage_since >= self.give_up_s * 1000:
            self.why = f"reconnecting failed for {self.give_up_s:g} s"
            return None
        base = self.base_ms
        if retry_ms is not None and retry_ms >= 0:
            # Capped before float(): a retry: of 400 digits would overflow it.
            base = float(min(retry_ms, self.give_up_s * 1000))
        delay: float = min(max(self.max_ms, base), base * 2.0**self.attempts)
        delay *= 1 + self.jitter * (2 * self.rnd.random() - 1)
        self.attempts += 1
        self.total += 1
        left = self.give_up_s * 1000 - (now_ms - self.outage_since)
        return max(0.0, min(delay, left))

    def on_bytes(self) -> None:
        """Bytes arrived: the outage, if any, is over."""
        self.attempts = 0
        self.outage_since = None

    @property
    def reconnecting(self) -> bool:
        return self.outage_since is not None


def resume_url(url: str, answer_id: str, start: int | None = None) -> str:
    """``url`` with ``answer=ID`` (and ``from=N``) added to its query: a relay URL may
    already have one (``...:streamGenerateContent?alt=sse``)."""
    from urllib.parse import quote

    sep = "&" if "?" in url else "?"
    out = f"{url}{sep}answer={quote(answer_id, safe='')}"
    return out if start is None else f"{out}&from={int(start)}"
