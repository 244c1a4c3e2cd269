"""__main__.py: ``python -m pysse dump|replay`` agree with ChatStream on every fixture."""

from __future__ import annotations

import io
import json

import pytest

from fixtures_util import FIXTURES, load_fixtures, reference
from pysse.__main__ import main

ALL = load_fixtures()


@pytest.mark.parametrize(("name", "body", "expected"), ALL, ids=[a[0] for a in ALL])
def test_cli_dump_and_replay_agree_with_chatstream(
    name: str, body: bytes, expected: dict[str, object]
) -> None:
    path = str(FIXTURES / f"{name}.sse")
    ref = reference(body)
    for argv in (["dump", "--chat", "--timing", path], ["replay", path, "--chunk", "1"]):
        out = io.StringIO()
        assert main(argv, out) == 0
        lines = [json.loads(x) for x in out.getvalue().splitlines()]
        text = "".join(x["text"] for x in lines if x["type"] == "text")
        assert text == ref.text, argv
        assert lines[-1]["type"] == "summary"
        assert lines[-1]["outcome"] == str(ref.outcome)
    out = io.StringIO()
    assert main(["replay", path, "--all-sizes"], out) == 0
    assert all(json.loads(x)["same"] for x in out.getvalue().splitlines())


def test_dump_raw_events_and_comments() -> None:
    out = io.StringIO()
    assert main(["dump", "--comments", str(FIXTURES / "openai_chat_text.sse")], out) == 0
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    assert lines[0] == {"comment": "OPENROUTER PROCESSING"}
    assert lines[-1] == {"event": "message", "data": "[DONE]", "id": ""}
