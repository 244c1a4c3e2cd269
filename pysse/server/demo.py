"""The demo model: canned markdown answers, encoded in any provider format (each format's own
encoder, ``pysse.providers``), plus "break it on purpose" scenarios. Pure and deterministic (a
seed per request); the ASGI side in ``pysse.server.app`` only paces the bytes out.

A scenario is a ``Plan``: an HTTP status, headers, and a list of ``(delay_seconds, bytes)``
writes. The writes are cut at boundaries that do not line up with events, as a real network
would cut them.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any, AnyStr

from ..providers import encode_answer, get_provider
from .shapes import shape

__all__ = ["COMMANDS", "Plan", "answer_for", "last_user_text", "plan"]

COMMANDS = {
    "help": "list these commands",
    "drop": "the connection dies mid-answer (no terminal event)",
    "stall": "the stream goes silent mid-answer",
    "401": "the relay answers 401 Unauthorized",
    "429": "the relay answers 429 Too Many Requests with Retry-After",
    "500": "the relay answers 500 Internal Server Error",
    "html": "200 OK with an HTML page instead of a stream",
    "error": "the provider sends an error event mid-stream",
    "malformed": "a data payload that is not valid JSON",
    "bytes": "the answer in 1-byte chunks",
    "burst": "the whole answer in one chunk",
    "long": "a ~30 KB answer, fast",
    "table": "a 500-row table (each row settles once, earlier rows are never redrawn)",
    "list": "a 500-item list",
    "code": "a 300-line Python code block (highlighted once, when it closes)",
    "slow": "a slow answer (a delta every 250 ms)",
    "xss": "hostile markdown: scripts, handlers, javascript: links, image beacons",
    "echo": "/demo echo TEXT streams TEXT verbatim",
}

RICH_ANSWER = """# Streaming, explained

Server-Sent Events carry an answer **as it is written**, one *small delta* at a time.
The parser keeps a partial line until its end arrives — even when a character like é, 東, or 🙂
is cut in half by the network.

## What arrives on the wire

1. A `data:` line with a JSON payload
2. A blank line that ends the event
3. At the end, a terminal signal such as `[DONE]`

- Comments (`: ping`) keep idle connections alive
- Unknown fields are ignored
  - nested items work too

| Provider | Terminal signal | Line ends |
|---|---|---|
| OpenAI Chat | `data: [DONE]` | LF |
| Anthropic | `message_stop` | LF |
| Gemini | `finishReason` | CRLF |

```python
from pysse import ChatStream

cs = ChatStream("auto")
for chunk in response.iter_bytes():
    for event in cs.feed(chunk):
        print(event)
print(cs.close(), cs.outcome)
```

> A dead connection is never reported as *done*: without the terminal signal the answer
> is marked ~~complete~~ **truncated**.

