"""Debian's Chromium for Playwright tests: where it is and the flags it needs in a container.

pysse never downloads a browser (no ``playwright install``): it uses ``$PYSSE_CHROMIUM`` if set
(and says so if that names no program), else the system's Chromium."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Playwright

__all__ = ["CHROMIUM_ARGS", "find_chromium", "launch_chromium"]

ENV_VAR = "PYSSE_CHROMIUM"

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
    ``chromium-browser`` on ``PATH``; ``ConfigError`` saying how to get one otherwise.

    An explicit ``$PYSSE_CHROMIUM`` is never passed over: if it names no executable, the
    error says so (falling back to another Chromium would test a browser nobody chose)."""
    explicit = os.environ.get(ENV_VAR)
    if explicit:
        return _explicit(explicit)
    candidates = [
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ]
    for c in candidates:
        if c and Path(c).exists():
            return c
    raise ConfigError(
        "No Chromium found. Install Debian's package (`sudo apt-get install chromium`) or set "
        f"{ENV_VAR}=/path/to/chromium. (pysse never downloads a browser itself.)"
    )


def _explicit(value: str) -> str:
    """``$PYSSE_CHROMIUM`` as set: a path, or a command name looked up on ``PATH``."""
    fix = f"point {ENV_VAR} at a Chromium executable (e.g. /usr/bin/chromium) or unset it"
    if os.sep not in value and not (os.altsep and os.altsep in value):
        found = shutil.which(value)
        if found is None:
            raise ConfigError(f"{ENV_VAR}={value}: no such command on PATH: {fix}")
        return found
    path = Path(value)
    if not path.exists():
        raise ConfigError(f"{ENV_VAR}={value}: no such file: {fix}")
    if path.is_dir():
        raise ConfigError(f"{ENV_VAR}={value} is a directory, not a program: {fix}")
    if not os.access(path, os.X_OK):
        raise ConfigError(f"{ENV_VAR}={value} is not executable (chmod +x?): {fix}")
    return value


def launch_chromium(playwright: Playwright, **options: Any) -> Browser:
    """``playwright.chromium.launch`` with the system's Chromium and :data:`CHROMIUM_ARGS`
    (plus any ``args`` given)."""
    args = [*CHROMIUM_ARGS, *options.pop("args", [])]
    return playwright.chromium.launch(executable_path=find_chromium(), args=args, **options)
