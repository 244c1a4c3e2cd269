"""The official Node SDKs as clients (issue #26): openai (the chat.completions and responses
stream helpers, their final objects) and @anthropic-ai/sdk (``messages.stream()``,
``finalMessage()``) read the demo relay and the reference relay in their formats, text,
reasoning and tool calls alike. Versions pinned in build.py (``NODE_SDKS``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from test_sdk_clients import CASES, TEXT

from pysse.server import demo
from pysse.server.app import create_app
from pysse.server.relay import RelayConfig, create_relay_app
from pysse.testing import LiveServer, Script, ScriptServer
from sdk_clients import expected

ROOT = Path(__file__).resolve().parent.parent
CLIENT = Path(__file__).parent / "node" / "sdk_client.cjs"
FORMATS = ["openai-chat", "openai-responses", "anthropic"]
PROMPTS = ["/demo echo Hello, Node — 東京!", "/demo think", "/demo tools"]


@pytest.fixture(scope="module")
def sdks() -> str:
    path = os.environ.get("PYSSE_NODE_SDKS")
    if not path:  # outside build.py test: install them the same way
        sys.path.insert(0, str(ROOT))
        import build

        path = str(build.fetch_node_sdks())
    return path


def node(sdks: str, fmt: str, base: str, prompts: list[str]) -> list[dict[str, Any]]:
    done = subprocess.run(
        ["node", str(CLIENT), sdks, fmt, base, *prompts],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    got: list[dict[str, Any]] = json.loads(done.stdout)
    return got


def want(cs: Any) -> dict[str, Any]:
    w = asdict(expected(cs))
    w["calls"] = [list(c) for c in w["calls"]]
    return w


@pytest.fixture(scope="module")
def demo_relay() -> Iterator[LiveServer]:
    with LiveServer(create_app(None, demo_pace=0.0)) as live:
        yield live


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_node_sdks_read_the_demo_relay(sdks: str, demo_relay: LiveServer, fmt: str) -> None:
    got = node(sdks, fmt, demo_relay.url, PROMPTS)
    assert got == [want(demo.plan(fmt, p, pace=0).chat(fmt)) for p in PROMPTS]  # type: ignore[arg-type]


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_node_sdks_read_the_reference_relay(sdks: str, fmt: str) -> None:
    with ScriptServer() as upstream:
        cfg = RelayConfig(upstream=upstream.url + "/v1", format=fmt, api_key="k", allow_origins=[])
        scripts = [Script.answer(TEXT, fmt, **CASES[c]) for c in CASES]  # type: ignore[arg-type]
        upstream.play(*scripts)
        with LiveServer(create_relay_app(cfg)) as relay:
            got = node(sdks, fmt, relay.url, ["hi"] * len(scripts))
    assert got == [want(s.chat(fmt)) for s in scripts]  # type: ignore[arg-type]
