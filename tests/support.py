"""The tests' own helpers, also used by the benchmarks: an ASGI app served on a free loopback
port in a thread, and Debian's Chromium (found by ``build.find_chromium``, the one lookup) with
the flags it needs here."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str:
    """Debian's Chromium, as ``python build.py test`` finds it (never downloaded)."""
    from build import find_chromium

    return find_chromium(install=False)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LiveServer:
    """``with LiveServer(app) as live:`` serves ``app`` at ``live.url`` until the block ends."""

    def __init__(self, app: Any, port: int | None = None) -> None:
        import uvicorn

        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(
            uvicorn.Config(
                app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="off"
            )
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.time() + 20
        while not self.server.started:
            if time.time() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


class ServerProcess:
    """A server in a child process (``argv``), waited for on ``port``, its output (stdout
    and stderr together) collected in a file; ``nofile`` caps its open files."""

    def __init__(self, argv: list[str], port: int, nofile: int | None = None) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        fd, name = tempfile.mkstemp(prefix="pysse-server-", suffix=".log")
        os.close(fd)
        self.out_path = Path(name)
        self.out = self.out_path.open("wb")

        def limit() -> None:
            if nofile:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        env = {k: v for k, v in os.environ.items() if k != "PYSSE_BUILD_IN_VENV"}
        self.proc = subprocess.Popen(
            argv,
            cwd=Path(__file__).resolve().parents[1],
            stdout=self.out,
            stderr=subprocess.STDOUT,
            preexec_fn=limit,
            env={**env, "PYTHONUNBUFFERED": "1"},
        )
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), 0.2):
                    return
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.05)
        out = self.output()
        self.stop()
        raise RuntimeError(f"server on {port} did not start:\n{out}")

    def output(self) -> str:
        self.out.flush()
        return self.out_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        self.out.close()
        self.out_path.unlink(missing_ok=True)
