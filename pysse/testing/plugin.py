"""The kit's pytest fixtures, registered through pysse's ``pytest11`` entry point: installing
``pysse[testing]`` makes them available in every test, with no ``conftest.py``.

pytest imports this module in every session of every project where pysse is installed, so it
imports nothing but pytest: the server is imported when a test first asks for a fixture.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .script import Script
    from .server import ScriptServer

__all__ = ["sse_server", "sse_servers"]


@pytest.fixture
def sse_server() -> Iterator[ScriptServer]:
    """A :class:`~pysse.testing.ScriptServer` on a free loopback port for this test; call
    ``sse_server.play(Script...)``, point the code under test at ``sse_server.url``, then
    assert on ``sse_server.requests``. Stopped after the test, every connection closed."""
    from .server import ScriptServer

    with ScriptServer() as server:
        yield server


@pytest.fixture
def sse_servers() -> Iterator[Callable[..., ScriptServer]]:
    """A factory for several scripted servers in one test (an upstream per provider, a
    primary and a fallback...): ``sse_servers(script, ...)`` starts one playing those
    scripts. All are stopped after the test."""
    from .server import ScriptServer

    started: list[ScriptServer] = []

    def start(*scripts: Script) -> ScriptServer:
        server = ScriptServer(*scripts).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
