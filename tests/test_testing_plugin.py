"""pysse.testing.plugin: the fixtures arrive through the ``pytest11`` entry point, cost nothing
to sessions that do not use them, and work from a clean install of the wheel with
``[testing]`` (a fresh venv, pip from the local wheel + PyPI)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

# A user's test file: only the standard library's HTTP client, so the clean venv needs nothing
# beyond pysse[testing].
USER_TESTS = """
import sys
import urllib.request

from pysse import iter_chat
from pysse.testing import Script


def chat(url):
    req = urllib.request.Request(url + "/v1/messages", data=b'{"stream": true}')
    with urllib.request.urlopen(req) as resp:
        return list(iter_chat(iter(lambda: resp.read1(64), b""), "anthropic"))


def test_nothing_was_imported_for_a_test_without_the_fixtures():
    assert "pysse.testing.plugin" in sys.modules  # loaded by the entry point
    assert "pysse.testing.server" not in sys.modules  # but nothing heavy


def test_a_saved_answer_at_one_byte_per_chunk(sse_server):
    sse_server.play(Script.answer("Hello from a clean install", "anthropic").chunked(1))
    events = chat(sse_server.url)
    assert events[-1].outcome == "completed"
    assert "".join(getattr(e, "text", "") for e in events) == "Hello from a clean install"
    assert sse_server.last_request.body == b'{"stream": true}'


def test_a_drop_mid_answer_is_truncated(sse_servers):
    server = sse_servers(Script.answer("one two three", "anthropic").drop(after_event=3))
    events = chat(server.url)
    assert events[-1].outcome == "truncated" and "IncompleteRead" in events[-1].detail
"""


def run_pytest(python: str | Path, where: Path) -> subprocess.CompletedProcess[str]:
    (where / "test_user.py").write_text(USER_TESTS)
    return subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_user.py"],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_entry_point_names_the_plugin() -> None:
    (ep,) = [ep for ep in entry_points(group="pytest11") if ep.name == "pysse"]
    assert ep.value == "pysse.testing.plugin"


def test_the_plugin_imports_nothing_heavy() -> None:
    code = textwrap.dedent("""
        import sys
        import pysse.testing.plugin
        heavy = ["asyncio", "uvicorn", "starlette", "httpx", "playwright",
                 "pysse.testing.server", "pysse.testing.script", "pysse.server"]
        print([m for m in heavy if m in sys.modules])
    """)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_the_fixtures_work_in_a_separate_project(tmp_path: Path) -> None:
    result = run_pytest(sys.executable, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout


def test_a_clean_install_with_the_testing_extra_has_the_fixtures(tmp_path: Path) -> None:
    import build  # the project's build script: the same wheel the site is built from

    wheel = build.build_pysse_wheel()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    installed = subprocess.run(
        [*pip, f"{wheel}[testing]"], capture_output=True, text=True, timeout=600
    )
    assert installed.returncode == 0, installed.stderr
    freeze = subprocess.run(
        [str(python), "-m", "pip", "freeze"], capture_output=True, text=True, check=True
    ).stdout.lower()
    assert "httpx" not in freeze and "starlette" not in freeze  # [testing] stays small
    work = tmp_path / "project"
    work.mkdir()
    result = run_pytest(python, work)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout
