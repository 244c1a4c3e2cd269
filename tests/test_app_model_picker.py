"""The composer's model picker (issue #43): the endpoints in Settings (the old single relay
is the first), what a relay's ``/v1/models`` offers, read defensively (10,000 models,
names that are not text, huge ones), the entries, and the page using the chosen one."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from model_page import RELAY, ModelPage

from pysse.app.endpoints import MAX_ENDPOINTS, Endpoint, endpoints_of, models_url
from pysse.app.model_picker import (
    MAX_LISTED,
    Listed,
    choice_of,
    entries,
    label_of,
    read_model_list,
    read_probe,
    value_of,
)
from pysse.app.settings import DEFAULTS, SETTINGS_KEY, UNREADABLE_KEY, load_settings, unreadable
from pysse.call.diagnose import http_failure
from pysse.call.net import Probe
from pysse.chats.choice import Choice
from pysse.server.demo_relay import demo_model_list
from pysse.testing import Script

OTHER = "https://other.test/relay"


def models(*ids: Any, fmt: str = "") -> str:
    data = [
        {"id": i, "object": "model", **({"pysse": {"format": fmt}} if fmt else {})} for i in ids
    ]
    return json.dumps({"object": "list", "data": data})


# -- endpoints ---------------------------------------------------------------------------------


def test_old_settings_are_the_first_endpoint_unchanged() -> None:
    old = json.dumps({"relay": "https://r.test/relay", "format": "anthropic", "model": "m1"})
    s = load_settings(old, {})
    eps, problems = endpoints_of(s)
    assert eps == [Endpoint("https://r.test/relay", "anthropic", ("m1",))] and not problems
    assert s["endpoints"] == "" and s["choice"] == ""


def test_more_endpoints_one_a_line_each_problem_named() -> None:
    s = {
        **DEFAULTS,
        "endpoints": "\n".join(
            [
                "# a comment",
                f"{OTHER} anthropic claude-a,claude-b claude-c",
                "https://gem.test/v1beta/models gemini",
                "ftp://nope.test",
                f"{OTHER} openai-chat",
                "https://many.test " + ",".join(f"m{i}" for i in range(101)),
                "https://long.test " + "x" * 201,
            ]
        ),
    }
    eps, problems = endpoints_of(s)
    assert eps[1] == Endpoint(OTHER, "anthropic", ("claude-a", "claude-b", "claude-c"))
    assert eps[2] == Endpoint("https://gem.test/v1beta/models", "gemini", ())
    assert len(eps) == 3
    assert problems[0].startswith("Settings → More endpoints, line 4: the relay URL must start")
    assert "line 5" in problems[1] and "listed already" in problems[1]
    assert "line 6: more than 100 models" in problems[2]
    assert "line 7" in problems[3] and "longer than 200" in problems[3]


def test_at_most_twenty_endpoints() -> None:
    lines = "\n".join(f"https://r{i}.test/relay" for i in range(50))
    eps, problems = endpoints_of({**DEFAULTS, "endpoints": lines})
    assert len(eps) == MAX_ENDPOINTS and f"at most {MAX_ENDPOINTS}" in problems[-1]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://h.test/relay", "https://h.test/v1/models"),
        ("https://h.test/base/relay", "https://h.test/base/v1/models"),
        ("http://h.test:8/v1/chat/completions", "http://h.test:8/v1/models"),
        ("https://h.test/p/v1beta/models/x:streamGenerateContent", "https://h.test/p/v1/models"),
        ("https://h.test/chat", "https://h.test/v1/models"),
        ("/relay", "/v1/models"),
    ],
)
def test_the_model_list_is_asked_of_the_same_host(url: str, expected: str) -> None:
    assert models_url(url) == expected


def test_unreadable_saved_settings_are_named_and_kept_aside() -> None:
    assert unreadable(None) is None and unreadable('{"relay": ""}') is None
    assert "not JSON" in str(unreadable("{not json"))
    assert unreadable("[1]") == "they are not a JSON object"

    async def go() -> None:
        page = ModelPage()
        page.platform.stored_settings = "{oops"
        page.app.form.__init__(page.app)  # (read again as at start)
        page.app.form.bind()
        await page.boot()
        assert page.view.stored[UNREADABLE_KEY] == "{oops"
        notices = [n.textContent for n in page.doc.querySelectorAll("[data-role=notice]")]
        assert any("could not be read" in n and UNREADABLE_KEY in n for n in notices)

    asyncio.run(go())


# -- a relay's model list ------------------------------------------------------------------------


def test_the_demo_list_gives_each_models_format() -> None:
    listed, problem = read_model_list(json.dumps(demo_model_list()))
    assert not problem
    assert Listed("demo-anthropic", "anthropic") in listed
    assert Listed("demo-openai-chat", "openai-chat") in listed


def test_a_hostile_list_is_bounded() -> None:
    many = models(*[f"model-{i}" for i in range(10_000)])
    listed, problem = read_model_list(many)
    assert len(listed) == MAX_LISTED and "first 500 of its 10,000" in problem
    odd = json.dumps(
        {
            "data": [
                {"id": 5},
                {"id": None},
                "text",
                {"id": "x" * 100_000},
                {"id": ""},
                {"id": "ok\n  two", "pysse": {"format": "made-up"}},
                {"id": "ok two"},
                {"id": "g", "pysse": "gemini"},
            ]
        }
    )
    assert read_model_list(odd) == ([Listed("ok two", ""), Listed("g", "")], "")
    assert read_model_list("[" * 100_000)[1].startswith("its model list is not JSON")
    assert read_model_list('{"data": 3}')[1] == 'its model list has no "data" list'


def test_a_relay_without_a_list_says_so_in_a_sentence() -> None:
    assert "no model list (/v1/models: 404)" in read_probe("R", Probe(True, 404))[1]
    gone = read_probe("R", Probe(False, error="TypeError: Failed to fetch"))
    assert gone[0] == [] and "could not be asked" in gone[1] and "set in Settings" in gone[1]
    assert "HTTP 500" in read_probe("R", Probe(True, 500))[1]
    assert read_probe("R", Probe(True, 200, text=models("a"))) == ([Listed("a")], "")


def test_entries_listed_then_configured_settings_own_first() -> None:
    eps = [Endpoint("", "auto"), Endpoint(OTHER, "anthropic", ("claude-x", "claude-y"))]
    listed = {"": [Listed("demo-gemini", "gemini")], OTHER: [Listed("claude-y")]}
    got = entries(eps, listed)
    assert got == [
        Choice("", "auto", ""),  # Settings' own (the default model), as before a picker
        Choice("", "gemini", "demo-gemini"),
        Choice(OTHER, "anthropic", "claude-y"),
        Choice(OTHER, "anthropic", "claude-x"),
    ]
    assert label_of(got[0], False) == "default model"
    assert label_of(got[2], True) == "claude-y · other.test"
    assert all(choice_of(value_of(c)) == c for c in got)
    for bad in (
        "",
        "nope",
        "[1,2,3]",
        json.dumps(["a", "b"]),
        json.dumps(["", "auto", "m" * 201]),
        json.dumps(["", "nope", "m"]),
    ):
        assert choice_of(bad) is None


def test_a_model_the_relay_refuses_names_the_fix() -> None:
    body = json.dumps(
        {"error": {"type": "model_not_served", "message": "model 'x' is not served by this relay"}}
    )
    said = http_failure(400, body, "application/json", url=RELAY, from_relay=True)
    assert said.startswith("HTTP 400 Bad Request: model 'x' is not served")
    assert "pick another in the Model menu beside Send" in said and "Regenerate" in said
    other = http_failure(400, '{"error": {"message": "bad"}}', "application/json", url=RELAY)
    assert "Model menu" not in other


def test_the_demo_answer_names_the_model_asked_for() -> None:
    from pysse.server.demo import model_of, plan

    for fmt in ("openai-chat", "openai-responses", "anthropic", "gemini"):
        script = plan(fmt, "hi", pace=0, model=model_of({"model": "demo-gemini"}))
        assert script.chat(fmt).model == "demo-gemini"
    ids = [m["id"] for m in demo_model_list()["data"]]
    assert all(model_of({"model": i}) == i for i in ids)
    assert model_of({"model": "gpt-5"}) == "" and model_of({"model": 3}) == ""
    assert plan("anthropic", "hi", pace=0, model="").chat("anthropic").model == "demo"
    assert Script.answer("x").chat().model == "demo"


# -- the page ----------------------------------------------------------------------------------


def picker_values(page: ModelPage) -> list[Choice | None]:
    return [choice_of(o.getAttribute("value")) for o in page.q("[data-role=model-picker]").children]


def test_the_page_fills_the_picker_and_sends_with_the_choice() -> None:
    async def go() -> None:
        more = f"{OTHER} anthropic claude-z"
        page = ModelPage(settings={"endpoints": more})
        page.net.probes["http://relay.test/v1/models"] = Probe(
            True, 200, text=models("gpt-a", "gpt-b", fmt="openai-chat")
        )  # (OTHER has none: 404)
        page.net.probes["https://other.test/v1/models"] = Probe(True, 404)
        await page.boot()
        assert not [u for u in page.net.probed if u.endswith("/v1/models")]  # (not opened)
        page.fire(page.q("[data-role=model-picker]"), "focus")  # opened: now asked
        await page.settle()
        models_urls = {"http://relay.test/v1/models", "https://other.test/v1/models"}
        assert models_urls <= set(page.net.probed)  # (and the format probe of the relay)
        assert {u.split("/")[2] for u in page.net.probed} == {"relay.test", "other.test"}
        assert picker_values(page) == [
            Choice("", "auto", ""),
            Choice("", "openai-chat", "gpt-a"),
            Choice("", "openai-chat", "gpt-b"),
            Choice(OTHER, "anthropic", "claude-z"),
        ]
        note = page.q("[data-role=model-note]")
        assert not note.hidden and "other.test/relay has no model list" in note.textContent
        pick = Choice(OTHER, "anthropic", "claude-z")
        page.fire(page.q("[data-role=model-picker]"), "change", value=value_of(pick))
        page.net.play(Script.answer("hi there", "anthropic").body)
        page.send("hello")
        await page.settle()
        (req,) = page.net.requests
        assert req["url"] == OTHER and req["body"]["model"] == "claude-z"
        assert page.app.conv.choice == pick
        assert choice_of(json.loads(page.view.stored[SETTINGS_KEY])["choice"]) == pick
        stored = json.loads(next(iter(page.store.data["bodies"].values())))
        assert stored["choice"] == pick.to_json()
        # A new chat takes the last choice; the first chat keeps its own after another pick.
        first = page.app.conv
        page.click("[data-role=new-chat]")
        await page.settle()
        assert page.app.picker.current(page.app.conv) == pick
        gpt = Choice("", "openai-chat", "gpt-b")
        page.fire(page.q("[data-role=model-picker]"), "change", value=value_of(gpt))
        assert page.app.picker.current(first) == pick
        page.net.play(Script.answer("ok").body)
        page.send("again")
        await page.settle()
        assert page.net.requests[-1]["url"] == RELAY
        assert page.net.requests[-1]["body"]["model"] == "gpt-b"

    asyncio.run(go())


def test_a_chat_naming_a_relay_not_in_settings_sends_to_settings_own() -> None:
    async def go() -> None:
        page = ModelPage()
        await page.boot()
        page.app.conv.choose(Choice("https://evil.test/relay", "openai-chat", "x"))
        page.net.play(Script.answer("ok").body)
        page.send("hello")
        await page.settle()
        assert [r["url"] for r in page.net.requests] == [RELAY]
        assert all("evil" not in u for u in page.net.probed)

    asyncio.run(go())
