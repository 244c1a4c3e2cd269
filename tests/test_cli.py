"""__main__.py: ``python -m pysse dump|replay`` agree with ChatStream on every fixture, and a file
that is no stream (missing, a directory, empty, unreadable) is one line and exit status 2."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "secret.sse"
    path.write_bytes(b"data: x\n\n")
    path.chmod(0)
    if os.access(path, os.R_OK):  # root reads it anyway: refuse it the way the OS would
        real = open

        def refusing(file: Any, *args: Any, **kw: Any) -> Any:
            if str(file) == str(path):
                raise PermissionError(13, "Permission denied", str(file))
            return real(file, *args, **kw)

        monkeypatch.setattr("builtins.open", refusing)
    return path


PROBLEMS = {
    "missing": (lambda tmp, mp: tmp / "missing.sse", "missing.sse: no such file"),
    "directory": (lambda tmp, mp: tmp, "is a directory, not a saved stream"),
    "empty": (lambda tmp, mp: (tmp / "e.sse", (tmp / "e.sse").write_bytes(b""))[0], "is empty"),
    "unreadable": (unreadable, "cannot be read: permission denied"),
    "read-error": (lambda tmp, mp: Path("/proc/self/mem"), "reading failed after 0 bytes"),
}


@pytest.mark.parametrize("problem", PROBLEMS)
@pytest.mark.parametrize(
    "argv", [["dump"], ["dump", "--chat"], ["replay"], ["replay", "--all-sizes"]], ids=" ".join
)
def test_a_file_that_is_no_stream_is_one_line_and_status_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    problem: str,
    argv: list[str],
) -> None:
    # Issue 24: a traceback (FileNotFoundError, IsADirectoryError, ...), and 0 for an empty file.
    make, needle = PROBLEMS[problem]
    path = make(tmp_path, monkeypatch)
    out = io.StringIO()
    assert main([*argv, str(path)], out) == 2
    err = capsys.readouterr().err
    assert err.startswith("pysse: ") and needle in err and err.count("\n") == 1, err
    assert out.getvalue() == ""


def test_the_command_line_says_it_in_one_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pysse", "dump", "missing.sse"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        2,
        "",
        "pysse: missing.sse: no such file\n",
    )
    empty = subprocess.run(
        [sys.executable, "-m", "pysse", "dump", "-"], capture_output=True, text=True, input=""
    )
    assert (
        empty.returncode == 2
        and empty.stderr == "pysse: stdin is empty (0 bytes): no stream to read\n"
    )
