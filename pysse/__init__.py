"""pysse: stream an LLM chat answer from bytes to a web page, in Python (CPython or Pyodide).

Layers, each usable alone:

    bytes --SSEParser--> SSEEvent --ChatStream--> chat events --StreamingMarkdown--> HTML blocks

Everything here is sans-IO and pure Python; only ``pysse.browser`` touches ``js``/``pyodide``.
"""

from .errors import ChatStreamError, PysseError, SSEProtocolError
from .sse import SSEEvent, SSEParser

__all__ = [
    "ChatStreamError",
    "PysseError",
    "SSEEvent",
    "SSEParser",
    "SSEProtocolError",
]

__version__ = "0.1.0"
