"""The relay tests' upstream provider, scripted with the testing kit (``pysse.testing``): the
tests play these scripts on the kit's ``sse_server`` fixture and assert on what it recorded
(``requests``, ``received_at``, ``wait_disconnected``)."""

from __future__ import annotations

import random

from pysse.providers import PROVIDERS, encode_answer
from pysse.server.demo import split_deltas
from pysse.testing import Script

KEY = "sk-test-SECRET-0123456789"
DELTAS = split_deltas("Hello from the fake upstream — 東京 🙂 " * 20, random.Random(3))
EVENTS = encode_answer(PROVIDERS["openai-chat"], DELTAS)

ANSWER = Script.from_events(EVENTS).paced(0.01)  # one event per write, 10 ms apart
RATE_LIMITED = Script.http_error(429, "slow down", retry_after=12)
# The first event at once, then 2 s of silence: a relay must forward it without waiting.
SLOW_FIRST = Script.from_events(EVENTS).stall(2.0, after_byte=len(EVENTS[0]))
# The answer, then keep-alive comments for minutes: only a disconnect ends it early.
ENDLESS = Script.from_events([*EVENTS, *[b": still generating\n\n"] * 6000]).paced(0.02)
