"""The demo relay keeps its answers like the real relay does (``pysse.server.resume``), so
the page's reconnect and reload paths can be watched without a provider: a demo answer is a
testing-kit ``Script`` played into the answer store instead of straight to the socket, and
the page reads it (and resumes it) from there.

``/demo cut`` cuts the page's connection mid-answer while the answer goes on being
"generated": the page shows "Reconnecting…", resumes, and ends with the whole answer.
Scenarios that are not a stream (``/demo 401``, ``/demo html``...) are played directly.

``GET /v1/models`` lists one demo model per format (``demo_models``), in the real relay's
shape, so a page's model picker can be tried offline.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..providers import PROVIDERS
from ..testing.asgi import ScriptResponse
from ..testing.player import wait
from ..testing.script import Script
from .resume import Answers, TailResponse
from .serve import STOPPING, Stopped
from .store import MemoryStore

__all__ = ["DemoAnswers", "demo_model_list", "demo_models"]

DEMO_HEADERS = {"x-pysse-relay": "demo"}


def demo_model_list() -> dict[str, Any]:
    """One model a format, ``demo-FORMAT`` (the demo answers whatever the model), listed as
    the real relay lists its upstreams' (``routing.model_list``): owned by ``demo``, with
    the format a page must speak to it."""
    return {
        "object": "list",
        "data": [
            {
                "id": f"demo-{name}",
                "object": "model",
                "created": 0,
                "owned_by": "demo",
                "pysse": {"upstream": "demo", "format": name},
            }
            for name in PROVIDERS
        ],
    }


async def demo_models(request: Request) -> Response:
    """``GET /v1/models`` of the demo relay."""
    return JSONResponse(demo_model_list(), headers={**DEMO_HEADERS, "cache-control": "no-store"})


async def played(script: Script) -> AsyncIterator[bytes]:
    """The script's writes, paced, as an async iterator (its ending, clean or dropped, is
    the end of the answer); ends at once when the server stops."""
    try:
        await STOPPING.race(wait(script.headers_delay), None)
        for delay, data in script.writes:
            await STOPPING.race(wait(delay), None)
            if data:
                yield data
    except Stopped:
        return


class DemoAnswers:
    """The demo's answer store (in memory) and its resume/stop endpoints."""

    def __init__(self, ttl: float = 600.0, max_bytes: int = 64 << 20) -> None:
        self.answers = Answers(MemoryStore(ttl, max_bytes), unwatched=120.0)

    async def respond(
        self, script: Script, cut_after: int | None = None
    ) -> ScriptResponse | TailResponse:
        ctype = dict((k.lower(), v) for k, v in script.headers).get("content-type", "")
        if script.status != 200 or not ctype.startswith("text/event-stream"):
            return ScriptResponse(script, stop=STOPPING.future)
        answer_id = await self.answers.start(played(script), ctype)
        opened = await self.answers.store.open(answer_id, 0)
        return TailResponse(opened, answer_id, dict(DEMO_HEADERS), cut_after=cut_after)

    async def other(self, request: Request) -> Response | TailResponse:
        """``GET ?answer=ID&from=N`` (resume) and ``DELETE ?answer=ID`` (Stop)."""
        if request.method == "DELETE":
            return await self.answers.stop_request(request, dict(DEMO_HEADERS))
        return await self.answers.resume(request, dict(DEMO_HEADERS))
