"""The providers' own paths, as their official SDKs call them with a base URL, for the
reference relay and the demo relay alike (one place, so both serve the same paths):

* openai (``base_url=.../v1``): ``/v1/chat/completions``, ``/v1/responses``;
* anthropic (``base_url=...``): ``/v1/messages``;
* google-genai (``http_options.base_url``): ``/v1/models/{model}:streamGenerateContent``
  (its default API version) and ``/v1beta/...`` (``api_version="v1beta"``) for
  ``generate_content_stream``; ``generate_content`` posts to ``...:generateContent`` and is
  not streamed, so it gets a clear 400 naming the streaming call.

Anything else gets a JSON 404 naming the paths served (a JSON 405 for a served path asked
with the wrong method), never Starlette's bare text.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from ..providers import Provider
from .body import json_error

__all__ = [
    "ANY_METHOD",
    "GEMINI_VERSIONS",
    "error_handlers",
    "native_paths",
    "not_streamed_endpoint",
    "unary_paths",
]

GEMINI_VERSIONS = ("v1", "v1beta")  # google-genai's default, and the one Google documents
STREAM_METHOD = ":streamGenerateContent"
UNARY_METHOD = ":generateContent"
# A route that answers whatever the method (Starlette's default for a function is GET only).
ANY_METHOD = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


def native_paths(provider: Provider) -> list[str]:
    """The route paths where ``provider``'s SDK streams (``{model}`` where the model is part
    of the path)."""
    if provider.model_in_path:
        return [f"/{v}/models/{{model}}{STREAM_METHOD}" for v in GEMINI_VERSIONS]
    return [provider.demo_path.split("?", 1)[0]]


def unary_paths(provider: Provider) -> list[str]:
    """The paths of the same format's non-streaming call (Gemini's ``generateContent``)."""
    if provider.model_in_path:
        return [f"/{v}/models/{{model}}{UNARY_METHOD}" for v in GEMINI_VERSIONS]
    return []


def not_streamed_endpoint(provider: Provider) -> Callable[[Request], Awaitable[Response]]:
    """A non-streaming call: a 400 saying which call streams (pysse relays streams only)."""

    async def endpoint(request: Request) -> Response:
        return json_error(
            400,
            "stream_required",
            f"{request.url.path} is not streamed and this server relays streams only: "
            f"call generate_content_stream (POST .../models/MODEL{STREAM_METHOD}?alt=sse)",
        )

    return endpoint


def error_handlers(
    served: Iterable[str],
) -> dict[int, Callable[[Request, Exception], Awaitable[Response]]]:
    """Starlette ``exception_handlers`` for 404 and 405: JSON naming the streaming paths
    among ``served``."""
    streaming = (p.replace("{model}", "MODEL") for p in served if UNARY_METHOD not in p)
    paths = ", ".join(dict.fromkeys(streaming))

    async def handler(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 404
        where = request.url.path
        if status == 405:
            return json_error(
                405,
                "method_not_allowed",
                f"{request.method} is not served at {where}: POST a request there",
                dict(exc.headers or {}) if isinstance(exc, HTTPException) else None,
            )
        return json_error(404, "not_found", f"nothing is served at {where}; try {paths}")

    return {404: handler, 405: handler}
