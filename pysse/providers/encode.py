"""Writing an answer in any provider's format: the demo model, the tests and the testing kit
use this to produce streams that the decoders must read back exactly."""

from __future__ import annotations

from .base import Provider

__all__ = ["encode_answer"]

KEEPALIVE_EVERY = 40  # a ``: keep-alive`` comment after every this many deltas


def encode_answer(
    provider: Provider,
    deltas: list[str],
    *,
    error_at: int | None = None,
    error_message: str = "The server had an error.",
    malformed_at: int | None = None,
    terminal: bool = True,
) -> list[bytes]:
    """The events of a streamed answer in ``provider``'s format, one bytes object per event
    (keep-alive comments included).

    ``error_at``/``malformed_at``: after that many deltas, a provider error event / a payload
    that is not JSON, and nothing more. ``terminal=False`` leaves the terminal signal out
    (a dropped connection)."""
    eol = provider.eol
    events = provider.encode_start()
    for i, delta in enumerate(deltas):
        if error_at is not None and i == error_at:
            return [*events, provider.encode_error(error_message)]
        if malformed_at is not None and i == malformed_at:
            return [
                *events,
                f'data: {{"choices": [{{"delta": {{"content": "oops{eol}{eol}'.encode(),
            ]
        events.append(provider.encode_delta(delta))
        if i % KEEPALIVE_EVERY == KEEPALIVE_EVERY - 1:
            events.append(f": keep-alive{eol}{eol}".encode())
    if terminal:
        text = "".join(deltas)
        events += provider.encode_end(text, max(1, len(text) // 4))
    return events
