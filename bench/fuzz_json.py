"""Structure-aware fuzzing of the JSON inside events: payloads shaped like each provider's,
with the things a hostile or broken upstream sends: deep nesting, huge numbers, duplicate
keys, odd unicode, wrong types in every known field, enormous strings.

Each generated stream goes through ChatStream at several chunkings (the outcome must not
depend on them and nothing may raise) and through the error-body reader, within a time
budget per input. ``bench/fuzz.py`` interleaves these cases with its mutated fixtures.
"""

from __future__ import annotations

import json
import random

from pysse import ChatStream
from pysse.providers import error_message

ODD_TEXT = [
    "",
    "日本🙂",
    "\u2028\u2029",
    "\x00",
    "\ufeff",
    "\u202e evil",
    "\\ud800",  # a lone surrogate, escaped (written raw below)
    "\r\n\r",
    '"',
    "data: [DONE]\n\n",
]
SHAPES = ["openai-chat", "openai-responses", "anthropic", "gemini", "error"]


def odd_scalar(rnd: random.Random) -> str:
    """A JSON scalar, as text: the awkward ones more often than not."""
    kind = rnd.randrange(9)
    if kind == 0:
        return "9" * rnd.choice([1, 20, 400, 4301, 20_000])  # past int()'s digit limit
    if kind == 1:
        return rnd.choice(["1e999999", "-0", "1E-400", "0.1e+5", "NaN", "Infinity", "-1"])
    if kind == 2:
        return rnd.choice(["true", "false", "null"])
    if kind == 3:
        return json.dumps(rnd.choice(ODD_TEXT)).replace("\\\\ud800", "\\ud800")
    if kind == 4:
        return json.dumps("x" * rnd.choice([1, 1000, 100_000]))
    if kind == 5:
        return '"\\ud83d"'  # half a surrogate pair
    if kind == 6:
        return json.dumps(rnd.choice(ODD_TEXT) * rnd.randint(1, 50), ensure_ascii=False)
    if kind == 7:
        return "[]" if rnd.random() < 0.5 else "{}"
    return str(rnd.randint(-(10**6), 10**6))


def deep(rnd: random.Random) -> str:
    """Nesting of random depth (sometimes far past any stack), arrays and objects mixed."""
    depth = rnd.choice([2, 50, 128, 129, 1000, 6000, 20_000])
    opens, closes = [], []
    for _ in range(depth):
        if rnd.random() < 0.5:
            opens.append("[")
            closes.append("]")
        else:
            opens.append('{"k":')
            closes.append("}")
    body = "".join(opens) + odd_scalar(rnd) + "".join(reversed(closes))
    if rnd.random() < 0.2:
        body = body[: rnd.randrange(len(body))]  # cut short: unterminated
    return body


def value(rnd: random.Random, budget: int = 3) -> str:
    """Any JSON value (as text), sometimes deep."""
    r = rnd.random()
    if r < 0.1:
        return deep(rnd)
    if budget <= 0 or r < 0.5:
        return odd_scalar(rnd)
    if r < 0.75:
        return "[" + ",".join(value(rnd, budget - 1) for _ in range(rnd.randint(0, 4))) + "]"
    keys = ["content", "text", "delta", "type", "error", "message", "choices", "index", "k"]
    items = [
        f"{json.dumps(rnd.choice(keys))}:{value(rnd, budget - 1)}" for _ in range(rnd.randint(0, 4))
    ]
    return "{" + ",".join(items) + "}"


def payload(rnd: random.Random, shape: str) -> str:
    """One payload shaped like ``shape``'s events, with any field replaced by anything."""
    v = lambda: value(rnd)  # noqa: E731 - a short local alias reads better here
    if shape == "openai-chat":
        out = f'{{"choices":[{{"index":{v()},"delta":{{"content":{v()}}},"finish_reason":{v()}}}]'
        out += f',"usage":{v()}}}' if rnd.random() < 0.3 else "}"
    elif shape == "openai-responses":
        kind = rnd.choice(["response.output_text.delta", "response.completed", "error"])
        out = f'{{"type":"{kind}","delta":{v()},"output_index":{v()},"response":{v()}}}'
    elif shape == "anthropic":
        kind = rnd.choice(["content_block_delta", "message_delta", "message_start", "error"])
        out = f'{{"type":"{kind}","index":{v()},"delta":{{"type":"text_delta","text":{v()}}}}}'
    elif shape == "gemini":
        out = (
            f'{{"candidates":[{{"content":{{"parts":[{{"text":{v()}}}]}},"finishReason":{v()}}}]}}'
        )
    else:
        out = f'{{"error":{{"message":{v()},"type":{v()},"code":{v()}}}}}'
    if rnd.random() < 0.15:  # a duplicate key, the last one wins in json.loads
        out = out[:-1] + f',"type":{v()}}}'
    return out


def stream(rnd: random.Random) -> bytes:
    """A whole stream: a few good deltas, fuzzed payloads, maybe a terminal signal."""
    shape = rnd.choice(SHAPES)
    events = ['data: {"choices":[{"delta":{"content":"ok "}}]}'] if rnd.random() < 0.5 else []
    for _ in range(rnd.randint(1, 4)):
        name = {"openai-responses": "response.output_text.delta", "anthropic": "x"}.get(shape)
        head = f"event: {name}\n" if name and rnd.random() < 0.5 else ""
        events.append(head + "data: " + payload(rnd, shape))
    if rnd.random() < 0.5:
        events.append("data: [DONE]")
    eol = "\r\n" if shape == "gemini" and rnd.random() < 0.5 else "\n"
    return "".join(e.replace("\n", eol) + eol + eol for e in events).encode(
        "utf-8", "surrogatepass"
    )


def chat_outcome(data: bytes, size: int) -> tuple[str, str, str | None]:
    cs = ChatStream()
    for i in range(0, len(data), size):
        cs.feed(data[i : i + size])  # must never raise
    cs.close()
    return cs.text, str(cs.outcome), cs.error.kind if cs.error else None


def one(data: bytes, rnd: random.Random) -> None:
    """Every chunking gives the same outcome; the error-body reader never raises."""
    ref = chat_outcome(data, len(data) or 1)
    for size in (rnd.randint(1, 64), rnd.randint(65, 5000)):
        assert chat_outcome(data, size) == ref, ("ChatStream depends on chunking", size)
    body = data.decode("utf-8", "replace")
    body = body.split("data: ", 1)[-1]
    assert isinstance(error_message(body), str)


def generate(rnd: random.Random, pool: list[bytes]) -> bytes:
    return stream(rnd)
