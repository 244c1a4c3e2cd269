"""Deprecated: removed in the next release. ``ChatCall`` and its kin live in
``pysse.call.call``; an embedder's page imports them from ``pysse.browser``."""

from __future__ import annotations

import warnings

from ..call.call import (
    CallListener,
    ChatCall,
    ChatResult,
    Net,
    NetHandle,
    Probe,
    Timeouts,
    body_json,
    safely,
)

__all__ = [
    "CallListener",
    "ChatCall",
    "ChatResult",
    "Net",
    "NetHandle",
    "Probe",
    "Timeouts",
    "body_json",
    "safely",
]

warnings.warn(
    "pysse.page.call is deprecated and removed in the next release: import ChatCall, "
    "ChatResult and Timeouts from pysse.browser (or pysse.call.call)",
    DeprecationWarning,
    stacklevel=2,
)
