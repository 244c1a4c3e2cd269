"""A real ``redis-server`` for tests and benchmarks: Debian's binary on a free loopback port,
nothing saved to disk, waited for until it answers ``PING``. One home for the launcher that
the relay's multi-process tests and the resume and scale benchmarks all use (not in the
browser wheel: ``pysse/testing/`` is server-side)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time

from .live import free_port

__all__ = ["RedisServer", "redis_server_path"]


def redis_server_path() -> str:
    """Debian's redis-server ($PYSSE_REDIS_SERVER, then PATH); an error naming the install."""
    found = os.environ.get("PYSSE_REDIS_SERVER") or shutil.which("redis-server")
    if not found:
        raise RuntimeError(
            "redis-server is needed for the multi-relay tests: apt-get install redis-server "
            "(python build.py test installs it when run as root)"
        )
    return found


class RedisServer:
    """A redis-server on a free loopback port until ``stop()``; ``url`` for the relay's
    ``--store``. ``directory``: its working directory (a temporary one if not given)."""

    def __init__(self, directory: str | None = None) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._tmp = None if directory else tempfile.TemporaryDirectory(prefix="pysse-redis-")
        workdir = directory or self._tmp.name  # type: ignore[union-attr]
        argv = [redis_server_path(), "--port", str(self.port), "--bind", "127.0.0.1"]
        argv += ["--save", "", "--appendonly", "no", "--dir", workdir]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
        if self._tmp is not None:
            self._tmp.cleanup()
