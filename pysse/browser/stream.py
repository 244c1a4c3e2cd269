"""``stream_chat``: one call that streams a chat answer from a relay into an element.

    from pysse.browser import stream_chat

    result = await stream_chat("/relay", body, into="#answer")
    result.text, result.outcome, result.usage

It owns the whole path, so an embedder writes no JavaScript: ``fetch()`` and the read loop
(``bridge.js``, loaded from this package when the page has not), the wire format (``auto``
decides it from the stream), resuming a dropped answer when the relay keeps it, markdown
with hold-back of incomplete syntax, at most one render per animation frame, and scroll
following that never yanks a reader who scrolled up. It returns a :class:`ChatCall` at once:
``await`` it for the :class:`ChatResult`, or ``stop()`` it (also through ``signal=``, a JS
``AbortSignal``). In a worker there is no element: pass ``on_update`` and post each
``Update`` to the page (``pysse.browser.remote``).

The bundled chat page is built on the same ``ChatCall``; bad arguments raise
:class:`StreamChatError` with a message that says what to pass instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import js
from pyodide.ffi import create_proxy

from ..call.answer import AnswerSession
from ..call.call import (
    REPORT,
    CallListener,
    ChatCall,
    ChatResult,
    Timeouts,
    body_json,
    safely,
)
from ..call.extras_view import REAL_WRITER
from ..errors import PysseError
from ..events import ChatEvent
from ..providers import FORMATS, Format
from ..render.update import Update
from .follow import Follow, is_element, scroller_of
from .frame_loop import page_loop
from .js_writer import writer_for_element
from .net import BridgeNet

__all__ = [
    "ChatCall",
    "ChatResult",
    "ElementBusyError",
    "StreamChatError",
    "Timeouts",
    "stream_chat",
]

DEFAULT_HEADERS = {"content-type": "application/json", "accept": "text/event-stream"}
REPORT[0] = lambda message: js.console.error(message)  # a failing callback, in the console
REAL_WRITER[0] = writer_for_element  # dom_writer.js writes into real elements, where it loads
_RUNNING: list[ChatCall] = []  # calls streaming into an element, to refuse a second one


class StreamChatError(PysseError, ValueError):
    """``stream_chat`` was given something it cannot use; the message says what to pass."""


class ElementBusyError(StreamChatError):
    """An answer is already streaming into this element: stop it or await it first."""


def stream_chat(
    url: str,
    body: object,
    *,
    into: Any = None,
    format: Format = "auto",
    headers: Mapping[str, str] | None = None,
    signal: Any = None,
    timeouts: Timeouts | None = None,
    on_event: Callable[[ChatEvent], object] | None = None,
    on_text: Callable[[str], object] | None = None,
    on_update: Callable[[Update], object] | None = None,
    markdown: Any = None,
    follow: bool = True,
    continues: str | None = None,
    reasoning_into: Any = None,
    tools_into: Any = None,
) -> ChatCall:
    """Stream the answer to ``body`` (a JSON-serialisable request, or JSON text) posted to
    ``url`` (a relay; relative URLs resolve against the page) into ``into`` (an element or a
    CSS selector). ``format``: the wire format, or ``auto``. ``headers`` are added to the
    request's. ``on_event`` hears every chat event, ``on_text`` every piece of answer text,
    ``on_update`` every rendered ``Update`` (for a worker); ``markdown``: a ``MarkdownIt``
    (``pysse.render.make_markdown``) to render with. ``continues``: the partial answer this
    request continues (the new text is joined to it). ``reasoning_into`` and ``tools_into``
    (elements or selectors) show the model's reasoning, as markdown, and its tool calls, as
    they stream. See the module docstring."""
    el = _element(into)
    reasoning_el = _element(reasoning_into)
    tools_el = _element(tools_into)
    target = _http_url(url)
    if format not in FORMATS:
        raise StreamChatError(f"format {format!r} is not one of {', '.join(FORMATS)}")
    _check_options(headers, timeouts, on_event=on_event, on_text=on_text, on_update=on_update)
    try:
        payload = body_json(body)
    except (TypeError, ValueError) as exc:
        what = "a string that is not JSON" if isinstance(body, str) else "not JSON-serialisable"
        raise StreamChatError(f"the request body is {what} ({exc}): pass a dict") from None
    if el is not None and any(c.into == el for c in _RUNNING):
        raise ElementBusyError(
            "an answer is already streaming into this element: await it or stop() it first, "
            "or stream into another element"
        )
    sent = {**DEFAULT_HEADERS, **{str(k): str(v) for k, v in (headers or {}).items()}}
    t = timeouts or Timeouts()
    session = AnswerSession(
        format,
        clock=js.performance.now,
        url=target,
        origin=str(js.location.origin),
        sent_headers=sent,
        idle_s=t.idle,
        continues=continues,
        keep_chunks=False,
    )
    following = Follow(scroller_of(el)) if el is not None and follow else None
    call = ChatCall(
        session,
        net=BridgeNet(),
        loop=page_loop(),
        into=el,
        markdown=markdown,
        on_update=on_update,
        after_render=following.after_render if following is not None else None,
        reasoning_into=reasoning_el,
        tools_into=tools_el,
    )
    if on_event is not None or on_text is not None:
        call.listeners.append(_Callbacks(on_event, on_text))
    if el is not None:
        _RUNNING.append(call)
        el.setAttribute("aria-busy", "true")
        call.on_stop(lambda: _ended(call, el, following))
    if signal is not None:
        if bool(signal.aborted):
            call.stop()
            return call
        listener = create_proxy(lambda *_: call.stop())
        signal.addEventListener("abort", listener)
        call.on_stop(lambda: signal.removeEventListener("abort", listener))
    call.post(target, sent, payload, t)
    return call


def _check_options(headers: object, timeouts: object, **callbacks: object) -> None:
    """The keyword arguments whose wrong types would only fail later, deep inside the call
    (or, for a callback, be logged on every chunk while the answer goes on)."""
    if headers is not None and not isinstance(headers, Mapping):
        raise StreamChatError(
            f"headers: pass a dict of header names to values, e.g. "
            f'{{"X-Relay-Secret": "..."}}, not {type(headers).__name__}'
        )
    if timeouts is not None and not isinstance(timeouts, Timeouts):
        raise StreamChatError(
            f"timeouts: pass Timeouts(first_byte=60, idle=30, no_content=300) (seconds; "
            f"from pysse.browser import Timeouts), not {timeouts!r}"
        )
    for name, fn in callbacks.items():
        if fn is not None and not callable(fn):
            raise StreamChatError(
                f"{name}: pass a function (it is called with each one), not {fn!r}"
            )


def _ended(call: ChatCall, el: Any, following: Follow | None) -> None:
    if call in _RUNNING:
        _RUNNING.remove(call)
    el.removeAttribute("aria-busy")
    if following is not None:
        following.close()


def _element(into: Any) -> Any:
    """``into`` as an element in the document (a selector is looked up), or None."""
    if into is None:
        return None
    if isinstance(into, str):
        if not hasattr(js, "document"):
            raise StreamChatError("into: there is no document here (a worker?): use on_update")
        found = js.document.querySelector(into)
        if not is_element(found):
            raise StreamChatError(f"into={into!r}: no element in the document matches it")
        return found
    if not getattr(into, "isConnected", False):
        raise StreamChatError(
            "into: the element is not in the document (append it first, or pass a CSS "
            "selector); the answer would stream where nobody sees it"
        )
    return into


def _http_url(url: str) -> str:
    """``url`` made absolute against the page, refused unless it is http(s)."""
    if not isinstance(url, str) or not url.strip():
        raise StreamChatError(
            "url: pass the relay's URL, e.g. '/relay' or 'https://relay.example/relay'"
        )
    try:
        absolute = str(js.URL.new(url.strip(), js.location.href).href)
    except Exception:
        raise StreamChatError(f"url {url!r} is not a URL") from None
    scheme = absolute.split(":", 1)[0].lower()
    if scheme not in ("http", "https"):
        raise StreamChatError(
            f"url {url!r}: a relay is reached over http:// or https://, not {scheme}:"
        )
    return absolute


class _Callbacks(CallListener):
    """The embedder's callbacks; an exception in one is logged, never ends the answer."""

    def __init__(
        self,
        on_event: Callable[[ChatEvent], object] | None,
        on_text: Callable[[str], object] | None,
    ) -> None:
        self._on_event = on_event
        self._on_text = on_text

    def on_event(self, event: ChatEvent) -> None:
        if self._on_event is not None:
            safely("on_event", self._on_event, event)

    def on_text(self, text: str) -> None:
        if self._on_text is not None:
            safely("on_text", self._on_text, text)
