"""pysse's testing kit: test your own streaming page or service the way pysse tests its own.

    from pysse.testing import Script

    def test_a_drop_mid_answer(sse_server):          # the fixture comes with pysse[testing]
        sse_server.play(Script.from_file("saved.sse").chunked(1).drop(after_byte=400))
        ...                                           # point your page or client at sse_server.url

* :class:`Script` (``script.py``): an immutable description of one answer: which bytes (a
  recorded ``.sse`` file, a generated answer in any provider format, with reasoning and
  :class:`ToolUse` tool calls if wanted, a provider-shaped HTTP error, keep-alives), cut
  how, paced how, with which fault.
* :class:`ScriptServer` (``server.py``): plays scripts on a free loopback port, one HTTP chunk
  per write, real drops, slow headers; records each request and whether the client left. A
  wait for ever in a script (``.stall()``) holds the answer there until the test calls
  ``request.release()``: a state is checked while it lasts, not raced.
* :func:`play` (``player.py``) and :class:`ScriptResponse` (``asgi.py``): the same player on any
  ASGI server.
* the ``sse_server`` / ``sse_servers`` pytest fixtures (``plugin.py``, registered by pysse's
  ``pytest11`` entry point).
* :class:`CutProxy` (``proxy.py``): a TCP proxy a test cuts like a pulled cable.
* :class:`LiveServer` (``live.py``): your ASGI app on a free port (needs uvicorn), and
  :func:`launch_chromium` (``browser.py``): the system's Chromium for Playwright.

Server-side only: never part of the wheel the page loads. Names are imported on first use, so
the pytest plugin costs nothing to sessions that do not use it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..errors import KitError

if TYPE_CHECKING:
    from .asgi import ScriptResponse
    from .browser import CHROMIUM_ARGS, find_chromium, launch_chromium
    from .live import LiveServer, free_port
    from .player import Sink, play
    from .proxy import CutProxy
    from .script import SSE_HEADERS, Chunking, Ending, Script, ToolUse, Write
    from .server import RecordedRequest, ScriptServer

__all__ = [
    "CHROMIUM_ARGS",
    "SSE_HEADERS",
    "Chunking",
    "CutProxy",
    "Ending",
    "KitError",
    "LiveServer",
    "RecordedRequest",
    "Script",
    "ScriptResponse",
    "ScriptServer",
    "Sink",
    "ToolUse",
    "Write",
    "find_chromium",
    "free_port",
    "launch_chromium",
    "play",
]

_HOME = {
    "ScriptResponse": "asgi",
    "CHROMIUM_ARGS": "browser",
    "find_chromium": "browser",
    "launch_chromium": "browser",
    "LiveServer": "live",
    "free_port": "live",
    "CutProxy": "proxy",
    "Sink": "player",
    "play": "player",
    "SSE_HEADERS": "script",
    "Chunking": "script",
    "Ending": "script",
    "Script": "script",
    "ToolUse": "script",
    "Write": "script",
    "RecordedRequest": "server",
    "ScriptServer": "server",
}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'pysse.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_HOME[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
