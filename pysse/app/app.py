"""The chat page's controller: the open conversation, sending (and regenerate, edit, continue),
Stop, and a timer for live speed and saving answers in flight.

Pure Python against the page's model DOM (``pysse.view``) and its ports (``platform``): it
runs in a Web Worker in the browser (``pysse.browser.host``), on the main thread in the
fallback mode, and in CPython in tests. What needs the real DOM, the view does
(``web/view.js``): the composer, keyboard shortcuts, scroll following, Copy.

Each answer is a ``Turn`` around a ``ChatCall``, the same one ``stream_chat`` gives embedders;
frames are shared (the platform's ``FrameLoop``). Everything else is the pure-Python layers
below, driven from here and from its helpers: ``settings_form`` (Settings, theme), ``chats``
(the chat list, storage), ``log_view`` (the messages on screen), ``actions`` (message
actions), ``inspector_panel``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from typing import Any

from .. import faults
from ..call.diagnose import setup_notice
from ..call.extras_view import attr
from ..call.request import check_relay_url
from ..chats.conversation import Conversation, Message
from ..render import lazy
from ..view import Document, Element, Event
from .actions import Actions
from .answers import NEXT_KEY, Answers
from .attach import PendingFiles
from .chats import ChatList
from .inspector_panel import InspectorPanel
from .log_view import LogView
from .picker_view import PickerView
from .platform import PAUSES, Platform, spawn
from .restore import Restorer
from .scroll import Scroll
from .settings_form import SettingsForm
from .site import read_site
from .turn import Turn

__all__ = ["App"]

RESCUED = "Ended: the page's Python stopped while this answer streamed (the text is kept)."
NO_TABS = (
    "This browser cannot tell this page's other tabs what changed here. If the page is open in "
    "another tab too, reload that tab before you write in it."
)
TICK_MS = 500  # the speed line's repaint (a stall shows although nothing arrives)
SAVE_EVERY = 4  # ticks between saves of an answer in flight (2 s)
# Lexers fetched in idle time after boot, on a site with lazy bundles (the commonest in
# answers); every other one when an answer first needs it (pysse.render.lazy).
PREFETCH = (("lexer", "python"), ("lexer", "javascript"), ("lexer", "bash"))


def required(doc: Document, selector: str) -> Element:
    """An element the page's HTML must have (a missing one is a build error, said plainly)."""
    el = doc.querySelector(selector)
    if el is None:
        raise LookupError(f"the page has no {selector} element: rebuild the site")
    return el


