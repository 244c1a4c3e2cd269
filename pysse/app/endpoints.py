"""The endpoints a user keeps in Settings: the first is the Relay URL, Format and Model
fields as they have always been (so settings saved before there were several keep working
unchanged: their relay *is* the first endpoint); more come one a line from the "More
endpoints" field, ``URL [FORMAT] [MODEL,MODEL...]``.

Why a line each rather than a form per endpoint: one field the page already knows how to
save and check, typed or pasted, as long as any other; bounded (``MAX_ENDPOINTS`` lines,
``MAX_MODELS`` names a line) with a sentence for each line it cannot use.

Pure; ``model_picker`` makes the picker's entries from these.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..call.request import check_relay_url
from ..providers import FORMATS
from .settings import MAX_TEXT

__all__ = ["MAX_ENDPOINTS", "MAX_MODELS", "Endpoint", "endpoints_of", "models_url"]

MAX_ENDPOINTS = 20  # the first (Relay URL) and up to 19 more
MAX_MODELS = 100  # models named for one endpoint
MAX_MODEL = 200  # characters of a model's name
MAX_URL = 2_000
_API_ROOT = re.compile(r"/v1(?:beta|alpha)?/")


@dataclass(frozen=True)
class Endpoint:
    """A relay (its URL as typed: "" is the page's own, the site's relay or the demo), the
    format its requests are written in ("auto": as the relay or its model list says), and
    the models Settings names for it (the picker shows them when the relay lists none)."""

    relay: str
    format: str = "auto"
    models: tuple[str, ...] = ()


def endpoints_of(settings: Mapping[str, Any]) -> tuple[list[Endpoint], list[str]]:
    """The endpoints in Settings, the first from Relay URL, Format and Model; and a sentence
    for each "More endpoints" line left out (where, why, what to write instead)."""
    first_model = " ".join(str(settings.get("model") or "").split())[:MAX_MODEL]
    first = Endpoint(
        str(settings.get("relay") or "").strip(),
        str(settings.get("format") or "auto"),
        (first_model,) if first_model else (),
    )
    found, problems = [first], []
    lines = str(settings.get("endpoints") or "")[:MAX_TEXT].splitlines()
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"Settings → More endpoints, line {n}"
        if len(found) >= MAX_ENDPOINTS:
            problems.append(f"{where}: at most {MAX_ENDPOINTS} endpoints; the rest are left out")
            break
        ep, why = _parse_line(line)
        if ep is None:
            problems.append(f"{where}: {why}")
        elif any(e.relay == ep.relay for e in found):
            problems.append(f"{where}: {ep.relay} is listed already; this line is left out")
        else:
            found.append(ep)
    return found, problems


def _parse_line(line: str) -> tuple[Endpoint | None, str]:
    url, *rest = line.split()
    if len(url) > MAX_URL:
        return None, f"the URL is longer than {MAX_URL:,} characters"
    problem = check_relay_url(url)
    if problem:
        return None, f"{problem} (write: URL [format] [model,model...])"
    fmt = "auto"
    if rest and rest[0] in FORMATS:
        fmt = rest.pop(0)
    names = [m for word in rest for m in word.split(",") if m]
    if len(names) > MAX_MODELS:
        return None, f"more than {MAX_MODELS} models; name the ones you use"
    long = next((m for m in names if len(m) > MAX_MODEL), None)
    if long is not None:
        return None, f"the model name {long[:40]!r}… is longer than {MAX_MODEL} characters"
    return Endpoint(url, fmt, tuple(dict.fromkeys(names))), ""


def models_url(url: str) -> str:
    """Where the relay posted to at ``url`` lists its models (``GET /v1/models``, OpenAI's
    shape): beside its API root (``…/v1/…``) or its ``/relay`` path, else at the root of its
    host. Always the same host as ``url``: the page asks no other."""
    parts = urlsplit(url)
    path = parts.path
    root = _API_ROOT.search(path)
    if root is not None:
        base = path[: root.start()]
    elif path.endswith("/relay"):
        base = path[: -len("/relay")]
    else:
        base = ""
    head = f"{parts.scheme}://{parts.netloc}" if parts.netloc else ""
    return f"{head}{base}/v1/models"
