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


def redis_server_path() -> str:
    """Debian's redis-server ($PYSSE_REDIS_SERVER, then PATH); an error naming the install."""
    import shutil

    found = os.environ.get("PYSSE_REDIS_SERVER") or shutil.which("redis-server")
    if not found:
        raise RuntimeError(
            "redis-server is needed for the multi-relay tests: apt-get install redis-server "
            "(python build.py test installs it when run as root)"
        )
    return found


class RedisServer:
    """A real redis-server on a free loopback port, nothing saved to disk, for one test."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.dir = tempfile.TemporaryDirectory(prefix="pysse-redis-")
        self.proc = subprocess.Popen(
            [
                redis_server_path(),
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self.dir.name,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), 0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.dir.cleanup()
