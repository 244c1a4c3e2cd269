"""Frames -> DOM: the chat page's controller, and the only module that touches ``js``/``pyodide``.

The network loop lives in JavaScript (``web/bridge.js``): it calls ``fetch()``, reads the
body with ``getReader()`` and hands each chunk to this module *synchronously* (a JS loop
calling Python costs ~6 us a chunk; awaiting ``reader.read()`` from Python costs ~20x
that, see NOTES). Everything else, parsing, state, markdown, frame pacing and scroll
following, is the pure-Python layers below, driven from here.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
from typing import Any

import js
from pyodide.ffi import create_once_callable, create_proxy, to_js

from .chat import ChatStream
from .events import Finish, Outcome, TextDelta, Usage
from .frames import FrameScheduler, ScrollFollower
from .inspector import analyze, compare_chunk_sizes, cut
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

    def __init__(
        self, app: App, history: list[tuple[str, str]], el: Any, replay: bool = False
    ) -> None:
        self.app = app
        self.replay = replay
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
        from .markdown import StreamingMarkdown  # see App.md_for

        self.md = StreamingMarkdown(md=app.md_for(hosts))
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
        self.feed_bytes(u8.to_bytes())

    def feed_bytes(self, data: bytes) -> None:
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
            elif isinstance(ev, Finish):  # a ProviderError is always followed by its Finish
                self._finish(ev)
                return
        if grew:
            self.sched.request()

    def render(self) -> None:
        t = js.performance.now()
        update = self.md.update() if self.state == "streaming" else self.md.finish()
        for block in update.settled:
            self.settled_el.insertAdjacentHTML("beforeend", block)
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
        retry.hidden = state == "done" or self.replay
        self.app.turn_finished(self)

    def _show_usage(self, usage: Usage) -> None:
        u = self.cs.usage or usage
        parts = []
        if u.input_tokens is not None:
            parts.append(f"{u.input_tokens} in")
        if u.output_tokens is not None:
            parts.append(f"{u.output_tokens} out")
        self.usage_el.textContent = " · ".join(parts) + " tokens" if parts else ""

    def raw(self) -> bytes:
        return b"".join(c for _, c in self.chunks)

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
        self.current: Turn | None = None  # the conversation's streaming answer
        self.active: list[Turn] = []  # every streaming answer, replays included
        self.inspector = Inspector(self)
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
            # Imported here, not at the top: markdown-it's import is ~150 ms in Pyodide, and
            # the page is ready to send without it (the idle warm-up or the first answer
            # pays it once).
            from .markdown import MarkdownPolicy, make_markdown

            self._mds[hosts] = make_markdown(MarkdownPolicy(image_hosts=hosts))
        return self._mds[hosts]

    # -- events --------------------------------------------------------------------------------

    def _on(self, el: Any, name: str, fn: Any, capture: bool = False) -> None:
        proxy = create_proxy(fn)
        self._proxies.append(proxy)  # lives as long as the page
        el.addEventListener(name, proxy, capture)

    def _bind(self) -> None:
        self._on(self.send_btn, "click", lambda e: self.send_from_prompt())
        self._on(self.stop_btn, "click", lambda e: self.stop())
        self._on(_q("[data-role=new-chat]"), "click", lambda e: self.new_chat())
        self._on(self.prompt, "keydown", self._on_key)
        self._on(self.jump_btn, "click", lambda e: self._jump())
        self._on(self.jump_btn, "wheel", self._on_jump_wheel)
        self._on(self.log, "scroll", self._on_scroll)
        self._on(self.log, "wheel", self._on_wheel)
        self._on(self.log, "keydown", self._on_log_key)
        # Growth that is not a render (an allowed image loading, a resize) keeps the bottom
        # in view while following. "load" does not bubble: listen in the capture phase.
        self._on(self.log, "load", lambda e: self.after_render(), capture=True)
        self._on(js.window, "resize", lambda e: self.after_render())
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
        elif e.deltaY > 0:
            self.follower.on_user_intent_down(self.log.scrollHeight)

    def _on_jump_wheel(self, e: Any) -> None:
        """The floating button sits over the log: a wheel over it still scrolls the log."""
        e.preventDefault()
        self._on_wheel(e)
        self.log.scrollTop = self.log.scrollTop + e.deltaY

    def _on_log_key(self, e: Any) -> None:
        if e.key in ("ArrowUp", "PageUp", "Home"):
            self.follower.on_user_intent_up()
        elif e.key in ("ArrowDown", "PageDown", "End", " "):
            self.follower.on_user_intent_down(self.log.scrollHeight)

    def _on_scroll(self, e: Any) -> None:
        log = self.log
        self.follower.on_scroll(log.scrollTop, log.scrollHeight, log.clientHeight)
        if self.follower.following:
            self.jump_btn.hidden = True

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

    # -- frames and scrolling ------------------------------------------------------------------

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
            _js_obj(headers),
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
        self.inspector.close()
        self.queue.clear()
        self.history.clear()
        self.turns.clear()
        self.log.replaceChildren()
        self.follower = ScrollFollower()
        self.jump_btn.hidden = True
        self.prompt.focus()

    def replay(self, data: bytes, chunk: int, delay_ms: int, label: str) -> Turn:
        """Play recorded bytes through the same parser and renderer, at a chunk size."""
        el = self._add_assistant()
        el.dataset.replay = "1"
        _q(".status", el).textContent = f"Replaying {label}…"
        turn = Turn(self, [], el, replay=True)
        self.turns.append(turn)
        self.active.append(turn)
        _spawn(self._play(turn, data, chunk, delay_ms))
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
            from .markdown import StreamingMarkdown

            StreamingMarkdown(md=self.md_for(frozenset())).feed(
                "# w\n\n*a* `b`\n\n| a |\n|---|\n| 1 |\n\n```python\nx = 1\n```\n\nz\n"
            )
        js.document.body.dataset.warm = "1"

    # -- for tests and the inspector -----------------------------------------------------------

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


PAGE = 200  # rows rendered at a time in the inspector's lists


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _fmt_ms(v: Any) -> str:
    return "–" if v is None else f"{v:,.0f} ms"


class Inspector:
    """The stream inspector panel: Raw / Events / Timing / Replay for one answer.

    Built from the answer's recording when opened (``pysse.inspector.analyze``); while it is
    closed nothing is computed, so it costs nothing during streaming.
    """

    def __init__(self, app: App) -> None:
        self.app = app
        self.panel = _q("[data-role=inspector]")
        self.body = _q("[data-role=insp-body]")
        self.turn: Turn | None = None
        self.tab = "raw"
        self.shown = PAGE
        self.renders = 0
        self.compare: list[dict[str, Any]] | None = None
        self._report: Any = None
        self._report_key: tuple[int, int] | None = None

    def bind(self) -> None:
        app = self.app
        app._on(self.panel, "click", self._on_click)
        app._on(_q("[data-role=replay-file]"), "change", self._on_file)
        drop = _q("[data-role=replay-drop]")
        app._on(drop, "dragover", lambda e: e.preventDefault())
        app._on(drop, "drop", self._on_drop)

    @property
    def is_open(self) -> bool:
        return not self.panel.hidden

    def open(self, turn: Turn) -> None:
        self.turn = turn
        self.shown = PAGE
        self.panel.hidden = False
        js.document.body.dataset.inspecting = "1"
        self.render()

    def close(self) -> None:
        self.panel.hidden = True
        js.document.body.dataset.inspecting = ""
        self.turn = None

    def turn_finished(self, turn: Turn) -> None:
        if self.is_open and turn is self.turn:
            self.render()

    def report(self) -> Any:
        turn = self.turn
        assert turn is not None
        key = (id(turn), len(turn.chunks))
        if key != self._report_key:
            self._report = analyze(turn.chunks, turn.format)
            self._report_key = key
        return self._report

    def render(self) -> None:
        if self.turn is None or not self.is_open:
            return
        self.renders += 1
        for b in self.panel.querySelectorAll("[data-tab]"):
            b.setAttribute(
                "aria-selected", "true" if b.getAttribute("data-tab") == self.tab else "false"
            )
        idx = self.app.turns.index(self.turn) + 1 if self.turn in self.app.turns else 0
        _q("[data-role=insp-title]").textContent = f"answer {idx} · {self.turn.state}"
        _q("[data-role=insp-replay]").hidden = self.tab != "replay"
        view = {
            "raw": self._raw,
            "events": self._events,
            "timing": self._timing,
            "replay": self._replay,
        }[self.tab]
        self.body.innerHTML = view()

    def _raw(self) -> str:
        rep = self.report()
        rows = []
        for c in rep.chunks[: self.shown]:
            bad = f' <span class="bad">{c.invalid} invalid UTF-8</span>' if c.invalid else ""
            rows.append(
                f'<tr data-chunk="{c.index}"><td>{c.index}</td><td>{c.t_ms:,.0f}</td>'
                f"<td>{c.size}</td><td><pre>{_html_lines(c.text)}</pre>{bad}</td></tr>"
            )
        more = self._more(len(rep.chunks))
        return (
            f'<p class="insp-note">{len(rep.chunks)} chunks, {rep.timing["bytes"]:,} bytes, '
            f"{rep.comments} comment lines (keep-alives). ␍ = CR, ␊ = LF.</p>"
            '<table class="insp-table" data-role="insp-chunks"><thead><tr><th>#</th>'
            "<th>ms</th><th>bytes</th><th>as it arrived</th></tr></thead><tbody>"
            + "".join(rows)
            + "</tbody></table>"
            + more
        )

    def _events(self) -> str:
        rep = self.report()
        rows = []
        for ev in rep.events[: self.shown]:
            chat = "<br>".join(_esc(_chat_summary(c)) for c in ev.chat) or "<i>nothing</i>"
            data = ev.data if len(ev.data) <= 400 else ev.data[:400] + "…"
            rows.append(
                f'<tr data-event="{ev.index}"><td>{ev.index}</td><td>{_esc(ev.event)}'
                f"</td><td><code>{_esc(data)}</code></td><td>{_esc(ev.id)}</td>"
                f"<td>{chat}</td></tr>"
            )
        return (
            f'<p class="insp-note">{len(rep.events)} SSE events, format '
            f"{_esc(rep.format or 'unknown')}</p>"
            '<table class="insp-table" data-role="insp-events"><thead><tr><th>#</th>'
            "<th>event</th><th>data</th><th>id</th><th>became</th></tr></thead><tbody>"
            + "".join(rows)
            + "</tbody></table>"
            + self._more(len(rep.events))
        )

    def _timing(self) -> str:
        rep = self.report()
        turn = self.turn
        assert turn is not None
        live = turn.timing()
        t = rep.timing
        outcome = rep.outcome if not turn.replay else turn.state
        detail = rep.detail or ""
        if turn.state == "stopped":
            outcome, detail = "aborted", "stopped by the user"
        items = [
            ("time to first byte", _fmt_ms(t["ttfb_ms"])),
            ("time to first text", _fmt_ms(t["ttft_ms"])),
            ("total time", _fmt_ms(live["total_ms"])),
            ("bytes", f"{t['bytes']:,}"),
            ("chunks", f"{t['chunks']:,}"),
            ("SSE events", f"{t['sse_events']:,}"),
            ("events / s", "–" if not t["events_per_s"] else f"{t['events_per_s']:,.0f}"),
            ("renders", f"{live['renders']:,}"),
            (
                "deltas per render",
                "–" if not live["deltas_per_render"] else f"{live['deltas_per_render']:.1f}",
            ),
            ("longest render", f"{live['longest_render_ms']:.1f} ms"),
            (
                "outcome",
                detail
                if detail.startswith(f"{outcome}:")
                else f"{outcome}" + (f": {detail}" if detail else ""),
            ),
        ]
        return (
            '<dl class="insp-timing" data-role="insp-timing">'
            + "".join(
                f'<dt>{_esc(k)}</dt><dd data-key="{_esc(k)}">{_esc(v)}</dd>' for k, v in items
            )
            + "</dl>"
        )

    def _replay(self) -> str:
        rows = self.compare or []
        if not rows:
            return (
                '<p class="insp-note">Replay this answer (or a saved .sse file) through '
                "the same parser and renderer at any chunk size. The check below compares "
                "whole, 1000, 60, 20 and 1-byte chunks.</p>"
            )
        body = "".join(
            f"<tr><td>{_esc(r['chunk'])}</td><td>{'same' if r['same'] else 'DIFFERENT'}</td>"
            f"<td>{r['chars']}</td><td>{_esc(r['outcome'])}</td>"
            f"<td>{_esc(r.get('first_difference_at', ''))}</td></tr>"
            for r in rows
        )
        verdict = (
            "identical text at every chunk size"
            if all(r["same"] for r in rows)
            else "the text depends on the chunk size"
        )
        return (
            f'<p class="insp-note" data-role="insp-verdict">{verdict}</p>'
            '<table class="insp-table" data-role="insp-compare"><thead><tr><th>chunk</th>'
            "<th>text</th><th>chars</th><th>outcome</th><th>first difference at</th></tr>"
            "</thead><tbody>" + body + "</tbody></table>"
        )

    def _more(self, total: int) -> str:
        if total <= self.shown:
            return ""
        return (
            f'<button type="button" data-role="insp-more">Show {min(PAGE, total - self.shown)}'
            f" more of {total - self.shown}</button>"
        )

    # -- actions -------------------------------------------------------------------------------

    def _on_click(self, e: Any) -> None:
        btn = e.target.closest("button")
        if btn is None:
            return
        role = btn.getAttribute("data-role")
        if btn.getAttribute("data-tab"):
            self.tab = str(btn.getAttribute("data-tab"))
            self.shown = PAGE
            self.render()
        elif role == "insp-close":
            self.close()
        elif role == "insp-more":
            self.shown += PAGE
            self.render()
        elif role == "insp-save":
            self.save()
        elif role == "replay-this" and self.turn is not None:
            self.start_replay(self.turn.raw(), "this answer")

    def save(self) -> None:
        turn = self.turn
        if turn is None:
            return
        data = turn.raw()
        blob = js.Blob.new([to_js(data)], _js_obj({"type": "text/event-stream"}))
        url = js.URL.createObjectURL(blob)
        a = js.document.createElement("a")
        a.href = url
        idx = self.app.turns.index(turn) + 1
        a.download = f"pysse-answer-{idx}-{turn.cs.detected_format or 'stream'}.sse"
        js.document.body.appendChild(a)
        a.click()
        a.remove()
        js.setTimeout(create_once_callable(lambda: js.URL.revokeObjectURL(url)), 1000)

    def start_replay(self, data: bytes, label: str) -> None:
        chunk = int(_q("[data-role=replay-chunk]").value or 0)
        delay = int(_q("[data-role=replay-delay]").value or 0)
        self.compare = compare_chunk_sizes(data, fmt=self.app.settings["format"])
        size = f"{chunk}-byte chunks" if chunk else "one chunk"
        turn = self.app.replay(data, chunk, delay, f"{label} in {size}")
        self.tab = "replay"
        self.turn = turn
        self.render()

    def _on_file(self, e: Any) -> None:
        files = e.target.files
        if files.length:
            _spawn(self._read_file(files.item(0)))

    def _on_drop(self, e: Any) -> None:
        e.preventDefault()
        files = e.dataTransfer.files
        if files.length:
            _spawn(self._read_file(files.item(0)))

    async def _read_file(self, file: Any) -> None:
        buf = await file.arrayBuffer()
        self.start_replay(buf.to_bytes(), str(file.name))


_TASKS: set[asyncio.Task[None]] = set()


def _spawn(coro: Any) -> None:
    """Run a coroutine on Pyodide's event loop, keeping a reference until it ends."""
    task = asyncio.ensure_future(coro)
    _TASKS.add(task)
    task.add_done_callback(_TASKS.discard)


