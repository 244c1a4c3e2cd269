"""The tests' own helpers, also used by the benchmarks. They now live in the testing kit
(``pysse.testing``) for everyone; this module re-exports them so existing imports keep working."""

from __future__ import annotations

from pysse.testing.browser import CHROMIUM_ARGS
from pysse.testing.browser import find_chromium as chromium_path
from pysse.testing.live import LiveServer, free_port

__all__ = ["CHROMIUM_ARGS", "LiveServer", "chromium_path", "free_port"]
