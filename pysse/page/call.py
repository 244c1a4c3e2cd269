"""Deprecated: removed in the next release. ``ChatCall`` and its kin live in
``pysse.call.call``; an embedder's page imports them from ``pysse.browser``."""

from __future__ import annotations

import warnings

# the moved module's own names, never a second list of them
from ..call.call import *  # noqa: F403
from ..call.call import __all__ as __all__

warnings.warn(
    "pysse.page.call is deprecated and removed in the next release: import ChatCall, "
    "ChatResult and Timeouts from pysse.browser (or pysse.call.call)",
    DeprecationWarning,
    stacklevel=2,
)
