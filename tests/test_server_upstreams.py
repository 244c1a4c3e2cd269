"""Several upstreams in one relay (issue #43, item 2): ``--upstream NAME=URL`` (repeat) with
``--upstream-key-env``, ``--upstream-format`` and ``--upstream-models``; a request goes to
the upstream serving its model, with that upstream's key and no other; an unknown model is a
400 naming the models served; ``GET /v1/models`` lists them in OpenAI's shape (the official
SDK reads it), the demo relay's too; resume works the same through any upstream, in memory
and across two relay processes sharing a Redis."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from pysse import ChatStream, ConfigError
from pysse.server.app import create_app
from pysse.server.command_line import OneLineParser
from pysse.server.config import RelayConfig, config_from_args
from pysse.server.relay import add_relay_arguments, create_relay_app
from pysse.server.routing import Refusal, Upstream, route
from pysse.testing import LiveServer, Script, ScriptServer
from support import RedisServer, ServerProcess, free_port

KEY_A, KEY_B = "sk-aaaa-openai-key-0123", "sk-bbbb-anthropic-key-4567"
VAR_A, VAR_B = "PYSSE_TEST_KEY_A", "PYSSE_TEST_KEY_B"
PAGE = "http://page.example"
TEXT = "Résumé: 東京 🙂 — one relay, two upstreams. " * 4


def parse(*argv: str) -> argparse.Namespace:
    ap = OneLineParser(prog="pysse-relay")
    add_relay_arguments(ap, upstream_required=True)
    return ap.parse_args(list(argv))


def two(a_url: str, b_url: str, *more: str) -> list[str]:
    """The command line of an OpenAI-chat upstream ``a`` and an Anthropic one ``b``."""
    return [
        *("--upstream", f"a={a_url}", "--upstream-key-env", f"a={VAR_A}"),
        *("--upstream-models", "a=gpt-x,gpt-y", "--upstream-models", "a=shared"),
        *("--upstream", f"b={b_url}", "--upstream-key-env", f"b={VAR_B}"),
        *("--upstream-format", "b=anthropic", "--upstream-models", "b=claude-x, shared"),
        *more,
    ]


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VAR_A, KEY_A)
    monkeypatch.setenv(VAR_B, KEY_B)


# -- the command line ------------------------------------------------------------------------


def test_named_upstreams_from_the_command_line(keys: None) -> None:
    cfg = config_from_args(parse(*two("https://a.example/v1/", "http://b.example/v1")))
    assert [(u.name, u.url, u.format, u.api_key, u.models) for u in cfg.upstreams] == [
        ("a", "https://a.example/v1", "openai-chat", KEY_A, ("gpt-x", "gpt-y", "shared")),
        ("b", "http://b.example/v1", "anthropic", KEY_B, ("claude-x", "shared")),
    ]
    assert (cfg.upstream, cfg.format, cfg.api_key) == ("https://a.example/v1", "openai-chat", KEY_A)
    assert sorted(cfg.secrets) == sorted([KEY_A, KEY_B])
    assert KEY_A not in repr(cfg) and KEY_B not in repr(cfg)
    # The format is guessed from the URL when not given, as with one --upstream.
    guessed = config_from_args(
        parse("--upstream", "c=https://api.anthropic.com/v1", "--upstream", "d=http://x/v1")
    )
    assert [u.format for u in guessed.upstreams] == ["anthropic", "openai-chat"]


def test_the_single_upstream_form_is_unchanged(keys: None) -> None:
    cfg = config_from_args(
        parse("--upstream", "https://api.anthropic.com/v1", "--api-key-env", VAR_B)
    )
    assert cfg.upstreams == [
        Upstream("default", "https://api.anthropic.com/v1", "anthropic", KEY_B, ())
    ]
    assert cfg.upstream == "https://api.anthropic.com/v1" and cfg.api_key == KEY_B


A = "a=http://a.example/v1"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--upstream", A, "--upstream", "a=http://other/v1"],
            "--upstream a=... is given twice: give each upstream a name of its own",
        ),
        (
            ["--upstream", A, "--upstream", "http://b.example/v1"],
            "--upstream http://b.example/v1 has no name: with several upstreams give each one "
            "as NAME=URL, e.g. --upstream openai=https://api.openai.com/v1",
        ),
        (
            ["--upstream", "a=b.example/v1"],
            "--upstream 'a=b.example/v1' is not a URL or NAME=URL: give the provider's base "
            "URL, e.g. --upstream openai=https://api.openai.com/v1",
        ),
        (
            ["--upstream", "a b=http://x/v1"],
            "--upstream a b=...: a name is letters, digits, '.', '-' and '_' (not 'default'), "
            "e.g. --upstream openai=https://api.openai.com/v1",
        ),
        (
            ["--upstream", A, "--upstream-key-env", "c=VAR"],
            "--upstream-key-env 'c=VAR' names no upstream: give --upstream c=URL too, or use "
            "one of the names given (a)",
        ),
        (
            ["--upstream", A, "--upstream-models", "gpt-x"],
            "--upstream-models 'gpt-x' is not NAME=VALUE: name the upstream it is for, e.g. "
            "--upstream-models a=...",
        ),
        (
            ["--upstream", A, "--upstream-format", "a=nope"],
            "--upstream-format a=nope: not a format; use one of openai-chat, openai-responses, "
            "anthropic, gemini",
        ),
        (
            ["--upstream", A, "--upstream-format", "a=gemini", "--upstream-format", "a=gemini"],
            "--upstream-format a=... is given twice: give it once for each upstream",
        ),
        (
            ["--upstream", A, "--api-key-env", VAR_A],
            "--api-key-env is for a single --upstream URL: with named upstreams give "
            "--upstream-key-env NAME=... for each",
        ),
        (
            ["--upstream", "http://a.example/v1", "--upstream-models", "a=gpt-x"],
            "--upstream-models is for named upstreams: write --upstream NAME=URL (e.g. "
            "--upstream openai=https://api.openai.com/v1) and --upstream-models NAME=..., or "
            "use --api-key-env and --format with one URL",
        ),
        (
            ["--upstream", A, "--upstream-key-env", "a=PYSSE_NO_SUCH_KEY"],
            "the environment variable PYSSE_NO_SUCH_KEY is not set: export it with the API key "
            "of upstream a, or leave out --upstream-key-env a=... for a keyless upstream",
        ),
    ],
)
def test_a_wrong_upstream_setting_names_the_flag_and_the_fix(
    argv: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYSSE_NO_SUCH_KEY", raising=False)
    with pytest.raises(ConfigError) as got:
        config_from_args(parse(*argv))
    assert str(got.value) == message


def test_pysse_relay_reports_a_wrong_upstream_in_one_line() -> None:
    """As a process: one line on stderr, status 2, no banner, no traceback."""
    argv = ["--upstream", A, "--upstream", "a=http://other/v1", "--port", str(free_port())]
    proc = subprocess.run(
        [sys.executable, "-m", "pysse.server.relay", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[1],
        env={k: v for k, v in os.environ.items() if k != "PYSSE_BUILD_IN_VENV"},
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        2,
        "",
        "pysse-relay: --upstream a=... is given twice: give each upstream a name of its own\n",
    )


def test_build_serve_takes_named_upstreams(keys: None) -> None:
    """``build.py serve`` takes the relay's options, named upstreams included (checked at
    start, before the site is built), and its banner names each upstream, never a key."""
    import build  # (the project root is on pytest's pythonpath)
    from pysse.server.relay import upstreams_line

    port = free_port()
    argv = two("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1", "--port", str(port))
    start = build.serve_startup(build.parser().parse_args(["serve", *argv]))
    try:
        assert [u.name for u in start.relay.upstreams] == ["a", "b"]
        line = upstreams_line(start.relay)
        assert line == (
            "a: http://127.0.0.1:9/v1 (openai-chat; gpt-x,gpt-y,shared), "
            "b: http://127.0.0.1:9/v1 (anthropic; claude-x,shared)"
        )
        assert KEY_A not in line and KEY_B not in line
    finally:
        for s in start.sockets:
            s.close()


# -- which upstream a model goes to ----------------------------------------------------------

UPS = [
    Upstream("a", "http://a/v1", models=("gpt-x", "shared")),
    Upstream("b", "http://b/v1", "anthropic", models=("claude-x", "shared")),
]


def test_route_by_model_prefix_and_catch_all() -> None:
    a, b = UPS
    assert route(UPS, "gpt-x") == (a, "gpt-x")
    assert route(UPS, "claude-x") == (b, "claude-x")
    assert route(UPS, "b/shared") == (b, "shared")
    assert route(UPS, "a/shared") == (a, "shared")
    with pytest.raises(Refusal) as ambiguous:
        route(UPS, "shared")
    assert "served by several upstreams: name one, e.g. a/shared or b/shared" in str(
        ambiguous.value
    )
    with pytest.raises(Refusal, match="name a model"):
        route(UPS, None)
    with pytest.raises(Refusal) as unknown:
        route(UPS, "b/gpt-x")  # b does not list it
    assert unknown.value.status == 400 and unknown.value.kind == "model_not_served"
    g = Upstream("g", "http://g/v1beta", "gemini", models=("gemini-x",))
    assert route([*UPS, g], "models/gemini-x") == (g, "models/gemini-x")
    local = Upstream("local", "http://l/v1")  # lists none: takes any other model
    assert route([*UPS, local], "llama-3") == (local, "llama-3")
    assert route([*UPS, local], "local/gpt-x") == (local, "gpt-x")
    assert route([*UPS, local], "gpt-x") == (a, "gpt-x")


# -- the relay, with two fake upstreams of different formats ---------------------------------


@pytest.fixture
def ups() -> Iterator[tuple[ScriptServer, ScriptServer]]:
    with ScriptServer() as a, ScriptServer() as b:
        yield a, b


@pytest.fixture
def two_relay(keys: None, ups: tuple[ScriptServer, ScriptServer]) -> Iterator[LiveServer]:
    a, b = ups
    argv = two(a.url + "/v1", b.url + "/v1", "--allow-origin", PAGE)
    with LiveServer(create_relay_app(config_from_args(parse(*argv)))) as live:
        yield live


def chat(model: str) -> dict[str, Any]:
    return {"model": model, "stream": True, "messages": [{"role": "user", "content": "hi"}]}


def text_of(resp: httpx.Response, fmt: str) -> str:
    cs = ChatStream(fmt)
    cs.feed(resp.content)
    assert cs.outcome == "completed", cs.outcome
    return cs.text


def test_each_model_lands_on_its_upstream_with_its_key(
    two_relay: LiveServer, ups: tuple[ScriptServer, ScriptServer]
) -> None:
    a, b = ups
    a.play(Script.answer(TEXT, "openai-chat"))
    b.play(Script.answer(TEXT, "anthropic"))
    with httpx.Client(timeout=30) as c:
        got_a = c.post(two_relay.url + "/relay", json=chat("gpt-y"), headers={"origin": PAGE})
        got_b = c.post(two_relay.url + "/relay", json=chat("b/shared"), headers={"origin": PAGE})
    assert got_a.headers["x-pysse-format"] == "openai-chat"
    assert got_b.headers["x-pysse-format"] == "anthropic"
    assert text_of(got_a, "openai-chat") == text_of(got_b, "anthropic") == TEXT
    (ra,), (rb,) = a.requests, b.requests
    assert ra.path == "/v1/chat/completions" and rb.path == "/v1/messages"
    assert ra.headers["authorization"] == f"Bearer {KEY_A}"
    assert rb.headers["x-api-key"] == KEY_B and "authorization" not in rb.headers
    assert KEY_B not in json.dumps(dict(ra.headers)) and KEY_A not in json.dumps(dict(rb.headers))
    assert ra.json()["model"] == "gpt-y" and rb.json()["model"] == "shared"  # prefix dropped


def test_an_unknown_model_is_a_400_naming_the_models_served(
    two_relay: LiveServer, ups: tuple[ScriptServer, ScriptServer]
) -> None:
    with httpx.Client(timeout=30) as c:
        resp = c.post(two_relay.url + "/relay", json=chat("gpt-z"), headers={"origin": PAGE})
        ambiguous = c.post(two_relay.url + "/relay", json=chat("shared"))
    assert resp.status_code == 400
    assert resp.headers["access-control-allow-origin"] == PAGE
    assert resp.json()["error"] == {
        "type": "model_not_served",
        "message": "model 'gpt-z' is not served by this relay (served: gpt-x, gpt-y, a/shared, "
        "claude-x, b/shared; GET /v1/models lists them): name one of those, or start the relay "
        "with --upstream-models NAME=MODEL for the upstream that serves it",
    }
    assert ambiguous.status_code == 400
    assert ambiguous.json()["error"]["type"] == "model_ambiguous"
    assert all(not up.requests for up in ups)  # nothing was forwarded
    assert KEY_A not in resp.text + ambiguous.text and VAR_A not in resp.text


def test_a_native_path_takes_only_its_formats_models(
    two_relay: LiveServer, ups: tuple[ScriptServer, ScriptServer]
) -> None:
    a, b = ups
    b.play(Script.answer(TEXT, "anthropic"))
    with httpx.Client(timeout=30) as c:
        wrong = c.post(two_relay.url + "/v1/chat/completions", json=chat("claude-x"))
        right = c.post(two_relay.url + "/v1/messages", json=chat("claude-x"))
    assert wrong.status_code == 400 and wrong.json()["error"]["type"] == "wrong_format"
    assert "POST it to /v1/messages or /relay" in wrong.json()["error"]["message"]
    assert right.status_code == 200 and text_of(right, "anthropic") == TEXT
    assert not a.requests and len(b.requests) == 1


def test_an_upstream_echoing_another_upstreams_key_is_scrubbed(
    two_relay: LiveServer, ups: tuple[ScriptServer, ScriptServer]
) -> None:
    b = ups[1]
    b.play(Script.http_error(401, f"bad key {KEY_A} and {KEY_B}", format="anthropic"))
    with httpx.Client(timeout=30) as c:
        resp = c.post(two_relay.url + "/relay", json=chat("claude-x"))
    assert resp.status_code == 401
    assert KEY_A not in resp.text and KEY_B not in resp.text and "[redacted]" in resp.text


def test_v1_models_lists_every_upstreams_models(two_relay: LiveServer) -> None:
    with httpx.Client(timeout=30) as c:
        resp = c.get(two_relay.url + "/v1/models", headers={"origin": PAGE})
        refused = c.get(two_relay.url + "/v1/models", headers={"origin": "http://evil.example"})
        described = c.get(two_relay.url + "/relay").json()
    assert resp.status_code == 200 and resp.headers["access-control-allow-origin"] == PAGE

    def entry(model: str, name: str, fmt: str) -> dict[str, Any]:
        return {
            "id": model,
            "object": "model",
            "created": 0,
            "owned_by": name,
            "pysse": {"upstream": name, "format": fmt},
        }

    assert resp.json() == {
        "object": "list",
        "data": [
            entry("gpt-x", "a", "openai-chat"),
            entry("gpt-y", "a", "openai-chat"),
            entry("a/shared", "a", "openai-chat"),
            entry("claude-x", "b", "anthropic"),
            entry("b/shared", "b", "anthropic"),
        ],
    }
    for secret in (KEY_A, KEY_B, VAR_A, VAR_B):
        assert secret not in resp.text
    assert refused.status_code == 403
    assert described["upstreams"] == [
        {"name": "a", "format": "openai-chat"},
        {"name": "b", "format": "anthropic"},
    ]


def test_the_single_upstream_lists_its_allowed_models() -> None:
    cfg = RelayConfig("http://127.0.0.1:9/v1", format="anthropic", allowed_models=["m1", "m2"])
    with LiveServer(create_relay_app(cfg)) as live:
        listed = httpx.get(live.url + "/v1/models").json()
    assert [(m["id"], m["owned_by"], m["pysse"]) for m in listed["data"]] == [
        ("m1", "default", {"upstream": "default", "format": "anthropic"}),
        ("m2", "default", {"upstream": "default", "format": "anthropic"}),
    ]
    with LiveServer(create_relay_app(RelayConfig("http://127.0.0.1:9/v1"))) as live:
        assert httpx.get(live.url + "/v1/models").json() == {"object": "list", "data": []}


def test_the_openai_sdk_lists_the_relays_and_the_demos_models(two_relay: LiveServer) -> None:
    client = openai.OpenAI(base_url=two_relay.url + "/v1", api_key="unused", max_retries=0)
    models = list(client.models.list())
    assert [(m.id, m.owned_by) for m in models] == [
        ("gpt-x", "a"),
        ("gpt-y", "a"),
        ("a/shared", "a"),
        ("claude-x", "b"),
        ("b/shared", "b"),
    ]
    assert models[3].model_extra == {"pysse": {"upstream": "b", "format": "anthropic"}}
    with LiveServer(create_app(None, demo_pace=0.0)) as demo:
        client = openai.OpenAI(base_url=demo.url + "/v1", api_key="unused", max_retries=0)
        listed = {m.id: m.model_extra for m in client.models.list()}
        assert listed["demo-anthropic"] == {"pysse": {"upstream": "demo", "format": "anthropic"}}
        assert sorted(listed) == sorted(
            f"demo-{f}" for f in ("openai-chat", "openai-responses", "anthropic", "gemini")
        )
        # The demo answers the model it lists, in its format.
        resp = httpx.post(demo.url + "/v1/messages", json=chat("demo-anthropic"), timeout=30)
        assert resp.status_code == 200 and text_of(resp, "anthropic")


def test_the_page_servers_v1_models_is_its_relays(keys: None) -> None:
    cfg = config_from_args(parse(*two("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1")))
    with LiveServer(create_app(None, relay=cfg)) as live:
        ids = [m["id"] for m in httpx.get(live.url + "/v1/models").json()["data"]]
    assert ids == ["gpt-x", "gpt-y", "a/shared", "claude-x", "b/shared"]


# -- resume, whichever upstream answers ------------------------------------------------------


def test_an_answer_from_the_second_upstream_resumes(
    two_relay: LiveServer, ups: tuple[ScriptServer, ScriptServer]
) -> None:
    a, b = ups
    script = Script.answer(TEXT, "anthropic").chunked("random", sizes=(1, 40), seed=2)
    b.play(script)
    with httpx.Client(timeout=30) as c:
        with c.stream("POST", two_relay.url + "/relay", json=chat("claude-x")) as resp:
            answer_id = resp.headers["x-pysse-answer-id"]
            got = next(resp.iter_raw())
        rest = c.get(two_relay.url + "/relay", params={"answer": answer_id, "from": len(got)})
    assert rest.status_code == 200
    assert got + rest.content == script.sent
    assert len(b.requests) == 1 and not a.requests  # one generation, on its upstream


def test_named_upstreams_resume_across_relays_sharing_redis(
    keys: None, ups: tuple[ScriptServer, ScriptServer], redis_server: RedisServer
) -> None:
    """Two ``pysse-relay`` processes with the same named upstreams and one Redis: an answer
    of upstream b started through relay A is resumed through relay B."""
    a, b = ups
    script = Script.answer(TEXT, "anthropic").chunked("random", sizes=(1, 40), seed=5)
    b.play(script.paced(0.005))
    relays = []
    try:
        for _ in range(2):
            port = free_port()
            argv = two(a.url + "/v1", b.url + "/v1", "--store", redis_server.url)
            relays.append(
                ServerProcess(
                    [sys.executable, "-m", "pysse.server.relay", *argv, "--port", str(port)], port
                )
            )
        first, second = relays
        with httpx.Client(timeout=30) as c:
            with c.stream("POST", first.url + "/relay", json=chat("claude-x")) as resp:
                assert resp.status_code == 200
                answer_id = resp.headers["x-pysse-answer-id"]
                got = next(resp.iter_raw())
            rest = c.get(second.url + "/relay", params={"answer": answer_id, "from": len(got)})
        assert rest.status_code == 200, rest.text
        assert got + rest.content == script.sent
        assert rb_key(b) == KEY_B and not a.requests
    finally:
        for r in relays:
            r.stop()


def rb_key(up: ScriptServer) -> str:
    (only,) = up.requests
    return str(only.headers["x-api-key"])


def test_each_official_sdk_reaches_its_models_upstream_through_one_relay(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """openai, anthropic and google-genai, each at its native path of one relay with three
    upstreams: each lands on the upstream serving its model (a model in the path, for
    Gemini), with that upstream's key, and reads its answer."""
    import sdk_clients as sdk

    monkeypatch.setenv(VAR_A, KEY_A)
    monkeypatch.setenv(VAR_B, KEY_B)
    monkeypatch.setenv("PYSSE_TEST_KEY_G", "g-key-0123456789")
    calls = [
        ("openai-chat", sdk.chat_create, "a", VAR_A, "gpt-test", "/v1"),
        ("anthropic", sdk.anthropic_stream, "b", VAR_B, "claude-test", "/v1"),
        ("gemini", sdk.gemini_stream, "g", "PYSSE_TEST_KEY_G", "gemini-test", "/v1beta"),
    ]
    with ScriptServer() as ua, ScriptServer() as ub, ScriptServer() as ug:
        servers = {"a": ua, "b": ub, "g": ug}
        argv: list[str] = []
        for fmt, _, name, var, model, base in calls:
            argv += ["--upstream", f"{name}={servers[name].url}{base}"]
            argv += ["--upstream-key-env", f"{name}={var}", "--upstream-format", f"{name}={fmt}"]
            argv += ["--upstream-models", f"{name}={model}"]
        with LiveServer(create_relay_app(config_from_args(parse(*argv)))) as relay:
            for fmt, client, name, *_ in calls:
                script = Script.answer(TEXT, fmt)  # type: ignore[arg-type]
                servers[name].play(script)
                assert client(relay.url, "hi") == sdk.expected(script.chat(fmt)), fmt  # type: ignore[arg-type]
    assert [len(s.requests) for s in servers.values()] == [1, 1, 1]
    assert ua.last_request.headers["authorization"] == f"Bearer {KEY_A}"
    assert ub.last_request.headers["x-api-key"] == KEY_B
    assert ug.last_request.headers["x-goog-api-key"] == "g-key-0123456789"
    assert ug.last_request.path.startswith("/v1beta/models/gemini-test:streamGenerateContent")
