"""The page's settings: their defaults, how a saved copy and the server's site config combine,
and how a form value becomes a setting. Pure; the browser reads and writes the DOM and
``localStorage`` around it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..jsonsafe import loads_bounded
from ..providers import FORMATS

__all__ = [
    "CHOICES",
    "DEFAULTS",
    "SETTINGS_KEY",
    "UNREADABLE_KEY",
    "coerce",
    "dump_settings",
    "image_hosts",
    "load_settings",
    "unreadable",
]

SETTINGS_KEY = "pysse.settings.v1"  # the localStorage key
DEFAULTS: dict[str, Any] = {
    "relay": "",
    "format": "auto",
    "model": "",
    "system": "",
    "headers": "",
    "first_byte_s": 60,
    "idle_s": 30,
    "content_s": 300,  # only keep-alives (no content) for this long: the answer times out
    "image_hosts": "",
    "theme": "system",  # system | light | dark
    "keep_recordings": "yes",  # keep each answer's bytes for the inspector after a reload
    "thinking": 0,  # a reasoning budget in tokens; 0 asks for none (the model's default)
    "endpoints": "",  # more relays, one a line: URL [FORMAT] [MODEL,...] (``app.endpoints``)
    "choice": "",  # the picker's last choice (``model_picker.value_of``): new chats take it
}
CHOICES: dict[str, tuple[str, ...]] = {
    "theme": ("system", "light", "dark"),
    "keep_recordings": ("yes", "no"),
}
MAX_THINKING = 128_000  # tokens: no model thinks longer in one answer
MAX_SECONDS = 86_400  # a timeout longer than a day is none
MAX_TEXT = 100_000  # characters of a text setting (a system prompt, headers)
SITE_FORMAT_KEY = "site_format"  # stored beside the settings: the site format they were made for
UNREADABLE_KEY = SETTINGS_KEY + ".unreadable"  # where saved settings that cannot be read are kept


def unreadable(saved: str | None) -> str | None:
    """Why saved settings cannot be read (not JSON, not an object), or None (nothing saved
    is fine). The page then keeps that text under ``UNREADABLE_KEY`` before it saves over
    it, and says so: nothing the user set is lost without a word."""
    if not saved:
        return None
    try:
        stored = loads_bounded(saved)
    except ValueError as exc:
        return f"they are not JSON ({str(exc)[:80]})"
    return None if isinstance(stored, dict) else "they are not a JSON object"


def load_settings(saved: str | None, site: Mapping[str, Any]) -> dict[str, Any]:
    """The defaults, then the server's format (site.json), then what the user saved (a JSON
    object; anything unreadable or unknown is ignored).

    A saved format is kept only if it was chosen while the site said the same format: once
    the server is started with another ``--format`` (or the site rebuilt with one), the
    server's format wins over the stale saved value instead of silently overriding it."""
    s = dict(DEFAULTS)
    site_fmt = site.get("format") if site.get("format") in FORMATS else None
    if site_fmt:
        s["format"] = site_fmt
    try:
        stored = loads_bounded(saved or "{}")
    except ValueError:
        stored = None
    if isinstance(stored, dict):
        if site_fmt and stored.get(SITE_FORMAT_KEY) != site_fmt:
            stored.pop("format", None)
        s.update({k: coerce(k, v) for k, v in stored.items() if k in DEFAULTS})
    if s["format"] not in FORMATS:
        s["format"] = "auto"
    return s


def dump_settings(settings: Mapping[str, Any], site: Mapping[str, Any]) -> str:
    """The settings as stored, with the site format they were chosen under."""
    return json.dumps({**settings, SITE_FORMAT_KEY: site.get("format") or ""})


def coerce(key: str, value: Any) -> Any:
    """A form or stored value as the setting's type: whole seconds >= 1 for the timeouts
    (the default when unreadable), a budget >= 0 for ``thinking``, one of ``CHOICES`` for a
    choice, text for the rest."""
    default = DEFAULTS[key]
    if key in CHOICES:
        return value if value in CHOICES[key] else default
    if key == "thinking":
        try:
            return min(MAX_THINKING, max(0, int(float(value or 0))))
        except (TypeError, ValueError, OverflowError):
            return default
    if isinstance(default, int):
        try:
            return min(MAX_SECONDS, max(1, int(float(value))))
        except (TypeError, ValueError, OverflowError):
            return default
    return "" if value is None else str(value)[:MAX_TEXT]


def image_hosts(settings: Mapping[str, Any]) -> frozenset[str]:
    """The comma-separated "load images from hosts" setting as a set of host names."""
    return frozenset(h.strip() for h in str(settings["image_hosts"]).split(",") if h.strip())
