"""The page's settings: their defaults, how a saved copy and the server's site config combine,
and how a form value becomes a setting. Pure; the browser reads and writes the DOM and
``localStorage`` around it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..jsonsafe import loads_bounded
from ..providers import FORMATS

__all__ = ["DEFAULTS", "SETTINGS_KEY", "coerce", "image_hosts", "load_settings"]

SETTINGS_KEY = "pysse.settings.v1"  # the localStorage key
DEFAULTS: dict[str, Any] = {
    "relay": "",
    "format": "auto",
    "model": "",
    "system": "",
    "headers": "",
    "first_byte_s": 60,
    "idle_s": 30,
    "image_hosts": "",
}


def load_settings(saved: str | None, site: Mapping[str, Any]) -> dict[str, Any]:
    """The defaults, then the server's format (site.json), then what the user saved (a JSON
    object; anything unreadable or unknown is ignored)."""
    s = dict(DEFAULTS)
    if site.get("format") in FORMATS:
        s["format"] = site["format"]
    try:
        stored = loads_bounded(saved or "{}")
    except ValueError:
        stored = None
    if isinstance(stored, dict):
        s.update({k: coerce(k, v) for k, v in stored.items() if k in DEFAULTS})
    if s["format"] not in FORMATS:
        s["format"] = "auto"
    return s


def coerce(key: str, value: Any) -> Any:
    """A form or stored value as the setting's type: whole seconds >= 1 for the timeouts
    (the default when unreadable), text for everything else."""
    default = DEFAULTS[key]
    if isinstance(default, int):
        try:
            return max(1, int(float(value)))
        except (TypeError, ValueError, OverflowError):
            return default
    return "" if value is None else str(value)


def image_hosts(settings: Mapping[str, Any]) -> frozenset[str]:
    """The comma-separated "load images from hosts" setting as a set of host names."""
    return frozenset(h.strip() for h in str(settings["image_hosts"]).split(",") if h.strip())
