"""Deterministic benchmark streams: the same bytes for every parser in a run."""

from __future__ import annotations

import json
import random


def openai_chat(n_events: int = 20_000, seed: int = 1) -> bytes:
    """An OpenAI Chat Completions stream: one data line per event, then [DONE]."""
    rnd = random.Random(seed)
    words = [
        "the",
        "of",
        "and",
        "a",
        "to",
        "in",
        "is",
        "you",
        "that",
        "it",
        "he",
        "was",
        "for",
        "on",
        "are",
        "as",
        "with",
        "his",
        "they",
    ]
    out = []
    for i in range(n_events):
        chunk = {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": "gpt-bench",
            "choices": [
                {"index": 0, "delta": {"content": " " + rnd.choice(words)}, "finish_reason": None}
            ],
        }
        out.append(b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n")
        if i % 500 == 0:
            out.append(b": keep-alive\n\n")
    out.append(b"data: [DONE]\n\n")
    return b"".join(out)


def anthropic(n_events: int = 10_000, seed: int = 2) -> bytes:
    """An Anthropic Messages stream: named events, multi-byte text (CJK, Cyrillic, emoji)."""
    rnd = random.Random(seed)
    words = ["Lisboa", "東京", "Привет", "—", "naïve", "🙂", "straße", "日本語の文", "ελληνικά"]
    out = [
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1",'
        b'"role":"assistant","content":[],"usage":{"input_tokens":14,"output_tokens":1}}}\n\n',
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"text","text":""}}\n\n',
    ]
    for _ in range(n_events):
        delta = {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": " " + rnd.choice(words)},
        }
        payload = json.dumps(delta, ensure_ascii=False, separators=(",", ":")).encode()
        out.append(b"event: content_block_delta\ndata: " + payload + b"\n\n")
    out.append(b'event: message_stop\ndata: {"type":"message_stop"}\n\n')
    return b"".join(out)


def long_line(size: int = 4 << 20) -> bytes:
    """One event whose single data line is ``size`` bytes."""
    return b"data: " + b"x" * size + b"\n\n"


def chunked(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]
