"""Why a request from the page failed, in words a person can act on. Pure functions; the
browser package gathers the facts (status, headers, a probe of the relay) and shows the text.

Every message names the likely cause and the fix: "this relay does not allow the origin
http://...; start it with --allow-origin http://...", never "TypeError: Failed to fetch" or
a page of raw HTML.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..chat import ChatStream
from ..providers import PROVIDERS, http_error_message

__all__ = [
    "Probe",
    "format_mismatch",
    "http_failure",
    "setup_notice",
    "stream_format",
    "unreachable",
]

# Headers a browser sends without a preflight (CORS-safelisted); anything else the page
# adds must be allowed by the relay's preflight answer.
SAFELISTED = frozenset({"accept", "accept-language", "content-language"})


def label(fmt: str) -> str:
    provider = PROVIDERS.get(fmt)
    return provider.label if provider else fmt


def stream_format(raw: bytes) -> str | None:
    """The wire format these bytes are in, if any event identifies one (``auto``)."""
    cs = ChatStream("auto")
    cs.feed(raw)
    return cs.detected_format


def format_mismatch(chosen: str, detected: str | None, advertised: str = "") -> str | None:
    """ "This is an OpenAI Chat stream but Format is Anthropic ..." when the stream (or the
    relay's ``X-Pysse-Format``) says another format than the one chosen; else None."""
    if chosen == "auto":
        return None
    actual = detected or (advertised if advertised in PROVIDERS else None)
    if actual is None or actual == chosen:
        return None
    article = "an" if label(actual)[:1] in "AEIOU" else "a"
    return (
        f"this is {article} {label(actual)} stream but Format is {label(chosen)}: set Format to "
        f"auto or {label(actual)} in Settings"
    )


# The relay's refusals of a request's model (``pysse.server.routing``, ``config``): the user
# can fix them without touching the relay, by choosing another model.
MODEL_REFUSALS = ("model_not_served", "model_ambiguous", "model_required", "model_not_allowed")
MODEL_FIX = (
    "the relay does not serve that model: pick another in the Model menu beside Send (or "
    "check Settings → Model and More endpoints), then press Regenerate"
)


def http_failure(
    status: int,
    body: str,
    content_type: str,
    *,
    url: str,
    retry_after: str = "",
    from_relay: bool = False,
) -> str:
    """A non-2xx answer as one line: status, reason, the body's own message (never markup),
    and, when the answer did not come from a pysse relay, what the URL probably is."""
    message = http_error_message(status, body, content_type)
    if retry_after:
        message += f" (retry after {retry_after} s)"
    if status == 400 and any(f'"{kind}"' in body[:4096] for kind in MODEL_REFUSALS):
        message += f" — {MODEL_FIX}"
    if not from_relay and status in (404, 405, 501):
        message += (
            f" — {url} does not look like a relay: check Settings → Relay URL (a pysse "
            "relay listens at /relay)"
        )
    return message


def not_a_stream(status: int, content_type: str, body: str, url: str) -> str:
    what = content_type.split(";", 1)[0].strip() or "no content type"
    summary = http_error_message(status, body, content_type).partition(": ")[2]
    return (
        f"the relay answered {status} with {what}, not text/event-stream: the relay URL "
        f"({url}) probably points at a page, not a relay" + (f" ({summary})" if summary else "")
    )


@dataclass(frozen=True)
class Probe:
    """What a GET of the relay URL (no preflight needed) found after a failed POST."""

    reached: bool
    status: int = 0
    relay: bool = False  # it carried X-Pysse-Relay
    info: Mapping[str, Any] = field(default_factory=dict)  # a pysse relay's JSON
    error: str = ""

    @staticmethod
    def from_json(text: str) -> Probe:
        try:
            d = json.loads(text)
        except (ValueError, TypeError):
            return Probe(reached=False, error="no probe")
        if not isinstance(d, dict):
            return Probe(reached=False)
        info: Any = {}
        if d.get("reached"):
            try:
                info = json.loads(str(d.get("text") or ""))
            except ValueError:
                info = {}
        return Probe(
            reached=bool(d.get("reached")),
            status=int(d.get("status") or 0),
            relay=bool(d.get("relay")),
            info=info if isinstance(info, dict) else {},
            error=str(d.get("error") or ""),
        )


def unreachable(
    url: str,
    page_origin: str,
    sent_headers: Mapping[str, str],
    probe: Probe,
) -> str:
    """Why ``fetch()`` failed with no response ("Failed to fetch"), from what a probe found."""
    target = urlsplit(url)
    custom = sorted(
        h.lower()
        for h in sent_headers
        if h.lower() not in SAFELISTED and h.lower() != "content-type"
    )
    if probe.reached and probe.relay:
        err = probe.info.get("error")
        if isinstance(err, dict) and err.get("type") == "origin_not_allowed":
            return (
                f"the relay at {url} does not allow the origin {page_origin}; start it with "
                f"--allow-origin {page_origin}"
            )
        allowed = {str(h).lower() for h in probe.info.get("allow_headers") or []}
        missing = [h for h in custom if h not in allowed]
        if missing:
            flags = " ".join(f"--allow-header {h}" for h in missing)
            return (
                f"the relay at {url} refused the preflight: the request header "
                f"{', '.join(missing)} is not allowed; remove it from Settings → Extra request "
                f"headers, or start the relay with {flags}"
            )
        return (
            f"the relay at {url} is up but the browser refused the request (CORS preflight); "
            f"check the relay's log, and that it was started with --allow-origin {page_origin}"
        )
    if probe.reached:
        return (
            f"{url} answered, but not as a relay that allows this page (no CORS headers for "
            f"{page_origin}): check Settings → Relay URL, and start the relay with "
            f"--allow-origin {page_origin}"
        )
    causes = ["the relay is not running (start it: pysse-relay --upstream ...)"]
    causes.append(f"the host or port in {url} is wrong")
    if page_origin.startswith("https:") and target.scheme == "http":
        causes.insert(0, "this page is https and the relay http: browsers block that")
    return f"could not reach the relay at {url}: " + "; or ".join(causes)


def setup_notice(page_origin: str) -> str:
    """What a static site with no relay configured shows instead of sending."""
    return (
        "No relay is configured, so there is nowhere to send messages. Start a relay next to "
        "your API key:  pip install 'pysse[relay]'  then  pysse-relay --upstream "
        f"https://api.openai.com/v1 --api-key-env OPENAI_API_KEY --allow-origin {page_origin}  "
        "— and put its URL (http://127.0.0.1:8787/relay) in Settings → Relay URL, or rebuild "
        "the site with  python build.py site DIR --relay URL."
    )
