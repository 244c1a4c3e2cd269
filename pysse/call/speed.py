"""Live speed under an answer: time to first token, tokens per second, and a stall notice.

Pure: the page feeds it times (milliseconds since the request started) and what arrived, and
asks for a ``SpeedView`` when it repaints the line (a timer, so a stall shows even though
nothing arrives). Why these rules:

* **tokens/s** is output tokens over the time from the first to the last text, so waiting
  for the first token does not dilute it. The provider's own count (usage) is used once the
  answer has ended; while streaming, and for providers that send none, it is estimated from
  the characters (``CHARS_PER_TOKEN``) and marked as an estimate ("≈"). Mid-stream usage is
  not trusted: Anthropic reports ``output_tokens: 1`` when the message starts.
* **A stall** is ``STALL_S`` seconds with no bytes at all: the connection may be dead.
  Keep-alive comments (bytes that complete no chat event) prove the connection is alive but
  say nothing new: that is shown differently ("only keep-alives"), never as progress.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["CHARS_PER_TOKEN", "STALL_S", "SpeedMeter", "SpeedView"]

STALL_S = 3.0
CHARS_PER_TOKEN = 4.0  # a rough average for English text; hence "≈"
MIN_SPAN_MS = 200.0  # text that all came within this is a burst: no meaningful rate

Stall = Literal["", "waiting", "silent", "keepalive"]


@dataclass(frozen=True)
class SpeedView:
    ttft_ms: float | None
    tokens_per_s: float | None
    estimated: bool
    stall: Stall  # "" (none), "waiting" (no first byte), "silent", "keepalive"
    stall_s: float

    @property
    def text(self) -> str:
        """The speed line, for people."""
        parts = []
        if self.ttft_ms is not None:
            parts.append(f"{self.ttft_ms / 1000:.2f} s to first token")
        if self.tokens_per_s is not None:
            approx = "≈" if self.estimated else ""
            parts.append(f"{approx}{self.tokens_per_s:.0f} tok/s")
        return " · ".join(parts)

    @property
    def notice(self) -> str:
        """The stall notice, or "" while bytes flow."""
        s = f"{self.stall_s:.0f} s"
        return {
            "": "",
            "waiting": f"no response yet: {s}",
            "silent": f"no bytes for {s}",
            "keepalive": f"only keep-alives for {s}: connected, nothing new",
        }[self.stall]


class SpeedMeter:
    """Feeds: ``on_bytes`` for every chunk (``content``: it completed a chat event),
    ``on_text`` for text and reasoning deltas, ``on_usage``, ``on_end``."""

    def __init__(self) -> None:
        self.first_byte: float | None = None
        self.last_byte: float | None = None
        self.last_content: float | None = None
        self.first_text: float | None = None
        self.last_text: float | None = None
        self.chars = 0
        self.output_tokens: int | None = None
        self.ended: float | None = None

    def on_bytes(self, t: float, content: bool) -> None:
        if self.first_byte is None:
            self.first_byte = t
        self.last_byte = t
        if content:
            self.last_content = t

    def on_text(self, t: float, chars: int) -> None:
        if self.first_text is None:
            self.first_text = t
        self.last_text = t
        self.chars += chars

    def on_usage(self, output_tokens: int | None) -> None:
        if output_tokens is not None:
            self.output_tokens = output_tokens

    def on_end(self, t: float) -> None:
        self.ended = t

    def view(self, now: float) -> SpeedView:
        exact = self.ended is not None and self.output_tokens is not None
        tokens = self.chars / CHARS_PER_TOKEN
        if exact and self.output_tokens is not None:
            tokens = float(self.output_tokens)
        rate = None
        if self.first_text is not None and self.last_text is not None:
            span = self.last_text - self.first_text
            if span >= MIN_SPAN_MS and tokens > 0:
                rate = tokens / (span / 1000)
        return SpeedView(self.first_text, rate, not exact, *self._stall(now))

    def _stall(self, now: float) -> tuple[Stall, float]:
        if self.ended is not None:
            return "", 0.0
        if self.last_byte is None:
            quiet = now / 1000
            return ("waiting", quiet) if quiet >= STALL_S else ("", 0.0)
        since_byte = (now - self.last_byte) / 1000
        if since_byte >= STALL_S:
            return "silent", since_byte
        since_content = (now - (self.last_content or self.first_byte or 0.0)) / 1000
        if since_content >= STALL_S:
            return "keepalive", since_content
        return "", 0.0

    # -- stored with the answer ---------------------------------------------------------------

    def summary(self, now: float) -> dict[str, Any]:
        """The finished answer's speed, as stored with it (``from_summary`` reads it back)."""
        v = self.view(now)
        return {"ttft_ms": v.ttft_ms, "tokens_per_s": v.tokens_per_s, "estimated": v.estimated}

    @staticmethod
    def from_summary(obj: Any) -> SpeedView | None:
        """A stored summary as a view (no stall: the answer has ended); None if unreadable."""
        if not isinstance(obj, dict):
            return None
        ttft, rate = obj.get("ttft_ms"), obj.get("tokens_per_s")
        num = (int, float)
        return SpeedView(
            float(ttft) if isinstance(ttft, num) and not isinstance(ttft, bool) else None,
            float(rate) if isinstance(rate, num) and not isinstance(rate, bool) else None,
            obj.get("estimated") is not False,
            "",
            0.0,
        )
