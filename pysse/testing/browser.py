"""Debian's Chromium for Playwright tests: where it is and the flags it needs in a container.

pysse never downloads a browser (no ``playwright install``): it uses the system's Chromium,
``$PYSSE_CHROMIUM`` or the first ``chromium`` found."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Playwright

__all__ = ["CHROMIUM_ARGS", "find_chromium", "launch_chromium"]

# No sandbox (containers run as root), no GPU, and none of the background traffic a fresh
# profile starts (updates, sync, first-run pages).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def find_chromium() -> str:
    """``$PYSSE_CHROMIUM``, else ``/usr/bin/chromium``, else ``chromium`` or
    ``chromium-browser`` on ``PATH``; ``ConfigError`` saying how to get one otherwise."""
    candidates = [
        os.environ.get("PYSSE_CHROMIUM"),
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ]
    for c in candidates:
        if c and Path(c).exists():
            return c
    raise ConfigError(
        "No Chromium found. Install Debian's package (`sudo apt-get install chromium`) or set "
        "PYSSE_CHROMIUM=/path/to/chromium. (pysse never downloads a browser itself.)"
    )


def launch_chromium(playwright: Playwright, **options: Any) -> Browser:
    """``playwright.chromium.launch`` with the system's Chromium and :data:`CHROMIUM_ARGS`
    (plus any ``args`` given)."""
    args = [*CHROMIUM_ARGS, *options.pop("args", [])]
    return playwright.chromium.launch(executable_path=find_chromium(), args=args, **options)