Read more in the [WHATWG spec](https://html.spec.whatwg.org/multipage/server-sent-events.html).
Привет, мир! こんにちは世界 — done. ✅
"""

XSS_ANSWER = """Hostile markdown follows; nothing here may run or load.

<script>window.__pwned = 1</script>

<img src=x onerror="window.__pwned = 2">

[click me](javascript:window.__pwned=3) and [data link](data:text/html,<script>alert(1)</script>)
and [vb](vbscript:msgbox) and [file](file:///etc/passwd).

![beacon](https://tracker.invalid/pixel.gif?leak=secret)

<a href="javascript:alert(1)">raw anchor</a> <iframe src="https://evil.invalid/"></iframe>

[**bold <b>html</b> in link**](https://example.com/ok) is a fine link.

```html
<script>alert("in a code block this is just text")</script>
```
"""


def _long_answer(target: int = 30_000) -> str:
    parts = ["# A long answer\n\n"]
    i = 0
    while sum(map(len, parts)) < target:
        i += 1
        parts.append(
            f"## Section {i}\n\nParagraph {i} has **bold**, *italic*, `code` and a "
            f"[link](https://example.com/{i}). Unicode: é 東京 🙂 — item {i}.\n\n"
            f"- point {i}.a\n- point {i}.b\n  - nested {i}\n\n"
            f"| n | square |\n|---|---|\n| {i} | {i * i} |\n\n"
            f"```python\ndef f_{i}(x):\n    return x * {i}\n```\n\n"
        )
    return "".join(parts)


SHAPE_COMMANDS = {"table": ("table", 500), "list": ("flat_list", 500), "code": ("code", 300)}


def answer_for(prompt: str) -> str:
    """The demo model's markdown answer to a prompt (commands handled by ``plan``)."""
    p = prompt.strip()
    if p.startswith("/demo echo"):
        return p[len("/demo echo") :].lstrip(" ")
    if p.startswith("/demo help"):
        rows = "\n".join(f"| `/demo {k}` | {v} |" for k, v in COMMANDS.items())
        return "## Demo commands\n\n| command | what it does |\n|---|---|\n" + rows + "\n"
    if p.startswith("/demo long"):
        return _long_answer()
    for cmd, (name, n) in SHAPE_COMMANDS.items():
        if p.startswith(f"/demo {cmd}"):
            return shape(name, n)
    if p.startswith("/demo xss"):
        return XSS_ANSWER
    return RICH_ANSWER


def _cut_randomly(seq: AnyStr, rnd: random.Random, lo: int, hi: int) -> list[AnyStr]:
    out, i = [], 0
    while i < len(seq):
        n = rnd.randint(lo, hi)
        out.append(seq[i : i + n])
        i += n
    return out


def split_deltas(text: str, rnd: random.Random, lo: int = 1, hi: int = 12) -> list[str]:
    """Cut text into small deltas (code points, never bytes: deltas are strings)."""
    return _cut_randomly(text, rnd, lo, hi)


# -- scenarios ---------------------------------------------------------------------------------


@dataclass
class Plan:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    writes: list[tuple[float, bytes]] = field(default_factory=list)
    stall_after: bool = False  # after the writes, keep the connection open and silent


def _rechunk(events: list[bytes], rnd: random.Random, lo: int, hi: int) -> list[bytes]:
    """Cut the concatenated events at random places, ignoring event boundaries."""
    return _cut_randomly(b"".join(events), rnd, lo, hi)


def _json_error(status: int, kind: str, message: str, extra: dict[str, str] | None = None) -> Plan:
    body = json.dumps({"error": {"type": kind, "message": message}}).encode()
    return Plan(status, {"content-type": "application/json", **(extra or {})}, [(0, body)])


DEMO_ERROR = "The server had an error (demo)."
SSE_HEADERS = {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
}


def plan(fmt: str, prompt: str, seed: int = 0, pace: float = 1.0) -> Plan:
    """What the demo relay sends for ``prompt`` in ``fmt``. ``pace`` scales every delay
    (tests use small values to run fast)."""
    rnd = random.Random(seed)
    cmd = (
        prompt.strip().removeprefix("/demo").strip().split(" ", 1)[0]
        if prompt.strip().startswith("/demo")
        else ""
    )
    if cmd == "401":
        return _json_error(401, "authentication_error", "Invalid API key (demo).")
    if cmd == "429":
        return _json_error(
            429, "rate_limit_error", "Rate limit reached (demo).", {"retry-after": "7"}
        )
    if cmd == "500":
        return Plan(
            500,
            {"content-type": "text/plain; charset=utf-8"},
            [(0, b"Internal Server Error (demo)")],
        )
    if cmd == "html":
        return Plan(
            200,
            {"content-type": "text/html; charset=utf-8"},
            [(0, b"<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>")],
        )
    text = answer_for(prompt)
    deltas = split_deltas(text, rnd, 1, 40 if cmd == "long" or cmd in SHAPE_COMMANDS else 12)
    kw: dict[str, Any] = {}
    if cmd == "error":
        kw["error_at"] = len(deltas) // 3
    if cmd == "malformed":
        kw["malformed_at"] = len(deltas) // 3
    if cmd in ("drop", "stall"):
        deltas = deltas[: len(deltas) // 3]
        kw["terminal"] = False
    events = encode_answer(get_provider(fmt), deltas, error_message=DEMO_ERROR, **kw)
    if cmd == "bytes":
        chunks = _rechunk(events, rnd, 1, 1)
        delays = [0.002 * pace] * len(chunks)
    elif cmd == "burst":
        chunks = [b"".join(events)]
        delays = [0.0]
    elif cmd == "long":
        chunks = _rechunk(events, rnd, 200, 1400)
        delays = [0.004 * pace] * len(chunks)
    elif cmd in SHAPE_COMMANDS:  # a few seconds, a chunk every ~8 ms (about two a frame)
        chunks = _rechunk(events, rnd, 200, 1400)
        delays = [rnd.uniform(0.004, 0.012) * pace for _ in chunks]
    else:
        chunks = _rechunk(events, rnd, 20, 300)  # ~one event per write, cut anywhere
        lo, hi = (0.2, 0.3) if cmd == "slow" else (0.02, 0.06)
        delays = [rnd.uniform(lo, hi) * pace for _ in chunks]
    delays[0] = 0.05 * pace  # time to first byte
    return Plan(
        200, dict(SSE_HEADERS), list(zip(delays, chunks, strict=True)), stall_after=cmd == "stall"
    )


def last_user_text(body: dict[str, Any]) -> str:
    """The last user message of a request in any of the four formats."""

    def text_of(content: Any) -> str:
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
        return ""

    if isinstance(body.get("contents"), list):  # gemini
        for c in reversed(body["contents"]):
            if isinstance(c, dict) and c.get("role", "user") == "user":
                return text_of(c.get("parts"))
    if isinstance(body.get("messages"), list):  # openai-chat, anthropic
        for m in reversed(body["messages"]):
            if isinstance(m, dict) and m.get("role") == "user":
                return text_of(m.get("content"))
    inp = body.get("input")  # openai-responses
    if isinstance(inp, str):
        return inp
    if isinstance(inp, list):
        for m in reversed(inp):
            if isinstance(m, dict) and m.get("role", "user") == "user":
                return text_of(m.get("content"))
    return ""
