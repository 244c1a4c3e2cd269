"""The request a message sent next would make, as a template with a marker for its text.

``web/app.js`` keeps one so that a message typed while the page's Python starts goes out at
once, from JavaScript; Python adopts that request when it is up because it would send the very
same bytes (``pysse.browser.net.BridgeNet``), so nothing goes out twice. A template comes from
one of two places:

- the page itself, after every change that alters it (``pysse.app.answers.Answers``), kept in
  localStorage for the next visit;
- the site, for a first visit, when nothing is kept yet: ``first_visit`` writes what a fresh
  page with the default settings would send, into site.json (``build.py site`` and
  ``build.py serve``). Its URL may start with ``ORIGIN_MARKER`` (the built-in demo relay is at
  the page's own origin, which only the browser knows).

Pure functions: the same code computes the template at build time in CPython and the request
in the browser, which is what makes the bytes equal."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..call.net import Timeouts
from ..call.request import (
    body_format,
    build_body,
    check_relay_url,
    needs_format_probe,
    parse_header_lines,
    relay_url,
    thinking_budget,
)
from ..providers import Message, Turn
from .settings import load_settings

__all__ = [
    "ORIGIN_MARKER",
    "TEXT_MARKER",
    "first_visit",
    "made_for",
    "outgoing",
    "template",
    "timeouts_of",
]

TEXT_MARKER = "\u0000pysse:next\u0000"  # where the next message's text goes in the body
ORIGIN_MARKER = "\u0000pysse:origin\u0000"  # the page's origin (location.origin), in a URL


def outgoing(
    settings: Mapping[str, Any], fmt: str, messages: Sequence[Message | Turn], thinking: int
) -> tuple[dict[str, str], str]:
    """The headers and JSON body of a request in ``fmt`` for ``messages``, with the user's
    model, system prompt and extra headers."""
    body = build_body(
        fmt, messages, model=settings["model"], system=settings["system"], thinking=thinking
    )
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    headers.update(parse_header_lines(settings["headers"]))
    return headers, json.dumps(body)


def timeouts_of(settings: Mapping[str, Any]) -> Timeouts:
    """The bridge's first-byte, idle and no-content timeouts, from the settings."""
    return Timeouts(
        float(settings["first_byte_s"]), float(settings["idle_s"]), float(settings["content_s"])
    )


def template(
    url: str, headers: Mapping[str, str], body: str, timeouts: Timeouts
) -> dict[str, Any] | None:
    """The template of a request whose body holds ``TEXT_MARKER`` once, where the text goes;
    None when it does not (the text is not one string away from the body). Twice (a history
    that holds the marker's text) would put the new text in twice: no template then."""
    marker = json.dumps(TEXT_MARKER)[1:-1]  # as json.dumps writes it in the body
    if body.count(marker) != 1:
        return None
    return {
        "url": url,
        "headers": dict(headers),
        "body": body,
        "marker": marker,
        "timeouts": list(timeouts.ms()),
    }


def made_for(settings: Mapping[str, Any], site: Mapping[str, Any]) -> dict[str, str]:
    """The relays a kept template was made for: the saved setting and site.json's. The page
    (``web/app.js``) uses the template only while both still say the same, so a relay changed
    since (in Settings, or by a new deployment) never gets a request meant for another."""
    return {"relay": str(settings["relay"]).strip(), "site": str(site.get("relay") or "")}


def first_visit(site: Mapping[str, Any]) -> dict[str, Any] | None:
    """The template of the first message of a first visit to a page served with ``site``
    (site.json): default settings, a new chat. None when a fresh page could not send at once
    (no relay, an invalid one, a format it must first ask the relay for). ``made_for`` holds
    the site's relay and format it was made from: ``web/app.js`` uses it only if site.json
    still says the same (a hand-edited relay never gets a request meant for another)."""
    settings = load_settings(None, site)
    relay = str(site.get("relay") or "")
    if (relay and check_relay_url(relay)) or needs_format_probe(settings["format"], "", site):
        return None
    fmt = body_format(settings["format"], site)
    url = relay_url("", fmt, site, ORIGIN_MARKER)
    if url is None:
        return None
    thinking = thinking_budget(fmt, int(settings["thinking"]), continuing=False)
    headers, body = outgoing(settings, fmt, [("user", TEXT_MARKER)], thinking)
    found = template(url, headers, body, timeouts_of(settings))
    if found is not None:
        found["made_for"] = {"relay": relay, "format": str(site.get("format") or "")}
    return found