def _html_lines(text: str) -> str:
    out = []
    for line in text.split("\n"):
        if line.startswith(":"):
            out.append(f'<span class="comment">{_esc(line)}</span>')
        else:
            out.append(_esc(line))
    return "\n".join(out)


def _chat_summary(c: dict[str, Any]) -> str:
    kind = c.get("type")
    if kind in ("text", "reasoning"):
        return f"{kind}: {c.get('text')!r}"
    if kind == "tool_call":
        return f"tool_call #{c.get('index')}: {c.get('name') or ''}{c.get('arguments') or ''}"
    if kind == "usage":
        return f"usage: {c.get('input_tokens')} in / {c.get('output_tokens')} out"
    if kind == "finish":
        return f"finish: {c.get('outcome')} ({c.get('reason')}) {c.get('detail') or ''}".strip()
    if kind == "error":
        return f"error {c.get('kind')}: {c.get('message')}"
    return str(c)


_app: App | None = None


def start(site_json: str, early: Any = None) -> App:
    """Called once by ``web/app.js`` when Pyodide is ready; sends prompts typed meanwhile."""
    global _app
    _app = App(json.loads(site_json))
    js.pysseApp = create_proxy(_app)
    for text in list(early or []):
        _app.send(str(text))
    _app.inspector.bind()
    if "inspect=1" in str(js.location.search):
        _app.inspector.panel.hidden = False
        js.document.body.dataset.inspecting = "1"
    js.document.body.dataset.ready = "1"
    if not _app.current:
        js.setTimeout(create_once_callable(_app.warm_up), 30)
    return _app
