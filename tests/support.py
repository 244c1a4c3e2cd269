"""The tests' own helpers, also used by the benchmarks. They now live in the testing kit
(``pysse.testing``) for everyone; this module re-exports them so existing imports keep working."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from pysse.testing.browser import CHROMIUM_ARGS
from pysse.testing.browser import find_chromium as chromium_path
from pysse.testing.live import LiveServer, free_port
from pysse.testing.redis import RedisServer, redis_server_path

__all__ = [
    "CHROMIUM_ARGS",
    "LiveServer",
    "RedisServer",
    "ServerProcess",
    "chromium_path",
    "free_port",
    "redis_server_path",
]


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
