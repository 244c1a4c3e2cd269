"""Which tab streams an answer: a Web Lock per answer (``app.tabs``), held by the tab that
streams it, so another tab that opens the chat shows it streaming there, and no two tabs ever
resume the same answer after a reload. ``Answers`` has these methods."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..chats.conversation import Conversation, Message
from ..chats.recording import Recording
from .platform import spawn

if TYPE_CHECKING:
    from .ports import AnswersHost
    from .turn import Turn

__all__ = ["AnswerLocks", "answer_lock"]


def answer_lock(chat_id: str, message_id: str) -> str:
    """The Web Lock a tab holds while an answer streams in it: no other tab resumes it."""
    return f"pysse-answer:{chat_id}/{message_id}"


class AnswerLocks:
    """The answers' locks (a part of ``answers.Answers``)."""

    app: AnswersHost
    live: dict[tuple[str, str], Turn]
    watching: set[tuple[str, str]]  # answers streaming in another tab

    def reattach(self, conv: Conversation, msg: Message, received: bytes) -> Turn:
        raise NotImplementedError

    async def _release_when_saved(self, chat_id: str, release: Callable[[], object]) -> None:
        """Let another tab take the answer over only once its final state is stored: the
        chat's turn comes after the save asked for before this (``ChatStore.chat_turn``)."""
        async with self.app.chats.store.chat_turn(chat_id):
            release()

    async def _hold(self, turn: Turn) -> None:
        """Hold the answer's lock while it streams (another tab that opens the chat sees it
        streams here, and never resumes it too)."""
        release = await self.app.platform.tabs.acquire(
            answer_lock(turn.chat_id, turn.message_id), True
        )
        if release is not None and turn.state != "streaming":
            release()
        else:
            turn.release = release

    async def reattach_all(self, conv: Conversation) -> None:
        """Reattach every answer of the open chat that was streaming when the page closed
        (and that no other tab streams: ``watch_elsewhere``)."""
        await self.watch_elsewhere(conv, reattach=True)

    async def watch_elsewhere(self, conv: Conversation, reattach: bool) -> None:
        """Answers of ``conv`` stored as streaming that no answer of this tab streams. If
        another tab holds one's lock, it streams there: shown so, and watched until it ends.
        Else nobody streams it: with ``reattach``, this tab reattaches it (holding its lock)
        when the relay keeps it; otherwise it stays as stored (cut off)."""
        tabs = self.app.platform.tabs
        url = self.app.form.resolved_url(settings=self.app.form.for_chat(conv)) or ""
        can = {m.id for m in conv.reattachable(url)} if reattach else set()
        recs: dict[str, Recording] | None = None
        changed = False
        for msg in conv.path():
            key = (conv.id, msg.id)
            if not (msg.was_streaming or msg.elsewhere) or key in self.live or key in self.watching:
                continue
            self.watching.add(key)  # (while asking: another look never takes it for a tab's)
            release = await tabs.acquire(answer_lock(*key), False)
            if release is None:
                changed |= not msg.elsewhere
                msg.elsewhere = True
                spawn(self._watch(conv, msg.id))
                continue
            self.watching.discard(key)
            changed |= msg.elsewhere
            msg.elsewhere = False
            if msg.id in can and msg.in_flight:
                if recs is None:
                    recs = await self._saved_recordings(conv.id)
                rec = recs.get(msg.id)
                saved = rec.raw() if rec is not None and rec.answer_id == msg.answer_id else b""
                self.reattach(conv, msg, saved).release = release
            else:
                release()
        if changed and conv is self.app.conv:
            self.app.view.show(conv)

    async def _saved_recordings(self, chat_id: str) -> dict[str, Recording]:
        try:  # (none: the relay replays the answer from its first byte)
            return await self.app.chats.store.load_recordings(chat_id)
        except Exception:
            return {}

    async def _watch(self, conv: Conversation, message_id: str) -> None:
        """Wait until the tab streaming this answer lets go of it (it ended, or that tab
        closed), then show what it stored; one that is still cut off is reattached here if
        the chat is open."""
        release = await self.app.platform.tabs.acquire(answer_lock(conv.id, message_id), True)
        if release is not None:
            release()
        self.watching.discard((conv.id, message_id))
        msg = conv.messages.get(message_id)
        if msg is not None:
            msg.elsewhere = False
        await self.app.chats.reload(conv.id)
        if conv is self.app.conv and not conv.deleted:
            self.app.view.show(conv)
            await self.watch_elsewhere(conv, reattach=True)
