"""Answers: what the page sends and what comes back into the conversation. Starting an
answer (a message, Regenerate, Edit, Continue: each sends exactly the conversation up to that
point), finishing it (stored with its speed and, if kept, its recording), the queue of messages
typed while an answer streams, answers saved while in flight, and replays of recorded bytes.
The ``App`` owns the page; this owns the answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from ..call.call import Timeouts
from ..call.extras_view import attr
from ..call.request import body_format, parse_header_lines, thinking_budget
from ..chats.conversation import Conversation, Message
from ..chats.recording import RECORDING_MAX, Recording
from ..inspector import cut
from ..providers import get_provider
from ..providers.attachments import Attachment
from .answer_locks import AnswerLocks
from .inspector_panel import WHOLE_MAX, Restored
from .message_view import announcement
from .next_request import TEXT_MARKER, made_for, outgoing, template, timeouts_of
from .platform import run_sliced, spawn
from .turn import Turn

if TYPE_CHECKING:
    from .ports import AnswersHost

__all__ = ["MARKER", "NEXT_KEY", "Answers"]

MARKER = TEXT_MARKER  # where the next message's text goes in the template
NEXT_KEY = "pysse.next.v1"  # localStorage: the template (web/app.js)


class Answers(AnswerLocks):
    def __init__(self, app: AnswersHost) -> None:
        self.app = app
        self.turns: list[Turn] = []  # every answer streamed by this page, replays included
        # (chat id, message id) -> the Turn that streamed it in this page
        self.live: dict[tuple[str, str], Turn] = {}
        self.streaming: dict[str, Turn] = {}  # chat id -> its answer still streaming
        self.active: list[Turn] = []  # every streaming answer, replays included
        # (text, its bubble, its files): sent when the answer ends
        self.queue: list[tuple[str, Any, tuple[Attachment, ...]]] = []
        self.recordings: dict[str, dict[str, Recording]] = {}  # chat id -> message id -> rec
        self.watching: set[tuple[str, str]] = set()  # answers streaming in another tab

    @property
    def current(self) -> Turn | None:
        """The open chat's streaming answer."""
        return self.streaming.get(self.app.conv.id)

    def save_in_flight(self, turn: Turn) -> None:
        """What arrived so far, the relay's answer id and URL and the bytes, for a reattach
        after a reload (``reattach``)."""
        conv = self.app.chats.convs.get(turn.chat_id)
        if conv is None or turn.message_id not in conv.messages or turn.state != "streaming":
            return
        conv.finish(
            turn.message_id,
            self._text(turn),
            "streaming",
            relay_id=turn.answer_id,
            url=turn.url,
            reasoning=turn.reasoning_blocks,
            thought_ms=turn.thought_total_ms,
            tool_calls=turn.tool_calls,
            citations=turn.citations,
        )
        self.app.chats.save(conv)
        rec = turn.recording()
        if 0 < rec.size <= RECORDING_MAX:  # (none yet: a reattach asks from byte 0)
            spawn(self.app.chats.store.save_recording(conv.id, turn.message_id, rec))

    async def load_recordings(self, chat_id: str) -> None:
        found = await self.app.chats.store.load_recordings(chat_id)
        self.recordings[chat_id] = {**found, **self.recordings.get(chat_id, {})}

    def recordings_of(self, conv: Conversation) -> dict[str, Recording]:
        recs = dict(self.recordings.get(conv.id, {}))
        for (chat_id, mid), turn in self.live.items():
            if chat_id == conv.id and turn.state != "streaming":
                recs[mid] = turn.recording()
        return recs

    def answer(self, user: Message) -> None:
        answer = self.app.conv.start_answer(user.id)
        el = self.start_turn(self.app.conv, answer, self.app.conv.history(user.id))
        self.app.log.appendChild(el)
        self.app.scroll.follow()

    def start_turn(
        self,
        conv: Conversation,
        answer: Message,
        history: list[tuple[str, str]],
        partial: str | None = None,
    ) -> Any:
        """Send ``history`` (and, to continue, the partial answer) and stream the answer into
        a new element, returned for the caller to place."""
        earlier = answer if partial is not None else None
        el, turn = self._new_turn(conv, answer, history, continues=partial, earlier=earlier)
        url, headers, body, fmt = self.request(conv, history, answer.parent, partial)
        turn.session.body_format = fmt
        el.dataset.url = url
        turn.call.post(url, headers, body, self._timeouts())
        self.app.chats.save(conv)
        self.app.update_stop()
        self.app.start_ticker()
        if conv is self.app.conv:
            self.app.view.refresh(conv)
        self.app.after_render()
        return el

    def request(
        self,
        conv: Conversation,
        history: list[tuple[str, str]],
        parent: str | None,
        partial: str | None = None,
    ) -> tuple[str, dict[str, str], str, str]:
        """What goes out for an answer to ``history`` (its user message ``parent``): the
        URL, headers, JSON body and the format it is written in."""
        s = self.app.form.for_chat(conv)  # (its endpoint and model: the picker's)
        url = self.app.form.resolved_url(settings=s) or ""
        fmt = body_format(s["format"], self.app.site, self.app.form.learned.get(url, ""))
        thinking = thinking_budget(fmt, int(s["thinking"]), continuing=partial is not None)
        messages: list[Any] = list(history)
        asked_of = parent or ""
        files = bool(asked_of) and conv.has_attachments(asked_of)
        if partial is not None:  # (the question's files too: the rest must see them)
            asked: list[Any] = conv.turns(asked_of, reasoning=False) if files else messages
            messages = get_provider(fmt).continue_messages(asked, partial)
        elif thinking and parent:  # earlier answers' reasoning, for Anthropic's rule
            messages = conv.turns(parent)
        elif files:  # the questions' files, each time
            messages = conv.turns(asked_of, reasoning=False)
        headers, body = outgoing(s, fmt, messages, thinking)
        return url, headers, body, fmt

    def next_request(self) -> dict[str, Any] | None:
        """The request a message sent next into the open chat would make, with ``MARKER`` for
        its text (``web/app.js`` keeps it for the next visit: a message sent while that page
        starts goes out at once, before Python is up, and is adopted when it is: the same
        bytes Python would send). None when there is none to make (no relay, an answer
        streaming, reasoning sent back: their body is not a text away from the template)."""
        conv = self.app.conv
        if self.app.setup_problem() or self.current is not None:
            return None
        last = conv.path()[-1] if conv.messages else None
        history = [*(conv.history(last.id) if last else []), ("user", MARKER)]
        url, headers, body, _ = self.request(conv, history, None)
        found = template(url, headers, body, self._timeouts())
        if found is None or (last is not None and last.role != "assistant"):
            return None
        if last is not None and conv.has_attachments(last.id):
            return None  # (files are no text in a template, and megabytes for localStorage)
        kept_for = made_for(self.app.form.for_chat(conv), self.app.site)
        return {**found, "chat": conv.id, "made_for": kept_for}

    def _new_turn(
        self,
        conv: Conversation,
        answer: Message,
        history: list[tuple[str, str]],
        continues: str | None = None,
        earlier: Message | None = None,
        hold: bool = True,
    ) -> tuple[Any, Turn]:
        """A new element and the Turn that streams ``answer`` into it, registered as the
        chat's streaming answer."""
        el = self.app.view.new_assistant()
        el.dataset.id = answer.id
        fmt = self.app.form.for_chat(conv)["format"]
        turn = Turn(self.app, history, el, continues=continues, earlier=earlier, format=fmt)
        turn.chat_id, turn.message_id = conv.id, answer.id
        self.turns.append(turn)
        self.active.append(turn)
        self.live[conv.id, answer.id] = turn
        self.streaming[conv.id] = turn
        if hold:
            spawn(self._hold(turn))
        return el, turn

    def _timeouts(self) -> Timeouts:  # the bridge's timeouts, from Settings
        return timeouts_of(self.app.settings)

    def turn_finished(self, turn: Turn) -> None:
        self._turn_finished(turn)
        if turn.release is not None:  # once its final state is stored (asked for above)
            spawn(self._release_when_saved(turn.chat_id, turn.release))
            turn.release = None

    def _turn_finished(self, turn: Turn) -> None:
        if turn in self.active:
            self.active.remove(turn)
        self.app.inspector.turn_finished(turn)
        if turn.replay:
            return
        if self.streaming.get(turn.chat_id) is turn:
            del self.streaming[turn.chat_id]
        self.app.view.show_speed(turn.el, turn.speed.view(turn.now()))
        self.app.view.show_model(turn.el, turn.cs.model or "")
        self.app.announce(announcement(turn.state, turn.last_note))
        conv = self.app.chats.convs.get(turn.chat_id)
        if conv is None or turn.message_id not in conv.messages:
            return
        u = turn.cs.usage
        conv.finish(
            turn.message_id,
            self._text(turn),
            turn.state,
            detail=turn.last_note,
            format=turn.cs.detected_format,
            model=turn.cs.model,
            usage=(u.input_tokens, u.output_tokens) if u else None,
            speed=turn.speed.summary(turn.now()),
            relay_id=turn.answer_id,
            url=turn.url,
            reasoning=turn.reasoning_blocks,
            thought_ms=turn.thought_total_ms,
            tool_calls=turn.tool_calls,
            citations=turn.citations,
        )
        self.app.chats.save(conv)
        if conv.messages[turn.message_id].text == turn.text:
            self._keep_recording(conv, turn)
        else:  # a reattach that got less than was saved: show what was saved
            self.live.pop((conv.id, turn.message_id), None)
            if conv is self.app.conv:
                turn.el.replaceWith(self.app.view.restored(conv.messages[turn.message_id]))
        if conv is not self.app.conv:
            return
        self.app.update_stop()
        self.app.view.refresh(conv)
        self.app.remember_next()
        if self.queue:
            text, bubble, files = self.queue.pop(0)
            msg = conv.add_user(text, files)
            bubble.dataset.id = msg.id
            bubble.dataset.queued = ""
            self.answer(msg)

    @staticmethod
    def _text(turn: Turn) -> str:
        """The answer's text to keep: a reattached answer whose saved bytes were lost (not
        stored, or over the cap) and that could not be resumed must not lose the text it
        had before the reload."""
        text = turn.text
        return turn.saved_text if len(text) < len(turn.saved_text) else text

    # -- after a reload: reattach to answers the relay is still keeping (issue #12) -------------

    def reattach(self, conv: Conversation, msg: Message, received: bytes) -> Turn:
        """Continue answer ``msg`` from the relay that keeps it: the ``received`` bytes (saved
        before the reload) are parsed again, then the relay sends the rest from that byte on,
        so the text ends identical to an uninterrupted stream. An answer the relay no longer
        keeps ends ``truncated`` ("could not resume: ..."), its text kept."""
        el, turn = self._new_turn(conv, msg, conv.history(msg.parent or ""), hold=False)
        turn.saved_text = msg.text
        turn.session.url, turn.session.answer_id = msg.url, msg.answer_id
        el.dataset.url, el.dataset.answerId = msg.url, msg.answer_id
        conv.resume(msg.id)
        old = self.app.log.querySelector(f"[data-id='{msg.id}']")
        if old is not None:
            old.replaceWith(el)
        if received:
            turn.feed_bytes(received)
        if turn.state == "streaming":  # else the saved bytes held the whole answer
            s = self.app.settings
            headers = {"accept": "text/event-stream", **parse_header_lines(s["headers"])}
            turn.call.reattach(msg.url, headers, msg.answer_id, len(received), self._timeouts())
            self.app.update_stop()
            self.app.start_ticker()
        self.app.view.refresh(conv)
        self.app.after_render()
        return turn

    def _keep_recording(self, conv: Conversation, turn: Turn) -> None:
        store = self.app.chats.store
        rec = turn.recording()
        if self.app.settings["keep_recordings"] == "yes" and rec.size <= RECORDING_MAX:
            self.recordings.setdefault(conv.id, {})[turn.message_id] = rec
            spawn(store.save_recording(conv.id, turn.message_id, rec))
        else:
            spawn(store.delete_recording(conv.id, turn.message_id))

    def stop(self) -> None:
        if self.current is not None:
            self.current.stop()

    def stop_chat(self, chat_id: str) -> None:
        """Stop the answer streaming into chat ``chat_id`` (deleted: nothing keeps it)."""
        turn = self.streaming.get(chat_id)
        if turn is not None:
            turn.stop()

    def can_send(self) -> bool:
        if self.current is not None:
            return False
        problem = self.app.setup_problem()
        if problem:
            self.app.show_notice(problem)
        return problem is None

    def regenerate(self, answer_id: str) -> None:
        """Another version of an answer, replying to the conversation up to its question."""
        if not self.can_send():
            return
        conv = self.app.conv
        answer = conv.regenerate(answer_id)
        self.start_turn(conv, answer, conv.history(answer.parent or ""))
        self.app.view.show(conv)

    def edit_and_send(self, user_id: str, text: str) -> None:
        """A changed question: a new branch from there on (the old one stays a version)."""
        if not self.can_send():
            self.app.actions.cancel_edit()
            return
        conv = self.app.conv
        user = conv.edit(user_id, text)
        answer = conv.start_answer(user.id)
        self.start_turn(conv, answer, conv.history(user.id))
        self.app.view.show(conv)

    def continue_answer(self, answer_id: str) -> None:
        """Ask for the rest of a cut-off answer; the new text joins it in place."""
        if not self.can_send():
            return
        conv = self.app.conv
        history, partial = conv.continue_from(answer_id)
        if history and history[-1] == ("assistant", partial):
            history = history[:-1]  # continue_messages adds the partial answer its own way
        old = self.app.log.querySelector(f"[data-id='{answer_id}']")
        el = self.start_turn(conv, conv.messages[answer_id], history, partial=partial)
        if old is not None:
            old.replaceWith(el)
        self.app.view.refresh(conv)

    def source_of(self, art: Any) -> Turn | Restored | None:
        """What the inspector reads for an answer on screen: its live Turn, or its stored
        recording (None if none was kept)."""
        turn = next((t for t in self.turns if t.el is art), None)
        if turn is not None:
            return turn
        mid = attr(art, "data-id")
        turn = self.live.get((self.app.conv.id, mid))
        if turn is not None:
            return turn
        rec = self.recordings.get(self.app.conv.id, {}).get(mid)
        return Restored(rec) if rec is not None else None

    def replay(self, data: bytes, chunk: int, delay_ms: int, label: str) -> Turn:
        """Play recorded bytes through the same parser and renderer, at a chunk size."""
        el = self.app.view.new_assistant()
        el.dataset.replay = "1"
        self.app.log.appendChild(el)
        el.querySelector(".status").textContent = f"Replaying {label}…"
        turn = Turn(self.app, [], el, replay=True)
        self.turns.append(turn)
        self.active.append(turn)
        self.app.view.set_empty(False)
        spawn(self._play(turn, data, chunk, delay_ms))
        return turn

    async def _play(self, turn: Turn, data: bytes, chunk: int, delay_ms: int) -> None:
        if delay_ms:
            for piece in cut(data, chunk):
                if turn.state != "streaming":
                    return
                turn.feed_bytes(piece)
                await asyncio.sleep(delay_ms / 1000)
        else:
            await run_sliced(self._feed_steps(turn, data, chunk))
        if turn.state == "streaming":
            turn.on_end()

    @staticmethod
    def _feed_steps(turn: Turn, data: bytes, chunk: int) -> Generator[None, None, None]:
        """Feed a replay, pausing every so often (``run_sliced`` lets the page breathe)."""
        # "Whole" means one piece, up to a size one task can parse without a visible freeze.
        size = chunk if chunk > 0 else min(max(len(data), 1), WHOLE_MAX)
        for n, i in enumerate(range(0, len(data), size)):
            if turn.state != "streaming":
                return
            turn.feed_bytes(data[i : i + size])
            if n % 64 == 63 or size >= 1 << 16:
                yield
