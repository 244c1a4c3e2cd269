"""Deprecated: removed in the next release. What lived here has moved by what it is for:
``pysse.call`` (one answer's streaming call, ``ChatCall``), ``pysse.chats`` (conversations,
chat files, merging, search, recordings) and ``pysse.app`` (the bundled page's settings,
requests-to-come and views). Only ``pysse.page.call`` is kept, for one release."""

from __future__ import annotations

import warnings

warnings.warn(
    "pysse.page is deprecated and removed in the next release: the streaming call is "
    "pysse.call (ChatCall: pysse.call.call, or pysse.browser), the chats are pysse.chats, "
    "the bundled page is pysse.app",
    DeprecationWarning,
    stacklevel=2,
)
