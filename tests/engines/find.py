"""Where each engine is on this machine: an environment variable, then Debian's path, then
``PATH``; otherwise ``EngineUnavailable`` naming the package to install (``python build.py
test`` installs them when it runs as root, as it does Chromium). Never a download of a
browser build."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from . import EngineUnavailable

__all__ = ["find_firefox", "find_node", "find_puppeteer_core", "find_webkit"]

ROOT = Path(__file__).resolve().parents[2]
PUPPETEER_VERSION = "25.16.0"  # build.py's, where it installs it from npm
MINIBROWSER = (
    "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser",
    "/usr/lib/aarch64-linux-gnu/webkit2gtk-4.1/MiniBrowser",
    "/usr/libexec/webkit2gtk-4.1/MiniBrowser",
)


def _first(*candidates: str | None) -> str | None:
    for c in candidates:
        if c and Path(c).exists():
            return c
    return None


def find_firefox() -> str:
    found = _first(
        os.environ.get("PYSSE_FIREFOX"),
        "/usr/bin/firefox-esr",
        shutil.which("firefox-esr"),
        shutil.which("firefox"),
    )
    if not found:
        raise EngineUnavailable(
            "No Firefox found: apt-get install firefox-esr (or set PYSSE_FIREFOX)"
        )
    return found


def find_node() -> str:
    found = shutil.which("node")
    if not found:
        raise EngineUnavailable("Node.js drives Firefox (puppeteer-core): apt-get install nodejs")
    return found


def find_puppeteer_core() -> str:
    found = _first(
        os.environ.get("PYSSE_PUPPETEER_CORE"),
        str(
            ROOT
            / ".cache"
            / f"puppeteer-core-{PUPPETEER_VERSION}"
            / "node_modules"
            / "puppeteer-core"
        ),
    )
    if not found:
        raise EngineUnavailable(
            "puppeteer-core is not installed: `python build.py test` installs it from npm "
            "(or set PYSSE_PUPPETEER_CORE to its package folder)"
        )
    return found


def find_webkit() -> tuple[str, str, str]:
    """The MiniBrowser, WebKitWebDriver and Xvfb."""
    minibrowser = _first(os.environ.get("PYSSE_MINIBROWSER"), *MINIBROWSER)
    driver = _first(
        os.environ.get("PYSSE_WEBKIT_DRIVER"),
        "/usr/bin/WebKitWebDriver",
        shutil.which("WebKitWebDriver"),
    )
    xvfb = _first("/usr/bin/Xvfb", shutil.which("Xvfb"))
    if not (minibrowser and driver):
        raise EngineUnavailable(
            "No WebKitGTK found: apt-get install webkit2gtk-driver (it brings the MiniBrowser "
            "and WebKitWebDriver; or set PYSSE_MINIBROWSER and PYSSE_WEBKIT_DRIVER)"
        )
    if not xvfb:
        raise EngineUnavailable("WebKitGTK needs a display: apt-get install xvfb")
    return minibrowser, driver, xvfb
