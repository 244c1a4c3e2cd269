"""site.json as the page's Python may use it, checked where it enters (issue #40): the keys
the page reads, each with a value of its type; anything else, or a value of the wrong type
(a hand-edited or damaged file, a host that answers with something else), is left out and
named once on the console. The page then behaves as on a site without that key."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from ..providers import FORMATS

__all__ = ["read_site"]

MAX_URL = 2_000
MAX_WHEELS = 64


def read_site(raw: Any) -> dict[str, Any]:
    """The checked site config (a dict of the known keys only)."""
    site = raw if isinstance(raw, dict) else {}
    out: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in site.items():
        check = CHECKS.get(key)
        if check is None:
            continue  # (e.g. "first": the main thread's, read there)
        if check(value):
            out[key] = value
        else:
            dropped.append(key)
    if dropped or not isinstance(raw, dict):
        what = ", ".join(dropped) if dropped else "the whole file (not a JSON object)"
        print(f"pysse: site.json: left out {what}: not of the type the page reads", file=sys.stderr)
    return out


def _url(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= MAX_URL


def _demo(value: Any) -> bool:
    """The demo relay's paths by format (``build.py serve``)."""
    return isinstance(value, dict) and all(k in FORMATS and _url(v) for k, v in value.items())


def _wheels(value: Any) -> bool:
    return isinstance(value, list) and len(value) <= MAX_WHEELS and all(map(_url, value))


def _format(value: Any) -> bool:
    return value == "" or value in FORMATS


def _off_or_demo(value: Any) -> bool:
    return value is None or value is False or _demo(value)


def _object(value: Any) -> bool:
    return value is None or isinstance(value, dict)


CHECKS: dict[str, Callable[[Any], bool]] = {
    "relay": _url,
    "format": _format,
    "demo": _off_or_demo,
    "wheels": _wheels,
    "first": _object,
}
