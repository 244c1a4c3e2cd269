"""Which endpoint and model a chat asks (the composer's model picker, issue #43): kept with
the chat so it survives a reload, an export and import, and a second tab.

A choice names the endpoint by its relay URL as typed in Settings ("" is the page's own
relay: the site's, or the built-in demo), the format its requests are written in, and the
model. It is only a wish: the page sends to a relay only if Settings still lists it
(``pysse.app.endpoints``), so an imported chat never makes the page call another host.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..providers import FORMATS
from .records import MAX_SHORT, Reader

__all__ = ["MAX_MODEL", "Choice", "read_choice"]

MAX_MODEL = 200  # a model's name (as ``ChatStream.model`` keeps one)


@dataclass(frozen=True)
class Choice:
    """One entry of the picker: where (``relay``, as Settings has it), how (``format``) and
    which ``model`` ("": the one the relay or provider picks)."""

    relay: str
    format: str
    model: str

    def to_json(self) -> dict[str, str]:
        return {"relay": self.relay, "format": self.format, "model": self.model}


def read_choice(value: Any, r: Reader) -> Choice | None:
    """A stored or imported ``choice``, checked: each field text, the format one pysse
    knows, the model one line of at most ``MAX_MODEL`` characters. None when absent, or
    (read leniently) unreadable."""
    if value is None:
        return None
    where = "the chat's 'choice'"
    if not isinstance(value, dict):
        return r.bad(where, "must be an object with relay, format and model", None)
    relay = r.text(value.get("relay"), f"{where} relay", MAX_SHORT)
    fmt = value.get("format")
    if fmt not in FORMATS:
        return r.bad(f"{where} format", f"must be one of {', '.join(FORMATS)}", None)
    model = value.get("model")
    if not isinstance(model, str):
        return r.bad(f"{where} model", 'must be a model\'s name (text; "" for the default)', None)
    if len(model) > MAX_MODEL:
        return r.bad(f"{where} model", f"is longer than {MAX_MODEL} characters", None)
    if any(c.isspace() and c != " " for c in model + relay) or relay != relay.strip():
        return r.bad(where, "must be one line (no tabs or line breaks)", None)
    return Choice(relay, str(fmt), model.strip())
