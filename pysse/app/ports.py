"""What each part of the chat page needs from the rest of it, as ``Protocol``s.

The page's parts (``actions``, ``answers``, ``chats``, ``inspector_panel``, ``log_view``,
``restore``, ``settings_form``, ``turn``) are built by ``App`` and used to take the whole
``App`` back, which made every one of them import ``app`` and ``app`` import them all: one
circle, even if only under ``TYPE_CHECKING``. Each now names the narrow host it uses (``*Host``
below), and the parts it reaches through that host by the few members it calls (``*Port``).
``App`` satisfies every host structurally (``mypy --strict`` checks it where ``App`` passes
itself), so a part can be read, and driven in a test, with any object that has those members.

The members are read-only properties: a host may hold a subtype (``App.chats`` is a
``ChatList``), and no part reassigns another's attributes.

This module imports no part that imports it back: ``turn`` (which defines its own
``TurnHost``, since this module names ``Turn``), and leaves (``platform``, ``scroll``,
``storage``). ``tests/test_package_shape.py`` checks that no package has an import circle.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from .turn import TurnHost

if TYPE_CHECKING:
    from ..page.chats import ChatSummary
    from ..page.conversation import Conversation, Message
    from ..page.recording import Recording
    from ..page.speed import SpeedView
    from ..view import Document, Element
    from .platform import Platform
    from .scroll import Scroll
    from .storage import ChatStore
    from .turn import Turn

__all__ = [
    "ActionsHost",
    "ActionsPort",
    "AnswersHost",
    "AnswersPort",
    "ChatsHost",
    "ChatsPort",
    "FormPort",
    "InspectorHost",
    "InspectorPort",
    "LogViewHost",
    "RestorerHost",
    "RestorerPort",
    "SearchOwner",
    "SettingsHost",
    "ViewPort",
]


# -- the parts, by what the others call on them ---------------------------------------------


class ChatsPort(Protocol):
    """The chat list (``chats.ChatList``): the loaded chats and their store."""

    @property
    def store(self) -> ChatStore: ...
    @property
    def convs(self) -> dict[str, Conversation]: ...
    def save(self, conv: Conversation) -> None: ...


class ViewPort(Protocol):
    """The messages on screen (``log_view.LogView``)."""

    def show(self, conv: Conversation) -> None: ...
    def refresh(self, conv: Conversation) -> None: ...
    def new_assistant(self) -> Any: ...
    def restored(self, msg: Message) -> Any: ...
    def show_speed(self, art: Any, view: SpeedView | None) -> None: ...
    def set_empty(self, empty: bool) -> None: ...


class AnswersPort(Protocol):
    """The answers streaming and their recordings (``answers.Answers``)."""

    @property
    def live(self) -> dict[tuple[str, str], Turn]: ...
    @property
    def recordings(self) -> dict[str, dict[str, Recording]]: ...
    def recordings_of(self, conv: Conversation) -> dict[str, Recording]: ...
    def regenerate(self, answer_id: str) -> None: ...
    def continue_answer(self, answer_id: str) -> None: ...
    def edit_and_send(self, user_id: str, text: str) -> None: ...
    def replay(self, data: bytes, chunk: int, delay_ms: int, label: str) -> Turn: ...
    def save_in_flight(self, turn: Turn) -> None: ...
    def stop_chat(self, chat_id: str) -> None: ...


class RestorerPort(Protocol):
    """A restored chat's answers, rendered lazily (``restore.Restorer``)."""

    def reset(self, chat_id: str) -> None: ...
    def placeholder(self, art: Any, msg: Message) -> None: ...
    def add(self, art: Any, msg: Message) -> None: ...


class InspectorPort(Protocol):
    """The stream inspector (``inspector_panel.InspectorPanel``)."""

    def turn_finished(self, turn: Turn) -> None: ...


class FormPort(Protocol):
    """The Settings form (``settings_form.SettingsForm``)."""

    @property
    def learned(self) -> dict[str, str]: ...
    def resolved_url(self, ignore_setting: bool = False) -> str | None: ...


class ActionsPort(Protocol):
    """The message actions (``actions.Actions``)."""

    def cancel_edit(self) -> None: ...


# -- what each part needs from the page ----------------------------------------------------


class _Page(Protocol):
    """Members most parts use."""

    @property
    def doc(self) -> Document: ...
    @property
    def platform(self) -> Platform: ...
    @property
    def log(self) -> Element: ...
    @property
    def settings(self) -> dict[str, Any]: ...
    @property
    def site(self) -> dict[str, Any]: ...
    @property
    def conv(self) -> Conversation: ...


class ActionsHost(_Page, Protocol):
    @property
    def chats(self) -> ChatsPort: ...
    @property
    def view(self) -> ViewPort: ...
    @property
    def answers(self) -> AnswersPort: ...
    def inspect(self, art: Any, opener: Any) -> None: ...


class AnswersHost(TurnHost, _Page, Protocol):
    """Answers make ``Turn``s, handing them their host: so this is a ``TurnHost`` too."""

    @property
    def chats(self) -> ChatsPort: ...
    @property
    def view(self) -> ViewPort: ...
    @property
    def scroll(self) -> Scroll: ...
    @property
    def form(self) -> FormPort: ...
    @property
    def inspector(self) -> InspectorPort: ...
    @property
    def actions(self) -> ActionsPort: ...
    def after_render(self) -> None: ...
    def announce(self, text: str) -> None: ...
    def setup_problem(self) -> str | None: ...
    def show_notice(self, text: str) -> None: ...
    def start_ticker(self) -> None: ...
    def update_stop(self) -> None: ...


class ChatsHost(_Page, Protocol):
    """The chat list and its search (``search_view``: opening a hit scrolls to it)."""

    @property
    def answers(self) -> AnswersPort: ...
    @property
    def scroll(self) -> Scroll: ...
    def show_notice(self, text: str) -> None: ...
    def storage_problem(self, text: str) -> None: ...
    def switch_to(self, chat_id: str | None) -> Coroutine[Any, Any, None]: ...


class InspectorHost(_Page, Protocol):
    @property
    def answers(self) -> AnswersPort: ...
    def answer_number(self, source: Any) -> int: ...


class LogViewHost(_Page, Protocol):
    @property
    def answers(self) -> AnswersPort: ...
    def md_for(self, hosts: frozenset[str]) -> Any: ...
    @property
    def restorer(self) -> RestorerPort: ...
    @property
    def scroll(self) -> Scroll: ...
    def busy(self, chat_id: str) -> bool: ...


class RestorerHost(_Page, Protocol):
    @property
    def chats(self) -> ChatsPort: ...
    @property
    def scroll(self) -> Scroll: ...
    def md_for(self, hosts: frozenset[str]) -> Any: ...


class SettingsHost(_Page, Protocol):
    @property
    def prompt(self) -> Any: ...
    def show_notice(self, text: str) -> None: ...


class SearchOwner(Protocol):
    """What the search over the chats (``search_view.SearchView``) needs from the chat list
    it sits in (``chats.ChatList``): the chats, their store, the list it hides, the page."""

    @property
    def app(self) -> ChatsHost: ...
    @property
    def rows(self) -> dict[str, ChatSummary]: ...
    @property
    def convs(self) -> dict[str, Conversation]: ...
    @property
    def store(self) -> ChatStore: ...
    @property
    def list_el(self) -> Any: ...
    def close_drawer(self) -> None: ...
