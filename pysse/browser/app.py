"""The chat page's controller: settings, the conversation, sending, Stop / Retry / New chat, and
one animation-frame loop shared by every streaming answer.

The network loop lives in JavaScript (``web/bridge.js``): it calls ``fetch()``, reads the body
with ``getReader()`` and hands each chunk to a ``Turn`` *synchronously* (a JS loop calling
Python costs ~6 us a chunk; awaiting ``reader.read()`` from Python costs ~20x that).
Everything else, parsing, state, markdown, frame pacing and scroll following, is the
pure-Python layers below, driven from here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import js
from pyodide.ffi import create_proxy

from ..inspector import cut
from ..page.request import build_body, parse_header_lines, relay_url
from ..page.settings import DEFAULTS, SETTINGS_KEY, coerce, load_settings
from .dom import Listeners, js_obj, q, spawn
from .inspector_panel import InspectorPanel
from .scroll import ScrollBinding
from .turn import Turn

__all__ = ["App"]


class App:
    """The page: settings, conversation, sending, Stop/Retry/New chat, frames, scrolling."""

    def __init__(self, site: dict[str, Any]) -> None:
        self.site = site
        self.doc = js.document
        self.log = q("[data-role=log]")
        self.prompt = q("[data-role=prompt]")
        self.send_btn = q("[data-role=send]")
        self.stop_btn = q("[data-role=stop]")
        self.turns: list[Turn] = []
        self.history: list[tuple[str, str]] = []
        self.current: Turn | None = None  # the conversation's streaming answer
        self.active: list[Turn] = []  # every streaming answer, replays included
        self.queue: list[str] = []
        self.listeners = Listeners()
        self.scroll = ScrollBinding(self.log, q("[data-role=jump]"))
        self.inspector = InspectorPanel(self)
        self._mds: dict[frozenset[str], Any] = {}
        self.settings = load_settings(self._stored_settings(), site)
        self._frame_proxy = create_proxy(self._on_frame)
        self._frame_id: Any = None
        self.frames = 0
        self._bind()
        self._fill_settings_form()

    # -- settings ------------------------------------------------------------------------------

    @staticmethod
    def _stored_settings() -> str | None:
        try:
            return str(js.localStorage.getItem(SETTINGS_KEY) or "") or None
        except Exception:  # storage disabled: start from the defaults
            return None

    def _fill_settings_form(self) -> None:
        for key, value in self.settings.items():
            el = q(f"[data-setting={key}]")
            if el is not None:
                el.value = str(value)
        self._update_relay_placeholder()

    def _update_relay_placeholder(self) -> None:
        el = q("[data-role=relay-url]")
        if el is not None:
            el.placeholder = self._resolved_url(ignore_setting=True) + "  (default)"

    def _read_settings_form(self, *_: Any) -> None:
        for key in DEFAULTS:
            el = q(f"[data-setting={key}]")
            if el is not None:
                self.settings[key] = coerce(key, el.value)
        # Storage may be disabled; the settings still apply to this page.
        with contextlib.suppress(Exception):
            js.localStorage.setItem(SETTINGS_KEY, json.dumps(self.settings))
        self._update_relay_placeholder()

    def _resolved_url(self, ignore_setting: bool = False) -> str:
        setting = "" if ignore_setting else str(self.settings["relay"])
        return relay_url(setting, self.settings["format"], self.site, js.location.origin)

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
        on = self.listeners.on
        on(self.send_btn, "click", lambda e: self.send_from_prompt())
        on(self.stop_btn, "click", lambda e: self.stop())
        on(q("[data-role=new-chat]"), "click", lambda e: self.new_chat())
        on(self.prompt, "keydown", self._on_key)
        self.scroll.bind(self.listeners)
        # Growth that is not a render (an allowed image loading, a resize) keeps the bottom
        # in view while following. "load" does not bubble: listen in the capture phase.
        on(self.log, "load", self.scroll.after_render, capture=True)
        on(js.window, "resize", self.scroll.after_render)
        on(self.log, "click", self._on_log_click)
        on(self.doc, "visibilitychange", self._on_visibility)
        on(q("[data-role=settings]"), "change", self._read_settings_form)

    def _on_key(self, e: Any) -> None:
        if e.key == "Enter" and not e.shiftKey and not e.isComposing:
            e.preventDefault()
            self.send_from_prompt()

    def _on_visibility(self, e: Any) -> None:
        if self.doc.visibilityState == "visible":
            for turn in list(self.active):
                turn.sched.on_visible()

    def _on_log_click(self, e: Any) -> None:
        target = e.target
        btn = target.closest("button") if hasattr(target, "closest") else None
        if btn is None:
            return
        if btn.classList.contains("copy"):
            pre = btn.parentElement.querySelector("pre")
            if pre is not None:
                js.navigator.clipboard.writeText(pre.textContent)
                btn.textContent = "Copied"
            return
        role = btn.getAttribute("data-role")
        if role not in ("inspect", "retry"):
            return
        article = btn.closest("[data-role=assistant]")
        turn = next((t for t in self.turns if t.el == article), None)
        if turn is None:
            return
        if role == "inspect":
            self.inspector.open(turn)
        else:
            self.retry(turn)

    # -- frames --------------------------------------------------------------------------------

    def is_hidden(self) -> bool:
        return bool(self.doc.visibilityState == "hidden")

    def request_frame(self) -> None:
        if self._frame_id is None:  # one frame request serves every streaming answer
            self._frame_id = js.requestAnimationFrame(self._frame_proxy)

    def _on_frame(self, ts: float) -> None:
        self.frames += 1
        self._frame_id = None
        for turn in list(self.active):
            turn.sched.on_frame()

    def after_render(self) -> None:
        self.scroll.after_render()

    # -- conversation --------------------------------------------------------------------------

    def send_from_prompt(self) -> None:
        text = str(self.prompt.value).strip()
        if not text:
            return
        self.prompt.value = ""
        self.send(text)

    def send(self, text: str) -> None:
        if self.current is not None:
            self.queue.append(text)  # goes out when the current answer ends
            self._add_user(text, queued=True)
            return
        self._add_user(text)
        self.history.append(("user", text))
        self._start(list(self.history))

    def _add_user(self, text: str, queued: bool = False) -> None:
        art = self.doc.createElement("article")
        art.className = "msg user"
        art.dataset.role = "user"
        body = self.doc.createElement("div")
        body.className = "content"
        body.textContent = text  # never HTML
        art.appendChild(body)
        if queued:
            art.dataset.queued = "1"
        self.log.appendChild(art)
        self.scroll.follow()

    def _add_assistant(self) -> Any:
        art = q("#assistant-template").content.firstElementChild.cloneNode(True)
        self.log.appendChild(art)
        return art

    def _start(self, history: list[tuple[str, str]]) -> None:
        el = self._add_assistant()
        turn = Turn(self, history, el)
        self.turns.append(turn)
        self.active.append(turn)
        self.current = turn
        self.stop_btn.disabled = False
        self.doc.body.dataset.streaming = "1"
        s = self.settings
        body = build_body(s["format"], history, model=s["model"], system=s["system"])
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            **parse_header_lines(s["headers"]),
        }
        url = self._resolved_url()
        el.dataset.url = url
        turn.handle = js.pysseBridge.start(
            url,
            js_obj(headers),
            json.dumps(body),
            create_proxy(turn),
            int(s["first_byte_s"]) * 1000,
            int(s["idle_s"]) * 1000,
        )
        self.after_render()

    def turn_finished(self, turn: Turn) -> None:
        if turn in self.active:
            self.active.remove(turn)
        self.inspector.turn_finished(turn)
        if turn is not self.current:
            return
        if turn.state == "completed" or turn.cs.text:
            self.history.append(("assistant", turn.cs.text))
        self.current = None
        self.stop_btn.disabled = True
        self.doc.body.dataset.streaming = ""
        if self.queue:
            text = self.queue.pop(0)
            for el in self.log.querySelectorAll("[data-queued='1']"):
                el.dataset.queued = ""
                break
            self.history.append(("user", text))
            self._start(list(self.history))

    def stop(self) -> None:
        if self.current is not None:
            self.current.stop()

    def retry(self, turn: Turn) -> None:
        """Re-send the conversation the failed answer replied to (never automatically)."""
        if self.current is not None:
            return
        self.history = list(turn.history)
        self._start(list(turn.history))

    def new_chat(self) -> None:
        # Clear the queue first: stopping the current answer would otherwise start the next
        # queued message, which would stream out of sight into the new chat's history.
        self.queue.clear()
        self.stop()
        self.inspector.close()
        self.history.clear()
        self.turns.clear()
        self.log.replaceChildren()
        self.scroll.reset()
        self.prompt.focus()

    def replay(self, data: bytes, chunk: int, delay_ms: int, label: str) -> Turn:
        """Play recorded bytes through the same parser and renderer, at a chunk size."""
        el = self._add_assistant()
        el.dataset.replay = "1"
        q(".status", el).textContent = f"Replaying {label}…"
        turn = Turn(self, [], el, replay=True)
        self.turns.append(turn)
        self.active.append(turn)
        spawn(self._play(turn, data, chunk, delay_ms))
        return turn

    async def _play(self, turn: Turn, data: bytes, chunk: int, delay_ms: int) -> None:
        for n, piece in enumerate(cut(data, chunk)):
            if turn.state != "streaming":
                return
            turn.feed_bytes(piece)
            if delay_ms:
                await asyncio.sleep(delay_ms / 1000)
            elif n % 256 == 255:
                await asyncio.sleep(0)  # let the page breathe during a 1-byte replay
        if turn.state == "streaming":
            turn.on_end()

    def warm_up(self) -> None:
        """Pay one-time costs (markdown-it's first parse, pygments' lexer imports: ~50 ms in
        Pyodide) while idle after boot, not in the middle of the first answer's frames."""
        if self.current is None:
            from ..render.streaming import StreamingMarkdown

            md = StreamingMarkdown(md=self.md_for(frozenset()))
            md.feed("# w\n\n*a* `b`\n\n| a |\n|---|\n| 1 |\n\n```python\nx = 1\n```\n\nz\n")
            md.finish()  # highlights the fence: pygments' formatter and a lexer compiled
        js.document.body.dataset.warm = "1"

    # -- for tests and tools -------------------------------------------------------------------

    def raw_hex(self, index: int) -> str:
        """The exact bytes answer ``index`` received, as hex (for tests and tools)."""
        return self.turns[index].raw().hex()

    def stats(self) -> str:
        return json.dumps(
            {
                "frames": self.frames,
                "inspector_renders": self.inspector.renders,
                "turns": [t.timing() for t in self.turns],
            }
        )