class App:
    """The page: the open chat, sending, Stop, frames, scrolling."""

    def __init__(self, site: dict[str, Any], platform: Platform, doc: Document) -> None:
        self.site = read_site(site)  # (site.json: checked where it enters)
        self.platform = platform
        self.doc = doc
        self.switches = 0  # chats asked to open so far: the latest one asked for is shown
        self.log = required(doc, "[data-role=log]")
        self.prompt = required(doc, "[data-role=prompt]")
        self.stop_btn = required(doc, "[data-role=stop]")
        self.pending: list[str] = []  # sent before the chats were loaded
        self.ready = False
        self.scroll = Scroll(doc)
        self._mds: dict[frozenset[str], Any] = {}
        self.form = SettingsForm(self)
        self.inspector = InspectorPanel(self)
        self.restorer = Restorer(self)
        self.view = LogView(self)
        self.chats = ChatList(self)
        self.actions = Actions(self)
        self.answers = Answers(self)
        self.files = PendingFiles(self)  # attached to the next message
        self.picker = PickerView(self)  # the composer's model picker
        self.conv: Conversation = self.chats.new_conversation()
        self._ticker: asyncio.TimerHandle | None = None
        self._ticks = 0
        self._next_kept = "-"  # the next request's template as last kept (never yet)
        self._bind()
        self.form.bind()
        self.picker.bind()
        self.chats.bind()
        self.actions.bind()

    @property
    def settings(self) -> dict[str, Any]:
        return self.form.settings

    @property
    def current(self) -> Turn | None:
        """The open chat's streaming answer."""
        return self.answers.current

    def busy(self, chat_id: str) -> bool:
        return chat_id in self.answers.streaming

    def turn_finished(self, turn: Turn) -> None:
        self.answers.turn_finished(turn)
        conv = self.chats.convs.get(turn.chat_id)
        if conv is None or turn.replay:
            return
        msg = conv.messages.get(turn.message_id)
        sm = turn.call.md  # the answer's StreamingMarkdown
        hosts = next((h for h, md in self._mds.items() if sm is not None and md is sm.md), None)
        if sm is not None and msg is not None and hosts is not None and msg.text == turn.text:
            self.restorer.save(conv.id, msg, sm.html, hosts)  # a reload need not parse it

    async def boot(
        self, early: list[str], rescued: list[tuple[str, str]] | None = None, notice: str = ""
    ) -> None:
        """Load the chats (the open one is shown again after a reload), then take messages.
        ``rescued``: answers a dead worker was streaming in the open chat, with the text they
        had on screen (``web/app.js``): they end there (never resumed: what killed the worker
        would kill this one too). ``notice``: a line to show once the chat is (why Python
        restarted, or runs on the main thread)."""
        try:
            conv = await self.chats.load()
        except Exception as exc:  # a damaged store must never keep the page from starting
            print(f"pysse: the saved chats could not be loaded: {exc!r}", file=sys.stderr)
            conv = self.chats.new_conversation()
        if rescued and self.rescue(conv, rescued):
            self.chats.save(conv)
        self.show_chat(conv)
        try:  # answers still streaming when the page closed go on where they were
            await self.answers.reattach_all(conv)
        except Exception as exc:
            print(f"pysse: could not reattach to an answer: {exc!r}", file=sys.stderr)
        self.ready = True
        if notice:
            self.show_notice(notice)
        if self.chats.store.problem:
            self.show_notice(self.chats.store.problem)
        if self.form.notice:
            self.show_notice(self.form.notice)
        if self.platform.tabs.features != {"broadcast", "locks"}:
            self.show_notice(NO_TABS)
        for text in [*self.pending, *early]:
            self.send(text)
        self.pending.clear()
        self.remember_next()  # (shown before it was ready: a fresh chat's template was none)
        self.doc.body.dataset.ready = "1"
        if "inspect=1" in self.platform.location.search:
            self.inspector.open()
        else:
            self.prompt.focus()
        if not self.answers.active:
            asyncio.get_event_loop().call_later(0.03, self.warm_up)

    @staticmethod
    def rescue(conv: Conversation, rescued: list[tuple[str, str]]) -> bool:
        """End the answers a dead worker was streaming, with the longer of their saved text
        and the text that was on screen. True if any changed."""
        changed = False
        for message_id, text in rescued:
            msg = conv.messages.get(message_id)
            if msg is None or msg.role != "assistant":  # (stored as streaming: loaded as cut)
                continue
            kept = text if len(text) >= len(msg.text) else msg.text
            conv.finish(message_id, kept, "error", detail=RESCUED)
            changed = True
        return changed

    # -- small pieces the helpers share ----------------------------------------------------------

    def storage_problem(self, text: str) -> None:
        """Storage failed (reported once): said in the conversation; shown after boot when
        it happens while the chats load."""
        if self.ready:
            self.show_notice(text)

    def show_notice(self, text: str) -> None:
        """A line in the conversation from the page itself (setup help, a changed setting, a
        storage problem); never sent to the model."""
        art = self.doc.createElement("article")
        art.className = "msg notice"
        art.dataset.role = "notice"
        art.setAttribute("role", "status")
        art.textContent = text
        self.log.appendChild(art)
        self.view.set_empty(False)
        self.scroll.follow()

    def announce(self, text: str) -> None:
        """One polite message for screen readers (an answer ended)."""
        region = required(self.doc, "[data-role=announce]")
        region.textContent = ""
        region.textContent = text

    def learn_format(self, url: str, fmt: str) -> bool:
        return self.form.learn_format(url, fmt)

    def setup_problem(self) -> str | None:
        """Why nothing can be sent right now (no relay, an invalid relay URL), or None."""
        s = self.form.for_chat(self.conv)
        problem = check_relay_url(str(s["relay"]))
        if problem:
            where = "Relay URL" if s["relay"] == self.settings["relay"] else "More endpoints"
            return f"Settings → {where}: {problem}. Fix it, then send again."
        if self.form.resolved_url(settings=s) is None:
            return setup_notice(self.platform.location.origin)
        return None

    def md_for(self, hosts: frozenset[str]) -> Any:
        if hosts not in self._mds:
            # Imported here, not at the top: markdown-it's import is ~150 ms in Pyodide, and
            # the page is ready to send without it (the idle warm-up or the first answer
            # pays it once).
            from ..render.markdown import MarkdownPolicy, make_markdown

            self._mds[hosts] = make_markdown(MarkdownPolicy(image_hosts=hosts))
        return self._mds[hosts]

    # -- events --------------------------------------------------------------------------------

    def _bind(self) -> None:
        """The page's own controls. Keys are the view's (``web/view.js``): Enter in the
        composer sends (a ``send`` event with the text), Escape presses the close button of
        what is open, or Stop; so Python hears clicks and sends, never raw keys."""
        self.prompt.addEventListener("send", self._on_send)
        self.stop_btn.addEventListener("click", lambda e: self.stop())
        required(self.doc, "[data-role=new-chat]").addEventListener(
            "click", lambda e: self.new_chat()
        )
        required(self.doc, "[data-role=welcome]").addEventListener("click", self._on_example)
        self.log.addEventListener("toggle", self.view.on_toggle, capture=True)

    def _on_send(self, e: Event) -> None:
        self.send_from_prompt(str(e.detail or ""))

    def _on_example(self, e: Event) -> None:
        btn = e.target.closest("[data-example]") if e.target is not None else None
        if btn is not None:
            self.send_from_prompt(attr(btn, "data-example"))

    # -- frames and the timer --------------------------------------------------------------------

    def after_render(self) -> None:
        """An answer rendered: the view keeps the bottom in view itself (it sees the growth)."""

    def start_ticker(self) -> None:
        if self._ticker is None:
            self._ticker = asyncio.get_event_loop().call_later(TICK_MS / 1000, self._on_tick)

    def _on_tick(self) -> None:
        self._ticker = None
        self._ticks += 1
        for turn in list(self.answers.streaming.values()):
            self.view.tick(turn)
            if self._ticks % SAVE_EVERY == 0:
                self.answers.save_in_flight(turn)
        if self.answers.streaming:
            self.start_ticker()

    # -- the open chat -------------------------------------------------------------------------

    def show_chat(self, conv: Conversation) -> None:
        self.conv = conv
        self.chats.convs[conv.id] = conv
        for _, bubble, _ in self.answers.queue:
            bubble.remove()
        self.answers.queue.clear()
        self.actions.editing = None
        # The log is shown before it is filled: hidden (the welcome screen), it has no height,
        # and the end of the chat could not be scrolled to.
        self.view.set_empty(not conv.messages)
        self.view.show(conv)
        self.chats.set_current(conv)
        self.picker.show(conv)
        self.update_stop()
        self.remember_next()
        if conv.id not in self.answers.recordings:
            spawn(self.answers.load_recordings(conv.id))
        if conv.dropped:  # a damaged stored chat: what is readable, and what was not
            more = f" (and {len(conv.dropped) - 1} more)" if len(conv.dropped) > 1 else ""
            self.show_notice(f"Part of this chat could not be read: {conv.dropped[0]}{more}.")
            conv.dropped = []
        if self.ready:  # (at boot, reattach_all looks)
            spawn(self.answers.watch_elsewhere(conv, reattach=False))

    async def switch_to(self, chat_id: str | None) -> None:
        """Open another chat (None: a new, empty one). An answer streaming in the chat left
        goes on in the background and is saved when it ends."""
        if chat_id is not None and chat_id == self.conv.id:
            return
        self.switches += 1
        mine = self.switches
        conv = await self.chats.get(chat_id) if chat_id else None
        if mine != self.switches:
            return  # another chat was asked for while this one was read: that one is shown
        self.inspector.close()
        self.show_chat(conv or self.chats.new_conversation())
        self.prompt.focus()

    def new_chat(self) -> None:
        """A new, empty chat, at once (the one left keeps any answer streaming in it)."""
        self.switches += 1  # a chat still being read to open is not shown over it
        self.inspector.close()
        self.show_chat(self.chats.new_conversation())
        self.prompt.focus()

    def remember_next(self) -> None:
        """Keep for the next visit the request a message sent next would make (see
        ``Answers.next_request``), or none; only written when it changed."""
        found = self.answers.next_request() if self.ready or self.conv.messages else None
        text = json.dumps(found) if found else ""
        if text != self._next_kept:
            self._next_kept = text
            self.doc.ops.add(["store", NEXT_KEY, text])

    def update_stop(self) -> None:
        streaming = self.current is not None
        self.stop_btn.disabled = not streaming
        self.doc.body.dataset.streaming = "1" if streaming else ""

    # -- sending -------------------------------------------------------------------------------

    def send_from_prompt(self, text: str) -> None:
        """A message from the composer (the view has emptied it) or an example."""
        text = text.strip()
        if text or self.files.pending or self.files.reading:  # (then: once they are read)
            self.files.after_reading(lambda: self._send_if_any(text))

    def _send_if_any(self, text: str) -> None:
        if text or self.files.pending:  # (files alone, unless every one was refused)
            self.send(text)

    def send(self, text: str) -> None:
        if not self.ready:
            self.pending.append(text)
            return
        problem = self.setup_problem()
        if problem:  # nothing can go out: say why, and put the text back in the composer
            if text not in str(self.prompt.value):
                self.prompt.value = (text + "\n" + str(self.prompt.value)).strip()
            self.show_notice(problem)
            return
        self.view.set_empty(False)
        files = self.files.take()
        if self.current is not None:  # goes out when the current answer ends
            queued = Message("", "user", text, None, attachments=files)
            bubble = self.view.user(queued, queued=True)
            self.log.appendChild(bubble)
            self.answers.queue.append((text, bubble, files))
            self.scroll.follow()
            return
        msg = self.conv.add_user(text, files)
        self.log.appendChild(self.view.user(msg))
        self.answers.answer(msg)

    # -- the inspector -------------------------------------------------------------------------

    def stop(self) -> None:
        if self.current is not None:
            self.current.stop()

    def inspect(self, art: Any, opener: Any) -> None:
        source = self.answers.source_of(art)
        self.inspector.open(source, opener=opener, missing=source is None)

    def answer_number(self, source: Any) -> int:
        arts = self.log.querySelectorAll("[data-role=assistant]")
        el = getattr(source, "el", None)
        for i, art in enumerate(arts):
            if art is el or (el is None and self.answers.source_of(art) is source):
                return i + 1
        return 0

    # -- replays and warm-up -------------------------------------------------------------------

    def warm_up(self) -> None:
        """Pay one-time costs (markdown-it's first parse, pygments' lexer imports: ~50 ms in
        Pyodide; latex2mathml's import and symbol table: ~150 ms) while idle after boot, not
        in the middle of the first answer's frames; one step per task, each well under
        100 ms, so the thread keeps answering between them (on the main thread: input; in a
        worker: the frame and event messages)."""
        from ..render.streaming import StreamingMarkdown

        def markdown() -> None:
            md = StreamingMarkdown(md=self.md_for(frozenset()))
            md.feed("# w\n\n*a* `b`\n\n| a |\n|---|\n| 1 |\n\n```python\nx = 1\n```\n\nz\n")
            md.finish()  # highlights the fence: pygments' formatter and a lexer compiled

        def math() -> None:
            from ..render.math import tex_to_html

            tex_to_html("x^2", False)

        if lazy.REGISTRY.lazy:  # a site with lazy bundles: the commonest lexers, fetched idle
            fetch = [lambda r=r: lazy.REGISTRY.request(r) for r in PREFETCH]
            self._warm_steps([markdown, *fetch])
        else:
            self._warm_steps([markdown, math])

    def _warm_steps(self, steps: list[Callable[[], object]]) -> None:
        if not steps or self.answers.active:
            self.doc.body.dataset.warm = "1"
            return
        steps[0]()
        asyncio.get_event_loop().call_soon(self._warm_steps, steps[1:])

    # -- for tests and tools -------------------------------------------------------------------

    def raw_hex(self, index: int) -> str:
        """The exact bytes the ``index``-th answer on screen received, as hex ("" when its
        recording is not loaded or was not kept)."""
        arts = self.log.querySelectorAll("[data-role=assistant]")
        source = self.answers.source_of(arts[index]) if -len(arts) <= index < len(arts) else None
        return source.raw().hex() if source is not None else ""

    def stats(self) -> str:
        return json.dumps(
            {
                "frames": self.platform.loop.frames,
                "faults": faults.count(),  # survived: one action or answer each (issue #40)
                "inspector_renders": self.inspector.renders,
                "sliced_pauses": PAUSES[0],
                "turns": [t.timing() for t in self.answers.turns],
                "chats": len(self.chats.rows),
                "restored": {
                    "from_cache": self.restorer.from_cache,
                    "from_markdown": self.restorer.from_markdown,
                    "rejected": self.restorer.rejected,
                    "waiting": len(self.restorer.order),
                },
                "storage": self.chats.store.ok,
                "search_reads": self.chats.search.reads,
            }
        )
