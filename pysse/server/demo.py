"""The demo model: canned markdown answers, encoded in any provider format (each format's own
encoder, ``pysse.providers``), plus "break it on purpose" scenarios. Pure and deterministic (a
seed per request); the ASGI side in ``pysse.server.app`` only paces the bytes out.

A scenario is a ``pysse.testing`` ``Script``: an HTTP status, headers, the bytes, and how they
are cut, paced and ended; the ASGI side plays it with the testing kit's player. The writes are
cut at boundaries that do not line up with events, as a real network would cut them.
"""

from __future__ import annotations

import random
from typing import Any, AnyStr, cast

from ..events import Citation
from ..providers import (
    PROVIDERS,
    Part,
    ProviderName,
    Reasoning,
    Text,
    ToolUse,
    encode_parts,
    get_provider,
)
from ..providers.encoders import MODEL
from ..testing.script import Script
from .demo_request import continuation, last_user_text, message_items, messages_of
from .shapes import shape

__all__ = [
    "CITATIONS",
    "COMMANDS",
    "Plan",
    "answer_for",
    "continuation",
    "cut_after",
    "last_user_text",
    "message_items",
    "messages_of",
    "plan",
]

COMMANDS = {
    "help": "list these commands",
    "drop": "the connection dies mid-answer (no terminal event)",
    "cut": "the page's connection is cut mid-answer while the answer goes on: watch it resume",
    "stall": "the stream goes silent mid-answer",
    "keepalive": "mid-answer, only keep-alive comments from then on (no content)",
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
    "deep": "a payload nested 6,000 levels deep mid-answer (must not crash Python)",
    "math": "math, a task list and money, rendered (MathML)",
    "think": "the model reasons for a few seconds (reasoning, apart from the answer), then answers",
    "tools": "three tool calls (two in parallel), JSON arguments in fragments, then text",
    "cite": "an answer citing three web sources (and a javascript: one, never linked)",
    "diagram": "a Mermaid flowchart, drawn once the answer ends, and a broken diagram",
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


MATH_ANSWER = r"""## The quadratic formula

For $ax^2 + bx + c = 0$ with $a \neq 0$:

$$
x = \frac{-b \pm \sqrt{b^2 - 4ac}}{2a}
$$

The discriminant \(\Delta = b^2 - 4ac\) tells how many real roots there are.

\begin{align}
(a+b)^2 &= a^2 + 2ab + b^2 \\
(a-b)^2 &= a^2 - 2ab + b^2
\end{align}

- [x] derive it
- [ ] check it with $x = 2$

Money stays text: it costs $5 and $10, or **$750** in total.
"""


DIAGRAM_ANSWER = """How a message travels:
```mermaid
flowchart LR
  accTitle: The path of a message
  accDescr: The browser sends to the relay, which asks the model and streams its answer back.
  Browser[Chat page] -->|POST| Relay
  Relay -->|request| Model[(Model)]
  Model -.->|deltas| Relay
  Relay -.->|SSE| Browser
```

And a diagram with a mistake in it, shown as its source:
```mermaid
flowchart LR
  A[Start] --> B{Decide
  B -->|yes| C[[Done
```
"""


THINK_REASONING = """**Reading the question**

How many times is the digit 7 written when counting from 1 to 100? Count each place \
separately, so that 77 is not counted once when it holds two sevens.

**Counting the units**

The units digit is 7 once in every ten numbers: 7, 17, 27, … 97. That is 10 sevens.

**Counting the tens**

The tens digit is 7 for 70 to 79: another 10. 100 adds none.

**Checking**

10 + 10 = 20, and 77 supplies one to each count, which is right: it is written with two."""

THINK_ANSWER = """The digit **7** is written **20 times** from 1 to 100:

- 10 times as the units digit (7, 17, … 97)
- 10 times as the tens digit (70 … 79)

77 counts twice, once for each of its sevens.
"""

# What a model asks its host to run (the page runs nothing): one call, then two side by side
# (parallel), arguments with escapes and non-ASCII text, streamed in fragments.
TOOL_CALLS = (
    ToolUse(
        "search_docs",
        {"query": 'SSE "Last-Event-ID" reconnect', "limit": 3, "sections": ["spec", "faq"]},
        id="call_demo_search",
    ),
    ToolUse("get_weather", {"city": "Lisbon", "unit": "celsius"}, id="call_demo_lisbon"),
    ToolUse("get_weather", {"city": "東京", "unit": "celsius"}, id="call_demo_tokyo"),
)

TOOLS_ANSWER = """Those were three **tool calls**: a model asks its host to run them (here a \
search, then two weather lookups side by side) and waits for their results. The page \
shows each call's name and JSON arguments as they stream, and runs nothing itself.
"""

CITE_ANSWER = """Server-Sent Events send an event stream over plain HTTP, and a chat page \
shows each delta as it arrives. When the connection drops, the browser reconnects and \
sends the `Last-Event-ID` header, so the server can resume.
"""


def _cite(url: str, title: str, span: str) -> Citation:
    start = CITE_ANSWER.index(span)  # ASCII: characters and Gemini's bytes agree
    return Citation(url, title, span, start, start + len(span))


# The sources /demo cite cites: two https, one http, and a hostile one no page may link.
CITATIONS = (
    _cite("https://example.org/sse", "Server-sent events", "an event stream over plain HTTP"),
    _cite("https://docs.example.com/chat?lang=en", "Streaming <b>chat</b>", "each delta"),
    _cite("http://example.net/reconnect", "Reconnecting", "`Last-Event-ID` header"),
    _cite("javascript:alert(document.domain)", "Click me", "the server can resume"),
)


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
    if p.startswith("/demo think"):
        return THINK_ANSWER
    if p.startswith("/demo tools"):
        return TOOLS_ANSWER
    if p.startswith("/demo cite"):
        return CITE_ANSWER
    if p.startswith("/demo diagram"):
        return DIAGRAM_ANSWER
    if p.startswith("/demo math") or "formula" in p.lower():
        return MATH_ANSWER
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

# A scenario is a testing-kit Script (status, headers, the bytes, how they are cut and paced,
# how they end), played by the kit's player: the demo relay and users' tests share one player.
Plan = Script

DEMO_ERROR = "The server had an error (demo)."


def plan(
    fmt: str,
    prompt: str,
    seed: int = 0,
    pace: float = 1.0,
    partial: str | None = None,
    preface: str = "",
    model: str = "",
) -> Script:
    """What the demo relay sends for ``prompt`` in ``fmt``. ``pace`` scales every delay
    (tests use small values to run fast). With ``partial`` (Continue, see ``continuation``)
    the rest of the answer after it, sent normally whatever the command was. ``preface``
    goes before the answer (what files it received: ``demo_received``). ``model``: the
    model the request named, which the answer says wrote it (a page's model picker shows
    its choice came through); "demo" when it named none."""
    rnd = random.Random(seed)
    provider = get_provider(fmt)
    name = cast(ProviderName, provider.name)
    cmd = (
        prompt.strip().removeprefix("/demo").strip().split(" ", 1)[0]
        if prompt.strip().startswith("/demo") and partial is None
        else ""
    )
    if cmd == "401":
        return Script.http_error(401, "Invalid API key (demo).", format=name)
    if cmd == "429":
        return Script.http_error(429, "Rate limit reached (demo).", format=name, retry_after=7)
    if cmd == "500":
        return (
            Script.from_bytes(b"Internal Server Error (demo)")
            .with_status(500)
            .content_type("text/plain; charset=utf-8")
            .chunked("whole")
        )
    if cmd == "html":
        page = b"<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>"
        return Script.from_bytes(page).content_type("text/html; charset=utf-8").chunked("whole")
    text = preface + answer_for(prompt)
    if partial is not None:
        text = text[len(partial) :] if text.startswith(partial) else text
    # Longer deltas where the bytes count: fewer events, so fewer bytes (a page takes each
    # 1-byte chunk of /demo bytes through its parser: ~15 KB of them, not ~41 KB).
    big = cmd in ("long", "bytes") or cmd in SHAPE_COMMANDS
    deltas = split_deltas(text, rnd, 1, 40 if big else 12)
    kw: dict[str, Any] = {}
    if cmd == "error":
        kw["error_at"] = len(deltas) // 3
    if cmd == "malformed":
        kw["malformed_at"] = len(deltas) // 3
    if cmd in ("drop", "stall", "keepalive"):
        deltas = deltas[: len(deltas) // 3]
        kw["terminal"] = False
    parts: list[Part] = [Text(deltas, CITATIONS if cmd == "cite" else ())]
    if cmd == "think":  # a few seconds of reasoning at the usual pace, then the answer
        parts.insert(0, Reasoning(split_deltas(THINK_REASONING, rnd)))
    if cmd == "tools":
        parts[:0] = TOOL_CALLS
    events = encode_parts(provider, parts, error_message=DEMO_ERROR, model=model or MODEL, **kw)
    if cmd == "deep":
        pad = "[" * 6000 + "]" * 6000
        deep = f'data: {{"choices":[{{"delta":{{"content":"x"}},"pad":{pad}}}]}}'
        events.insert(len(events) // 3, f"{deep}{provider.eol}{provider.eol}".encode())
    if cmd == "keepalive":  # alive, but nothing more to say: a comment every 0.2 s for 5 min
        events += [f": keep-alive{provider.eol}{provider.eol}".encode()] * 1500
        script = Script.from_events(events).chunked("event").paced(0.2 * pace)
        return script.first_byte_after(0.05 * pace)
    script = Script.from_events(events)
    if cmd == "bytes":  # 2 ms a byte, and never over ~40 s whatever the format's size
        script = script.chunked(1).paced(min(0.002, 40.0 / len(script.body)) * pace)
    elif cmd == "burst":
        script = script.chunked("whole")
    elif cmd == "long":
        script = script.chunked("random", sizes=(200, 1400), seed=seed).paced(0.004 * pace)
    elif cmd in SHAPE_COMMANDS:  # a few seconds, a chunk every ~8 ms (about two a frame)
        script = script.chunked("random", sizes=(200, 1400), seed=seed).paced(
            0.004 * pace, 0.012 * pace
        )
    else:  # ~one event per write, cut anywhere
        lo, hi = (0.2, 0.3) if cmd == "slow" else (0.02, 0.06)
        script = script.chunked("random", sizes=(20, 300), seed=seed).paced(lo * pace, hi * pace)
    script = script.first_byte_after(0.05 * pace)  # time to first byte
    if cmd == "stall":
        script = script.stall(300)  # silent until the client gives up (or 5 minutes)
    return script


# The demo's models (``GET /v1/models``, ``demo_relay``): one a format.
DEMO_MODELS = tuple(f"demo-{name}" for name in PROVIDERS)


def model_of(body: dict[str, Any]) -> str:
    """The demo model a request body names (every format's body has ``model``: Gemini's
    for relays), or "" for any other (a provider's default such as "gpt-5" would be a lie
    in the footer: the answer then says "demo")."""
    model = body.get("model")
    return model if model in DEMO_MODELS else ""


def cut_after(script: Script, prompt: str) -> int | None:
    """``/demo cut``: the byte after which the page's first connection is cut (a third of the
    way in); None for every other prompt."""
    if prompt.strip().split(" ", 2)[:2] != ["/demo", "cut"]:
        return None
    return max(1, len(script.sent) // 3)
