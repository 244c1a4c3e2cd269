"""What one tab changed in a conversation since it last wrote it to the chat store.

Two tabs of the page share one store. A write is a merge (``chats.merge``): the tab reads what
is stored, keeps every change *it* made since its last write, takes everything else from the
stored copy (another tab's messages, its finished answers, its choice of version), and writes
the union. So a stale tab adds its messages and removes nothing it did not remove itself.

Each change is numbered: a write forgets only the changes it wrote (``forget(upto)``), so a
change made while the write was under way (an answer's text growing) is kept for the next.
"""

from __future__ import annotations

__all__ = ["Changes"]


class Changes:
    """Message ids, parents whose selected child changed, the title and the model choice,
    each with the number of its latest change."""

    def __init__(self) -> None:
        self.n = 0
        self.messages: dict[str, int] = {}
        self.selected: dict[str | None, int] = {}
        self.title = 0
        self.choice = 0

    def _next(self) -> int:
        self.n += 1
        return self.n

    def message(self, message_id: str) -> None:
        self.messages[message_id] = self._next()

    def selection(self, parent: str | None) -> None:
        self.selected[parent] = self._next()

    def renamed(self) -> None:
        self.title = self._next()

    def chose(self) -> None:
        self.choice = self._next()

    def __bool__(self) -> bool:
        return bool(self.messages or self.selected or self.title or self.choice)

    def forget(self, upto: int) -> None:
        """The changes numbered ``upto`` or lower are in the store now."""
        self.messages = {k: n for k, n in self.messages.items() if n > upto}
        self.selected = {k: n for k, n in self.selected.items() if n > upto}
        if self.title <= upto:
            self.title = 0
        if self.choice <= upto:
            self.choice = 0
