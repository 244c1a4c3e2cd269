"""The composer's model picker, pure: what a relay's ``GET /v1/models`` answer offers
(read defensively: any relay may answer anything), the picker's entries for the endpoints
in Settings, how an entry is written in the ``<select>``'s value, and the short sentence
when a relay lists nothing.

Bounded wherever an answer could be large: at most ``MAX_LISTED`` models a relay, each name
one line of at most ``MAX_MODEL`` characters; a name that is not text is skipped, as is an
entry that is not an object. Nothing here reaches a network: ``picker_view`` asks, through
the page's ``Net.probe``, only the hosts of the endpoints in Settings (``endpoints``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..call.net import Probe
from ..chats.choice import MAX_MODEL, Choice
from ..jsonsafe import loads_bounded
from ..providers import FORMATS, PROVIDERS
from .endpoints import Endpoint

__all__ = [
    "MAX_LISTED",
    "Listed",
    "choice_of",
    "entries",
    "label_of",
    "read_model_list",
    "read_probe",
    "value_of",
]

MAX_LISTED = 500  # models taken from one relay's list
MAX_ENTRIES = 1_000  # entries in the picker, all endpoints together
MODELS_BYTES = 1 << 20  # read of a /v1/models answer: ~10,000 models in OpenAI's shape


@dataclass(frozen=True)
class Listed:
    """A model a relay listed, and the format it said to write its requests in ("" when it
    did not say: pysse relays do, in ``pysse.format``)."""

    model: str
    format: str = ""


def read_model_list(text: str) -> tuple[list[Listed], str]:
    """The models of a ``/v1/models`` answer (OpenAI's ``{"data": [{"id": ...}]}``), at
    most ``MAX_LISTED``; and a problem in words ("" when none)."""
    try:
        doc = loads_bounded(text)
    except ValueError:
        return [], "its model list is not JSON (or too large to read)"
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, list):
        return [], 'its model list has no "data" list'
    out: dict[str, Listed] = {}
    for item in data:
        if len(out) >= MAX_LISTED:
            more = f"showing the first {MAX_LISTED} of its {len(data):,} models"
            return list(out.values()), more
        if not isinstance(item, dict):
            continue
        mid = item.get("id")
        if not isinstance(mid, str) or not 0 < len(mid) <= MAX_MODEL:
            continue
        mid = " ".join(mid.split())
        info = item.get("pysse")
        fmt = info.get("format") if isinstance(info, dict) else None
        if mid and mid not in out:
            out[mid] = Listed(mid, fmt if isinstance(fmt, str) and fmt in PROVIDERS else "")
    return list(out.values()), ""


def read_probe(name: str, found: Probe) -> tuple[list[Listed], str]:
    """What asking ``name``'s relay for its models found: the models, and a short sentence
    when it listed none or some were left out ("" when all went well)."""
    keep = "the picker shows the models set in Settings"
    if not found.reached:
        return [], f"{name} could not be asked for its models ({found.error[:120]}): {keep}."
    if found.status == 404:
        return [], f"{name} has no model list (/v1/models: 404): {keep}."
    if not 200 <= found.status < 300:
        return [], f"{name} answered HTTP {found.status} when asked for its models: {keep}."
    listed, problem = read_model_list(found.text)
    if problem and not listed:
        return [], f"{name}: {problem}: {keep}."
    return listed, f"{name}: {problem}." if problem else ""


def entries(endpoints: Sequence[Endpoint], listed: Mapping[str, Sequence[Listed]]) -> list[Choice]:
    """The picker's entries: each endpoint's listed models (``listed``, by relay as typed),
    then the models Settings names that it did not list; an endpoint with neither has one
    entry, its default model. The first endpoint's first entry is always Settings' own
    (its Model field, or the default model): what the page sent before there was a picker.
    At most ``MAX_ENTRIES``, in Settings' order."""
    out: list[Choice] = []
    for i, ep in enumerate(endpoints):
        mine: dict[str, Choice] = {}
        if i == 0:
            own = ep.models[0] if ep.models else ""
            mine[own] = Choice(ep.relay, ep.format, own)
        for m in listed.get(ep.relay, ()):
            fmt = ep.format if ep.format != "auto" else (m.format or "auto")
            mine.setdefault(m.model, Choice(ep.relay, fmt, m.model))
        for name in ep.models:
            mine.setdefault(name, Choice(ep.relay, ep.format, name))
        out += list(mine.values()) or [Choice(ep.relay, ep.format, "")]
    return out[:MAX_ENTRIES]


def label_of(choice: Choice, several: bool) -> str:
    """An entry's text: the model (or "default model"), and with several endpoints the
    relay's host (or path) it goes to."""
    name = choice.model or "default model"
    if not several:
        return name
    parts = urlsplit(choice.relay)
    where = parts.netloc or parts.path or "this site"
    return f"{name} · {where}"


def value_of(choice: Choice) -> str:
    """An entry as the ``<option>``'s value (JSON: any model name round-trips)."""
    return json.dumps([choice.relay, choice.format, choice.model])


def choice_of(value: Any) -> Choice | None:
    """The entry an ``<option>`` value (or a kept last choice) names; None if unreadable."""
    try:
        got = json.loads(str(value)) if value else None
    except ValueError:
        return None
    if (
        isinstance(got, list)
        and len(got) == 3
        and all(isinstance(x, str) for x in got)
        and got[1] in FORMATS
        and len(got[2]) <= MAX_MODEL
    ):
        return Choice(got[0], got[1], got[2])
    return None
