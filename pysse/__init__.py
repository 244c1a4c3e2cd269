"""pysse: stream an LLM chat answer from bytes to a web page, in Python (CPython or Pyodide).

Layers, each usable alone:

    bytes --SSEParser--> SSEEvent --ChatStream--> chat events --StreamingMarkdown--> HTML blocks

Everything here is sans-IO and pure Python; only ``pysse.browser`` touches ``js``/``pyodide``.
"""

from .accumulate import Accumulator
from .chat import ChatStream, aiter_chat, iter_chat
from .errors import (
    AttachmentError,
    ChatStreamError,
    ConfigError,
    EventTooLargeError,
    LineTooLongError,
    PysseError,
    SSEProtocolError,
)
from .events import (
    ChatEvent,
    Citation,
    Finish,
    Outcome,
    ProviderError,
    ReasoningBlock,
    ReasoningDelta,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from .providers import FORMATS, Format
from .sse import SSEEvent, SSEParser

__all__ = [
    "FORMATS",
    "Accumulator",
    "AttachmentError",
    "ChatEvent",
    "ChatStream",
    "ChatStreamError",
    "Citation",
    "ConfigError",
    "EventTooLargeError",
    "Finish",
    "Format",
    "LineTooLongError",
    "Outcome",
    "ProviderError",
    "PysseError",
    "ReasoningBlock",
    "ReasoningDelta",
    "SSEEvent",
    "SSEParser",
    "SSEProtocolError",
    "TextDelta",
    "ToolCall",
    "ToolCallDelta",
    "Usage",
    "aiter_chat",
    "iter_chat",
]

__version__ = "0.1.0"
