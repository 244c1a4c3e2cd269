"""Frames -> DOM: the chat page's controller, and the only module that touches ``js``/``pyodide``.

The network loop lives in JavaScript (``web/bridge.js``): it calls ``fetch()``, reads the
body with ``getReader()`` and hands each chunk to this module *synchronously* (a JS loop
calling Python costs ~6 us a chunk; awaiting ``reader.read()`` from Python costs ~20x
that, see NOTES). Everything else, parsing, state, markdown, frame pacing and scroll
following, is the pure-Python layers below, driven from here.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import js
from pyodide.ffi import create_once_callable, create_proxy, to_js

from .chat import ChatStream
from .events import Finish, Outcome, ProviderError, TextDelta, Usage
from .frames import FrameScheduler, ScrollFollower
from .markdown import MarkdownPolicy, StreamingMarkdown
from .payloads import build_body, parse_header_lines, relay_url
from .providers import FORMATS

__all__ = ["App", "start"]

SETTINGS_KEY = "pysse.settings.v1"
DEFAULTS: dict[str, Any] = {
    "relay": "",
    "format": "auto",
    "model": "",
    "system": "",
    "headers": "",
    "first_byte_s": 60,
    "idle_s": 30,
    "image_hosts": "",
}
STATE_TEXT = {
    "streaming": "Streaming…",
    "done": "Done",
    "truncated": "Truncated",
    "error": "Error",
    "stopped": "Stopped",
}


def _q(sel: str, root: Any = None) -> Any:
    return (root or js.document).querySelector(sel)


def _js_obj(d: dict[str, Any]) -> Any:
    return to_js(d, dict_converter=js.Object.fromEntries)


class Turn:
    """One assistant answer: its stream, its markdown, its DOM, its state."""

    def __init__(self, app: App, history: list[tuple[str, str]], el: Any) -> None:
        self.app = app
        self.history = history  # the conversation this answer replies to
        self.el = el
        self.settled_el = _q(".settled", el)
        self.tail_el = _q(".tail", el)
        self.status_el = _q(".status", el)
        self.usage_el = _q(".usage", el)
        s = app.settings
        self.format = s["format"]
        self.cs = ChatStream(self.format)
        hosts = frozenset(h.strip() for h in s["image_hosts"].split(",") if h.strip())
        self.md = StreamingMarkdown(MarkdownPolicy(image_hosts=hosts), md=app.md_for(hosts))
        self.chunks: list[tuple[float, bytes]] = []  # raw bytes + arrival ms, for the inspector
        self.t0 = js.performance.now()
        self.t_first_byte: float | None = None
        self.t_first_text: float | None = None
        self.t_end: float | None = None
        self.longest_render_ms = 0.0
        self.render_ms: list[float] = []
        self.handle: Any = None
        self.state = "streaming"
        self.shown_tail = ""
        self.http_status: int | None = None
        self.sched = FrameScheduler(self.render, app.request_frame, app.is_hidden)

    # -- from the JS bridge (called synchronously by its read loop) ------------------------------

    def on_open(self, status: int, content_type: str) -> None:
        self.http_status = status

    def on_chunk(self, u8: Any) -> None:
        data: bytes = u8.to_bytes()
        now = js.performance.now()
        if self.t_first_byte is None:
            self.t_first_byte = now - self.t0
        self.chunks.append((now - self.t0, data))
        if self.state != "streaming":
            return
        self._apply(self.cs.feed(data))

    def on_end(self) -> None:
        self._apply(self.cs.close())

    def on_http_error(self, status: int, retry_after: Any, content_type: str, text: str) -> None:
        message = f"HTTP {status}"
        detail = _error_message(text)
        if detail:
            message += f": {detail}"
        if retry_after:
            message += f" (retry after {retry_after} s)"
        self._apply(self.cs.fail("http", message, status))

    def on_wrong_type(self, status: int, content_type: str, text: str) -> None:
        self._apply(
            self.cs.fail(
                "not_a_stream",
                f"the relay answered {status} with {content_type or 'no content type'}, not "
                "text/event-stream: the relay URL probably points at the wrong thing",
                status,
            )
        )

    def on_network_error(self, name: str, message: str) -> None:
        if self.state != "streaming":
            return
        self._apply(self.cs.fail("network", f"could not reach the relay ({name}: {message})"))

    def on_read_error(self, name: str, message: str) -> None:
        if self.state != "streaming":
            return  # Stop already ended this answer
        # The connection broke mid-body: exactly a truncation, never a completion.
        self._apply(self.cs.close())

    def on_timeout(self, kind: str, seconds: float) -> None:
        what = "no first byte" if kind == "first-byte" else "no bytes"
        self._apply(self.cs.fail("timeout", f"timed out: {what} for {seconds:g} s"))

    # -- from the page -------------------------------------------------------------------------

    def stop(self) -> None:
        if self.state != "streaming":
            return
        if self.handle is not None:
            self.handle.abort()
        self._apply(self.cs.abort())

    # -- internals -----------------------------------------------------------------------------

    def _apply(self, events: list[Any]) -> None:
        grew = False
        for ev in events:
            if isinstance(ev, TextDelta):
                if self.t_first_text is None:
                    self.t_first_text = js.performance.now() - self.t0
                self.md.append(ev.text)
                grew = True
            elif isinstance(ev, Usage):
                self._show_usage(ev)
            elif isinstance(ev, Finish):
                self._finish(ev)
                return
            elif isinstance(ev, ProviderError):
                pass  # followed by its Finish
        if grew:
            self.sched.request()

    def render(self) -> None:
        t = js.performance.now()
        update = self.md.update() if self.state == "streaming" else self.md.finish()
        for html in update.settled:
            self.settled_el.insertAdjacentHTML("beforeend", html)
        if update.tail != self.shown_tail:
            self.tail_el.innerHTML = update.tail
            self.shown_tail = update.tail
        self.el.dataset.renders = str(self.sched.renders)
        took = js.performance.now() - t
        self.render_ms.append(round(took, 1))
        self.longest_render_ms = max(self.longest_render_ms, took)
        self.app.after_render()

    def _finish(self, fin: Finish) -> None:
        state = {
            Outcome.COMPLETED: "done",
            Outcome.TRUNCATED: "truncated",
            Outcome.ERROR: "error",
            Outcome.ABORTED: "stopped",
        }[fin.outcome]
        self.state = state
        self.t_end = js.performance.now() - self.t0
        self.sched.flush()  # the final state, synchronously: never wait on a frame
        self.el.dataset.state = state
        if state == "done":
            note = STATE_TEXT[state]
        elif state == "error" and self.cs.error is not None:
            note = f"Error: {self.cs.error.message}"
        else:
            note = STATE_TEXT[state]
            if fin.detail and state == "truncated":
                note = "Truncated: " + fin.detail.removeprefix("truncated: ")
        self.status_el.textContent = note
        self.el.dataset.text = self.cs.text  # the exact concatenated deltas, for tests and tools
        retry = _q("[data-role=retry]", self.el)
        retry.hidden = state == "done"
        self.app.turn_finished(self)

    def _show_usage(self, usage: Usage) -> None:
        u = self.cs.usage or usage
        parts = []
        if u.input_tokens is not None:
            parts.append(f"{u.input_tokens} in")
        if u.output_tokens is not None:
            parts.append(f"{u.output_tokens} out")
        self.usage_el.textContent = " · ".join(parts) + " tokens" if parts else ""

    def timing(self) -> dict[str, Any]:
        total = self.t_end if self.t_end is not None else js.performance.now() - self.t0
        return {
            "ttfb_ms": self.t_first_byte,
            "ttft_ms": self.t_first_text,
            "total_ms": total,
            "bytes": sum(len(c) for _, c in self.chunks),
            "chunks": len(self.chunks),
            "sse_events": self.cs.sse_events,
            "events_per_s": self.cs.sse_events / (total / 1000) if total else None,
            "renders": self.sched.renders,
            "deltas_per_render": (
                self.sched.requests / self.sched.renders if self.sched.renders else None
            ),
            "longest_render_ms": self.longest_render_ms,
            "render_ms": self.render_ms,
            "outcome": self.state,
            "detail": self.cs.finish_detail or (self.cs.error.message if self.cs.error else ""),
            "format": self.cs.detected_format,
        }


def _error_message(text: str) -> str:
    try:
        obj = json.loads(text)
    except ValueError:
        return text.strip()[:300]
    if isinstance(obj, dict):
        err = obj.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:300]
        if isinstance(err, str):
            return err[:300]
        if obj.get("message"):
            return str(obj["message"])[:300]
    return text.strip()[:300]


class App:
    """The page: settings, conversation, sending, Stop/Retry/New chat, frames, scrolling."""

    def __init__(self, site: dict[str, Any]) -> None:
        self.site = site
        self.doc = js.document
        self.log = _q("[data-role=log]")
        self.prompt = _q("[data-role=prompt]")
        self.send_btn = _q("[data-role=send]")
        self.stop_btn = _q("[data-role=stop]")
        self.jump_btn = _q("[data-role=jump]")
        self.turns: list[Turn] = []
        self.history: list[tuple[str, str]] = []
        self.current: Turn | None = None
        self.queue: list[str] = []
        self.follower = ScrollFollower()
        self._mds: dict[frozenset[str], Any] = {}
        self.settings = self._load_settings()
        self._proxies: list[Any] = []
        self._frame_proxy = create_proxy(self._on_frame)
        self._frame_id: Any = None
        self.frames = 0
        self._bind()
        self._fill_settings_form()

    # -- settings ------------------------------------------------------------------------------

    def _load_settings(self) -> dict[str, Any]:
        s = dict(DEFAULTS)
        if self.site.get("format") in FORMATS:
            s["format"] = self.site["format"]
        try:
            saved = json.loads(js.localStorage.getItem(SETTINGS_KEY) or "{}")
            if isinstance(saved, dict):
                s.update({k: v for k, v in saved.items() if k in DEFAULTS})
        except Exception:  # storage disabled or corrupt: start from the defaults
            pass
        if s["format"] not in FORMATS:
            s["format"] = "auto"
        return s

    def _fill_settings_form(self) -> None:
        for key, value in self.settings.items():
            el = _q(f"[data-setting={key}]")
            if el is not None:
                el.value = str(value)
        self._update_relay_placeholder()

    def _update_relay_placeholder(self) -> None:
        el = _q("[data-role=relay-url]")
        if el is not None:
            el.placeholder = self._resolved_url(ignore_setting=True) + "  (default)"

    def _read_settings_form(self, *_: Any) -> None:
        for key, default in DEFAULTS.items():
            el = _q(f"[data-setting={key}]")
            if el is None:
                continue
            value: Any = el.value
            if isinstance(default, int):
                try:
                    value = max(1, int(float(value)))
                except ValueError:
                    value = default
            self.settings[key] = value
        # Storage may be disabled; the settings still apply to this page.
        with contextlib.suppress(Exception):
            js.localStorage.setItem(SETTINGS_KEY, json.dumps(self.settings))
        self._update_relay_placeholder()

    def _resolved_url(self, ignore_setting: bool = False) -> str:
        setting = "" if ignore_setting else str(self.settings["relay"])
        return relay_url(setting, self.settings["format"], self.site, js.location.origin)

    def md_for(self, hosts: frozenset[str]) -> Any:
        if hosts not in self._mds:
            self._mds[hosts] = StreamingMarkdown(MarkdownPolicy(image_hosts=hosts)).md
        return self._mds[hosts]

    # -- events --------------------------------------------------------------------------------

    def _on(self, el: Any, name: str, fn: Any) -> None:
        proxy = create_proxy(fn)
        self._proxies.append(proxy)  # lives as long as the page
        el.addEventListener(name, proxy)

    def _bind(self) -> None:
        self._on(self.send_btn, "click", lambda e: self.send_from_prompt())
        self._on(self.stop_btn, "click", lambda e: self.stop())
        self._on(_q("[data-role=new-chat]"), "click", lambda e: self.new_chat())
        self._on(self.prompt, "keydown", self._on_key)
        self._on(self.jump_btn, "click", lambda e: self._jump())
        self._on(self.log, "scroll", self._on_scroll)
        self._on(self.log, "wheel", self._on_wheel)
        self._on(self.log, "click", self._on_log_click)
        self._on(self.doc, "visibilitychange", self._on_visibility)
        self._on(_q("[data-role=settings]"), "change", self._read_settings_form)

    def _on_key(self, e: Any) -> None:
        if e.key == "Enter" and not e.shiftKey and not e.isComposing:
            e.preventDefault()
            self.send_from_prompt()

    def _on_wheel(self, e: Any) -> None:
        if e.deltaY < 0:
            self.follower.on_user_intent_up()

    def _on_scroll(self, e: Any) -> None:
        log = self.log
        self.follower.on_scroll(log.scrollTop, log.scrollHeight, log.clientHeight)
        if self.follower.following:
            self.jump_btn.hidden = True

    def _on_visibility(self, e: Any) -> None:
        if self.doc.visibilityState == "visible" and self.current is not None:
            self.current.sched.on_visible()

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
        elif btn.dataset.role == "retry":
            article = btn.closest("[data-role=assistant]")
            for turn in self.turns:
                if turn.el == article:
                    self.retry(turn)
                    break

    # -- frames and scrolling ------------------------------------------------------------------

    def is_hidden(self) -> bool:
        return bool(self.doc.visibilityState == "hidden")

    def request_frame(self) -> None:
        self._frame_id = js.requestAnimationFrame(self._frame_proxy)

    def _on_frame(self, ts: float) -> None:
        self.frames += 1
        self._frame_id = None
        if self.current is not None:
            self.current.sched.on_frame()

    def after_render(self) -> None:
        log = self.log
        target = self.follower.target_after_render(log.scrollHeight, log.clientHeight)
        if target is not None:
            log.scrollTop = target
        self.jump_btn.hidden = not self.follower.show_jump

    def _jump(self) -> None:
        log = self.log
        log.scrollTop = self.follower.jump(log.scrollHeight, log.clientHeight)
        self.jump_btn.hidden = True

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
        self.follower.following = True
        self.after_render()

    def _add_assistant(self) -> Any:
        tpl = _q("#assistant-template")
        art = tpl.content.firstElementChild.cloneNode(True)
        self.log.appendChild(art)
        return art

    def _start(self, history: list[tuple[str, str]]) -> None:
        el = self._add_assistant()
        turn = Turn(self, history, el)
        self.turns.append(turn)
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
            _js_obj(headers),
            json.dumps(body),
            create_proxy(turn),
            int(s["first_byte_s"]) * 1000,
            int(s["idle_s"]) * 1000,
        )
        self.after_render()

    def turn_finished(self, turn: Turn) -> None:
        if turn is not self.current:
            return
        if turn.state == "done" or turn.cs.text:
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
        if self.current is not None:
            return
        # Re-send the same conversation the failed answer replied to (never automatically).
        if self.history and self.history[-1][0] == "assistant" and turn is self.turns[-1]:
            self.history.pop()
        self.history = list(turn.history)
        self._start(list(turn.history))

    def new_chat(self) -> None:
        self.stop()
        self.queue.clear()
        self.history.clear()
        self.turns.clear()
        self.log.replaceChildren()
        self.follower = ScrollFollower()
        self.jump_btn.hidden = True
        self.prompt.focus()

    def warm_up(self) -> None:
        """Pay one-time costs (markdown-it's first parse, pygments' lexer imports: ~50 ms in
        Pyodide) while idle after boot, not in the middle of the first answer's frames."""
        if self.current is None:
            StreamingMarkdown(md=self.md_for(frozenset())).feed(
                "# w\n\n*a* `b`\n\n| a |\n|---|\n| 1 |\n\n```python\nx = 1\n```\n\nz\n"
            )

    # -- for tests and the inspector -----------------------------------------------------------

    def stats(self) -> str:
        return json.dumps(
            {
                "frames": self.frames,
                "turns": [t.timing() for t in self.turns],
            }
        )


_app: App | None = None


def start(site_json: str, early: Any = None) -> App:
    """Called once by ``web/app.js`` when Pyodide is ready; sends prompts typed meanwhile."""
    global _app
    _app = App(json.loads(site_json))
    js.pysseApp = create_proxy(_app)
    for text in list(early or []):
        _app.send(str(text))
    js.document.body.dataset.ready = "1"
    if not _app.current:
        js.setTimeout(create_once_callable(_app.warm_up), 30)
    return _app
