"""The composer's model picker on the page: a native ``<select>`` filled with the models of
every endpoint in Settings (``endpoints``), asked of each relay's ``GET /v1/models`` through
the page's ``Net.probe`` (a GET: no preflight, no key), else the models Settings names.

The open chat's choice (``Conversation.choice``) is what it shows and what its next request
uses (``effective``); choosing another stores it with the chat and as the last choice, which
a new chat takes. A choice whose relay Settings no longer lists is ignored, so a stored or
imported chat never makes the page call a host the user did not configure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urljoin

from ..chats.choice import Choice
from ..chats.conversation import Conversation
from .endpoints import Endpoint, endpoints_of, models_url
from .model_picker import (
    MODELS_BYTES,
    Listed,
    choice_of,
    entries,
    label_of,
    read_probe,
    value_of,
)
from .platform import spawn

if TYPE_CHECKING:
    from ..view import Document
    from .platform import Platform

__all__ = ["PickerView"]


class _Form(Protocol):
    def url_for(self, relay: str, fmt: str) -> str | None: ...
    def save(self) -> None: ...


class _Chats(Protocol):
    def save(self, conv: Conversation) -> None: ...


class PickerHost(Protocol):
    """What the picker needs from the page."""

    @property
    def doc(self) -> Document: ...
    @property
    def platform(self) -> Platform: ...
    @property
    def settings(self) -> dict[str, Any]: ...
    @property
    def conv(self) -> Conversation: ...
    @property
    def form(self) -> _Form: ...
    @property
    def chats(self) -> _Chats: ...
    def remember_next(self) -> None: ...


class PickerView:
    def __init__(self, app: PickerHost) -> None:
        self.app = app
        self.select = app.doc.querySelector("[data-role=model-picker]")
        self.note = app.doc.querySelector("[data-role=model-note]")
        self.listed: dict[str, list[Listed]] = {}  # relay as typed -> what it listed
        self.notes: dict[str, str] = {}  # relay as typed -> the sentence about its list
        self.asked: dict[str, str] = {}  # relay as typed -> the models URL asked
        self.later: dict[str, str] = {}  # another origin's, asked when the picker is opened
        self.shown: list[Choice] = []

    def bind(self) -> None:
        if self.select is not None:
            self.select.addEventListener("change", self.on_change)
            self.select.addEventListener("focus", self.ask_later)
        self.refresh()

    # -- what a chat asks ----------------------------------------------------------------------

    def endpoints(self) -> list[Endpoint]:
        return endpoints_of(self.app.settings)[0]

    def current(self, conv: Conversation) -> Choice:
        """The chat's choice, else the last one made, if Settings still lists its relay;
        else Settings' own first endpoint (the Relay URL, Format and Model fields)."""
        eps = self.endpoints()
        relays = {e.relay for e in eps}
        for choice in (conv.choice, choice_of(self.app.settings.get("choice"))):
            if choice is not None and choice.relay in relays:
                return choice
        first = eps[0]
        return Choice(first.relay, first.format, first.models[0] if first.models else "")

    def effective(self, conv: Conversation) -> dict[str, Any]:
        """The settings a request of ``conv`` is made with: its endpoint and model."""
        c = self.current(conv)
        return {**self.app.settings, "relay": c.relay, "format": c.format, "model": c.model}

    def on_change(self, e: Any) -> None:
        choice = choice_of(self.select.value if self.select is not None else "")
        if choice is None or choice.relay not in {ep.relay for ep in self.endpoints()}:
            return
        conv = self.app.conv
        conv.choose(choice)
        self.app.settings["choice"] = value_of(choice)
        self.app.form.save()
        self.app.chats.save(conv)  # (an empty chat is kept once it has a message)
        self.app.remember_next()

    # -- filling it ------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Ask each endpoint's relay for its models (once a URL), and show the picker. The
        page's own server (its origin: the site's relay, the demo) is asked at once; another
        origin's relay when the picker is first opened (``ask_later``): a page that never
        opens it sends that relay nothing but its chats."""
        origin = self.app.platform.location.origin
        self.later = {}
        for ep in self.endpoints():
            url = self.app.form.url_for(ep.relay, ep.format)
            if url is None:
                continue
            where = models_url(urljoin(origin + "/", url))
            if self.asked.get(ep.relay) == where:
                continue
            if where.startswith(origin + "/"):
                self._start(ep.relay, where)
            else:
                self.later[ep.relay] = where
        self.render()

    def ask_later(self, *_: Any) -> None:
        """The picker was opened (focused): ask the other relays now."""
        later, self.later = self.later, {}
        for relay, where in later.items():
            if self.asked.get(relay) != where:
                self._start(relay, where)

    def _start(self, relay: str, where: str) -> None:
        self.asked[relay] = where
        spawn(self._ask(relay, where))

    async def _ask(self, relay: str, url: str) -> None:
        found = await self.app.platform.net.probe(url, MODELS_BYTES)
        if self.asked.get(relay) != url:
            return  # (Settings changed meanwhile: a newer ask fills it)
        listed, note = read_probe(_name(relay), found)
        self.listed[relay] = listed
        self.notes[relay] = note
        self.render()

    def render(self) -> None:
        """The entries (rebuilt only when they changed) and the open chat's choice selected."""
        eps = self.endpoints()
        want = entries(eps, self.listed)
        current = self.current(self.app.conv)
        if current not in want:
            want.insert(0, current)  # (chosen, but no longer listed: still what is sent)
        sel = self.select
        if sel is None:
            return
        if want != self.shown:
            doc = self.app.doc
            options = []
            for choice in want:
                opt = doc.createElement("option")
                opt.setAttribute("value", value_of(choice))
                opt.textContent = label_of(choice, len(eps) > 1)
                options.append(opt)
            sel.replaceChildren(*options)
            self.shown = want
        sel.value = value_of(current)
        sel.title = f"Model: {label_of(current, True)}"
        self._show_notes(eps)

    def _show_notes(self, eps: list[Endpoint]) -> None:
        if self.note is None:
            return
        relays = {e.relay for e in eps}
        text = " ".join(n for r, n in self.notes.items() if n and r in relays)
        self.note.textContent = text
        self.note.hidden = not text

    def show(self, conv: Conversation) -> None:
        """Another chat opened: its choice selected."""
        self.render()


def _name(relay: str) -> str:
    return f"The relay at {relay}" if relay else "This site's relay"
