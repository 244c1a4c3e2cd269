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
from collections.abc import Generator
from typing import Any

import js
from pyodide.ffi import create_proxy

from ..inspector import cut
from ..page.diagnose import label, setup_notice
from ..page.request import (
    advertised_format,
    body_format,
    build_body,
    check_relay_url,
    has_demo,
    needs_format_probe,
    parse_header_lines,
    relay_url,
)
from ..page.settings import DEFAULTS, SETTINGS_KEY, coerce, dump_settings, load_settings
from .dom import PAUSES, Listeners, js_obj, q, run_sliced, spawn
from .inspector_panel import WHOLE_MAX, InspectorPanel
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
        self.learned: dict[str, str] = {}  # relay URL -> the format it advertised
        self.settings = load_settings(self._stored_settings(), site)
        self._frame_proxy = create_proxy(self._on_frame)
        self._frame_id: Any = None
        self.frames = 0
        self._bind()
        self._fill_settings_form()
        self._probe_format()

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
            default = self._resolved_url(ignore_setting=True)
            el.placeholder = f"{default}  (default)" if default else "not set: see the notice"
        problem = check_relay_url(str(self.settings["relay"]))
        err = q("[data-role=relay-url-error]")
        if err is not None:
            err.textContent = problem or ""
            err.hidden = not problem
        if el is not None:
            el.setAttribute("aria-invalid", "true" if problem else "false")
        hint = q("[data-role=demo-hint]")
        if hint is not None:
            hint.hidden = not has_demo(self.site)
        if not has_demo(self.site):
            self.prompt.placeholder = "Ask something  (Enter sends, Shift+Enter: new line)"

    def _read_settings_form(self, *_: Any) -> None:
        before = (self.settings["relay"], self.settings["format"])
        for key in DEFAULTS:
            el = q(f"[data-setting={key}]")
            if el is not None:
                self.settings[key] = coerce(key, el.value)
        self._save_settings()
        self._update_relay_placeholder()
        if (self.settings["relay"], self.settings["format"]) != before:
            self._probe_format()

    def _probe_format(self) -> None:
        """With Format auto, ask the relay which format it speaks (a GET: no preflight, no
        key used) so the first message is already written in it."""
        s = self.settings
        url = self._resolved_url()
        if url is None or url in self.learned or check_relay_url(str(s["relay"])):
            return
        if needs_format_probe(s["format"], str(s["relay"]), self.site):
            spawn(self._learn_from_probe(url))

    async def _learn_from_probe(self, url: str) -> None:
        found = await js.pysseBridge.probe(url)
        fmt = advertised_format(str(found.text)) if found.reached else None
        if fmt is not None:
            self.learned.setdefault(url, fmt)
            self.doc.body.dataset.relayFormat = fmt

    def _save_settings(self) -> None:
        # Storage may be disabled; the settings still apply to this page.
        with contextlib.suppress(Exception):
            js.localStorage.setItem(SETTINGS_KEY, dump_settings(self.settings, self.site))

    def _resolved_url(self, ignore_setting: bool = False) -> str | None:
        setting = "" if ignore_setting else str(self.settings["relay"])
        fmt = body_format(self.settings["format"], self.site)
        return relay_url(setting, fmt, self.site, js.location.origin)

    def learn_format(self, url: str, fmt: str) -> bool:
        """The relay at ``url`` says it speaks ``fmt`` (X-Pysse-Format). Later requests use
        it; a chosen Format that disagrees is switched to it (the relay knows, a saved value
        may be stale). True if the Format setting changed."""
        self.learned[url] = fmt
        if self.settings["format"] in ("auto", fmt):
            return False
        self.settings["format"] = fmt
        self._save_settings()
        el = q("[data-setting=format]")
        if el is not None:
            el.value = fmt
        self.show_notice(
            f"Format is now {label(fmt)}: the relay at {url} says it speaks that. Press Retry "
            "to send again."
        )
        return True

    def show_notice(self, text: str) -> None:
        """A line in the conversation from the page itself (setup help, a changed setting);
        never sent to the model."""
        art = self.doc.createElement("article")
        art.className = "msg notice"
        art.dataset.role = "notice"
        art.setAttribute("role", "status")
        art.textContent = text
        self.log.appendChild(art)
        self.scroll.follow()

    def setup_problem(self) -> str | None:
        """Why nothing can be sent right now (no relay, an invalid relay URL), or None."""
        problem = check_relay_url(str(self.settings["relay"]))
        if problem:
            return f"Settings → Relay URL: {problem}. Fix it, then send again."
        if self._resolved_url() is None:
            return setup_notice(str(js.location.origin))
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
        problem = self.setup_problem()
        if problem:  # nothing can go out: say why, and keep the text where it was typed
            self.show_notice(problem)
            return
        self.prompt.value = ""
        self.send(text)

    def send(self, text: str) -> None:
        problem = self.setup_problem()
        if problem:  # a message typed during boot: put it back in the composer
            if text not in str(self.prompt.value):
                self.prompt.value = (text + "\n" + str(self.prompt.value)).strip()
            self.show_notice(problem)
            return
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

    def _start(self, history: list[tuple[str, str]], replace: Any = None) -> None:
        # Only the latest answer can be retried: Retry on an earlier one would fork the
        # conversation (what is on screen and what is sent would disagree).
        for t in self.turns:
            q("[data-role=retry]", t.el).hidden = True
        el = self._add_assistant()
        if replace is not None:
            replace.replaceWith(el)  # a retried answer takes the failed one's place
        turn = Turn(self, history, el)
        self.turns.append(turn)
        self.active.append(turn)
        self.current = turn
        self.stop_btn.disabled = False
        self.doc.body.dataset.streaming = "1"
        s = self.settings
        url = self._resolved_url() or ""
        fmt = body_format(s["format"], self.site, self.learned.get(url, ""))
        body = build_body(fmt, history, model=s["model"], system=s["system"])
        user_headers = parse_header_lines(s["headers"])
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        headers.update(user_headers)
        turn.url = url
        turn.body_format = fmt
        turn.sent_headers = headers
        el.dataset.url = url
        turn.handle = js.pysseBridge.start(
            url,
            js_obj(headers),
            json.dumps(body),
            create_proxy(turn),
            int(s["first_byte_s"]) * 1000,
            int(s["idle_s"]) * 1000,
            int(s["content_s"]) * 1000,
        )
        self.after_render()

    # -- resuming an answer after a reload (issue #12) -------------------------------------------

    def reattach(
        self,
        history: list[tuple[str, str]],
        answer_id: str,
        received: bytes,
        url: str = "",
    ) -> Turn:
        """Continue an answer the relay is still keeping, after a reload: ``received`` are the
        bytes the page had (``Turn.raw()``, saved with ``answer_id`` and the ``url`` it was
        posted to); they are parsed again, then the relay sends the rest from that byte on.
        The conversation's earlier messages are the caller's to restore (the chat list);
        this adds the answer in progress, and ``history`` is what it replies to."""
        el = self._add_assistant()
        turn = Turn(self, list(history), el)
        self.history = list(history)
        self.turns.append(turn)
        self.active.append(turn)
        self.current = turn
        self.stop_btn.disabled = False
        self.doc.body.dataset.streaming = "1"
        turn.url = url or self._resolved_url() or ""
        turn.answer_id = answer_id
        el.dataset.url = turn.url
        el.dataset.answerId = answer_id
        if received:
            turn.feed_bytes(bytes(received))
        if turn.state == "streaming":  # else the saved bytes already held the whole answer
            s = self.settings
            headers = {"accept": "text/event-stream", **parse_header_lines(s["headers"])}
            turn.sent_headers = headers
            turn.handle = js.pysseBridge.reattach(
                turn.url,
                js_obj(headers),
                answer_id,
                len(received),
                create_proxy(turn),
                int(s["first_byte_s"]) * 1000,
                int(s["idle_s"]) * 1000,
                int(s["content_s"]) * 1000,
            )
        self.after_render()
        return turn

    def snapshot(self, index: int = -1) -> str:
        """What ``reattach_json`` needs to continue answer ``index`` after a reload, as JSON:
        the history it replies to, its answer id, the relay URL, the bytes received (hex)."""
        turn = self.turns[index]
        return json.dumps(
            {
                "history": turn.history,
                "answer_id": turn.answer_id,
                "url": turn.url,
                "received": turn.raw().hex(),
                "state": turn.state,
            }
        )

    def reattach_json(self, saved: str) -> None:
        """``reattach`` from a ``snapshot`` (JSON is what JavaScript and storage hold)."""
        d = json.loads(saved)
        history = [(str(r), str(t)) for r, t in d.get("history", [])]
        self.reattach(history, str(d["answer_id"]), bytes.fromhex(d.get("received", "")), d["url"])

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
        """Re-send the conversation the failed answer replied to, in its place (never
        automatically). Only the latest answer offers Retry, so nothing after it is lost and
        the history sent is exactly what is on screen above it."""
        if self.current is not None or not self.turns or turn is not self.turns[-1]:
            return
        problem = self.setup_problem()
        if problem:
            self.show_notice(problem)
            return
        self.turns.remove(turn)
        self.history = list(turn.history)
        self._start(list(turn.history), replace=turn.el)

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

    def warm_up(self) -> None:
        """Pay one-time costs (markdown-it's first parse, pygments' lexer imports: ~50 ms in
        Pyodide) while idle after boot, not in the middle of the first answer's frames."""
        if self.current is None:
            from ..render.streaming import StreamingMarkdown

            StreamingMarkdown(md=self.md_for(frozenset())).feed(
                "# w\n\n*a* `b`\n\n| a |\n|---|\n| 1 |\n\n```python\nx = 1\n```\n\nz\n"
            )
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
                "sliced_pauses": PAUSES[0],
                "turns": [t.timing() for t in self.turns],
            }
        )
