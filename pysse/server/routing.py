"""Which upstream a request goes to, chosen by the model it names, and the list of models
the relay serves (``GET /v1/models``, in OpenAI's shape, so a page's picker or an SDK's
``client.models.list()`` fills itself).

Why by model and not by path: every official SDK sends the model in the body (Gemini's in
the path), and a page switching models should need nothing else; the relay's own paths
(``/relay``, the native ones) stay the same whichever upstream answers.

The lookup, in order (``route``):

1. a model that exactly one upstream lists (``--upstream-models``) goes there, as is;
2. ``NAME/MODEL`` where NAME is an upstream goes to NAME with ``MODEL`` (the prefix is
   dropped before forwarding): the way to name a model two upstreams list, or any model of
   an upstream that lists none;
3. any other model goes to the one upstream that lists no models (a catch-all, as the
   single ``--upstream URL`` has always been), if there is exactly one;
4. else a 400 naming the models served and the fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..providers import Provider, get_provider

__all__ = ["NAME_RE", "Refusal", "Upstream", "guess_format", "model_list", "route"]

# An upstream's name: what a model's ``NAME/`` prefix and ``owned_by`` say. No '/' (the
# prefix's separator), no '=' (the flags' separator), nothing a shell would expand.
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
DEFAULT_NAME = "default"  # the single --upstream URL's


class Refusal(Exception):
    """A request the relay answers with a JSON error instead of forwarding."""

    def __init__(self, status: int, kind: str, message: str, log_it: bool = True) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.log_it = log_it


@dataclass(frozen=True)
class Upstream:
    """One provider the relay forwards to: its base URL, wire format and key (read from
    its variable at start; never shown: not in ``repr``, not in ``/v1/models``), and the
    models it serves (empty: whatever the request names)."""

    name: str
    url: str
    format: str = "openai-chat"
    api_key: str | None = field(default=None, repr=False)
    models: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        get_provider(self.format)  # a ValueError naming the valid formats

    @property
    def provider(self) -> Provider:
        return get_provider(self.format)

    def url_for(self, model: str | None) -> str:
        """The URL to POST to (``Provider.upstream_url``: a model in the path must be a plain
        name, else ``ValueError``)."""
        return self.provider.upstream_url(self.url, model or "")

    def auth_headers(self) -> dict[str, str]:
        return self.provider.auth_headers(self.api_key) if self.api_key else {}


def guess_format(upstream: str) -> str:
    """The wire format an upstream URL suggests (``--format`` or ``--upstream-format``
    says it otherwise)."""
    u = upstream.lower()
    if "anthropic" in u or u.endswith("/messages"):
        return "anthropic"
    if "generativelanguage" in u or "gemini" in u:
        return "gemini"
    if u.endswith("/responses"):
        return "openai-responses"
    return "openai-chat"


def _shown(model: str) -> str:
    return repr(model[:100])


def route(
    upstreams: list[Upstream], model: str | None, allowed: list[str] | None = None
) -> tuple[Upstream, str | None]:
    """The upstream for a request naming ``model``, and the model to send it (without a
    ``NAME/`` prefix). A ``Refusal`` (400) when no upstream, or more than one, fits."""
    if len(upstreams) == 1 and (model is None or not upstreams[0].models):
        only = upstreams[0]  # the single upstream: as before several existed
        if model is not None and model.startswith(f"{only.name}/"):
            model = model.removeprefix(f"{only.name}/")
        return only, model
    if model is None:
        raise Refusal(
            400,
            "model_required",
            f"this relay serves several upstreams ({', '.join(u.name for u in upstreams)}) "
            "and picks one by the request's model: name a model (GET /v1/models lists them)",
        )
    bare = model.removeprefix("models/")  # Gemini's own spelling of a model in a body
    listing = [
        u for u in upstreams if model in u.models or (u.provider.model_in_path and bare in u.models)
    ]
    if len(listing) == 1:
        return listing[0], model
    name, slash, rest = model.partition("/")
    if slash:
        for u in upstreams:
            if u.name == name and rest and (not u.models or rest in u.models):
                return u, rest
    if len(listing) > 1:
        which = " or ".join(f"{u.name}/{model}" for u in listing)
        raise Refusal(
            400,
            "model_ambiguous",
            f"model {_shown(model)} is served by several upstreams: name one, e.g. {which}",
        )
    catch_all = [u for u in upstreams if not u.models]
    if len(catch_all) == 1 and not (slash and any(u.name == name for u in upstreams)):
        return catch_all[0], model
    served = ", ".join(m["id"] for m in model_list(upstreams, allowed)["data"]) or "none listed"
    raise Refusal(
        400,
        "model_not_served",
        f"model {_shown(model)} is not served by this relay (served: {served}; GET /v1/models "
        "lists them): name one of those, or start the relay with --upstream-models "
        "NAME=MODEL for the upstream that serves it",
    )


def model_list(upstreams: list[Upstream], allowed: list[str] | None = None) -> dict[str, Any]:
    """``GET /v1/models``: OpenAI's list (``{"object": "list", "data": [...]}``), one entry
    per model an upstream lists, in the order given. ``owned_by`` is the upstream's name,
    and ``pysse`` says what a page needs to ask it (the wire format); the official SDKs keep
    fields they do not know. A model two upstreams list is shown as ``NAME/MODEL`` (what a
    request must say). ``allowed`` (``--allow-model``): only those."""
    catch_all = [u for u in upstreams if not u.models]
    listed = {
        u.name: list(dict.fromkeys(u.models))
        # The one upstream taking any model (a single --upstream URL) serves the allowed ones.
        or (list(allowed or ()) if catch_all == [u] else [])
        for u in upstreams
    }
    count: dict[str, int] = {}
    for models in listed.values():
        for m in models:
            count[m] = count.get(m, 0) + 1
    data = [
        {
            "id": m if count[m] == 1 else f"{u.name}/{m}",
            "object": "model",
            "created": 0,
            "owned_by": u.name,
            "pysse": {"upstream": u.name, "format": u.format},
        }
        for u in upstreams
        for m in listed[u.name]
        if not allowed or m in allowed
    ]
    return {"object": "list", "data": data}
