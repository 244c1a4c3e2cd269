"""The relay installs and runs as the README says, from a fresh virtual environment: the
wheel with its ``relay`` extra, the ``pysse-relay`` console script, a keyless upstream, and a
chat streamed through it. (Needs PyPI for the extra's dependencies; pip's cache makes
repeated runs quick.)"""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

import httpx

from fake_upstream import DELTAS, Upstream
from pysse import ChatStream
from support import LiveServer, ServerProcess, free_port

ROOT = Path(__file__).resolve().parents[1]


def test_fresh_venv_pip_install_relay_extra_then_pysse_relay(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT))
    import build

    wheel = build.build_pysse_wheel()
    venv.EnvBuilder(with_pip=True).create(tmp_path / "venv")
    bin_dir = tmp_path / "venv" / "bin"
    pip = subprocess.run(
        [
            str(bin_dir / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            f"{wheel}[relay]",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert pip.returncode == 0, pip.stderr[-3000:]
    script = bin_dir / "pysse-relay"
    helped = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "--allow-origin" in helped.stdout

    up = Upstream()
    with LiveServer(up.app) as live:
        port = free_port()
        # As the README writes it, keyless (a local OpenAI-compatible server needs no key).
        relay = ServerProcess(
            [
                str(script),
                "--upstream",
                live.url + "/v1",
                "--allow-origin",
                "http://127.0.0.1:5000",
                "--port",
                str(port),
            ],
            port,
        )
        try:
            body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
            with httpx.Client(timeout=30) as c:
                resp = c.post(relay.url + "/relay", json=body)
            cs = ChatStream()
            cs.feed(resp.content)
            assert cs.outcome == "completed" and cs.text == "".join(DELTAS)
            assert "authorization" not in up.headers[0]
            assert "pysse relay: POST" in relay.output()
        finally:
            relay.stop()
