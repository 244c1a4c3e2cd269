"""Your ASGI app (Starlette, FastAPI, the pysse page...) served for real on a free loopback
port, for tests that need a browser or a real HTTP client to reach it. Needs uvicorn (the
``testing`` extra)."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any, Self

from ..errors import KitError

__all__ = ["LiveServer", "free_port"]


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on right now (the OS picks it)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class LiveServer:
    """``with LiveServer(app) as live:`` serves ``app`` at ``live.url`` until the block ends
    (uvicorn in a thread; no lifespan events)."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int | None = None) -> None:
        import uvicorn

        self.port = port or free_port(host)
        self.url = f"http://{host}:{self.port}"
        self.server = uvicorn.Server(
            uvicorn.Config(app, host=host, port=self.port, log_level="warning", lifespan="off")
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Self:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                self.server.should_exit = True
                raise KitError(f"the live server did not start on {self.url}")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
