"""The chat page driven through any engine (``EnginePage``): what the engine tests share, the
counterpart of ``conftest.Page`` for the Chromium-only tests."""

from __future__ import annotations

import json
from typing import Any

from . import EnginePage
from .probe import BLANK_PATH

__all__ = ["MESSAGE", "Chat"]

# One answer on screen, as the tests read it.
MESSAGE = """(i) => { const m = [...document.querySelectorAll('[data-role=assistant]')].at(i);
  return m ? { state: m.dataset.state, text: m.dataset.text ?? null,
    status: m.querySelector('.status').textContent, resumes: Number(m.dataset.resumes || 0),
    renders: Number(m.dataset.renders || 0), answerId: m.dataset.answerId || '',
    reconnecting: m.hasAttribute('data-reconnecting') } : null; }"""


class Chat:
    """The chat page in one tab: open it with settings, send, wait for answers."""

    def __init__(self, page: EnginePage, base: str) -> None:
        self.page = page
        self.base = base
        self.engine = page.engine

    def open(
        self, settings: dict[str, Any] | None = None, path: str = "/", without: tuple[str, ...] = ()
    ) -> Chat:
        """Store the settings for the page's origin (from a blank page there), then load it
        and wait until Python is ready. ``without``: APIs the probe removes before the page
        starts (``scheduler``, ``requestIdleCallback``, ``indexedDB``)."""
        s = {"headers": "X-Demo-Pace: 0.05"}
        s.update(settings or {})
        self.page.goto(self.base + BLANK_PATH)
        self.page.evaluate(
            "(s, w) => { localStorage.setItem('pysse.settings.v1', s);"
            " sessionStorage.setItem('pysse.engine.without', w); }",
            json.dumps(s),
            json.dumps(list(without)),
        )
        self.page.goto(self.base + path)
        self.wait_ready()
        return self

    def twin(self, path: str = "/") -> Chat:
        """The page again in another tab of the same profile (its storage shared), ready."""
        chat = Chat(self.page.twin(), self.base)
        chat.page.goto(self.base + path)
        chat.wait_ready()
        return chat

    def wait_ready(self) -> None:
        self.page.wait_for(
            "() => document.body && (document.body.dataset.ready === '1'"
            " || document.body.dataset.bootError === '1')",
            timeout=180,
        )
        problem = self.page.evaluate(
            "() => document.body.dataset.bootError ? document.querySelector("
            "'[data-role=boot-text]').textContent : ''"
        )
        assert not problem, f"{self.engine}: {problem}"

    def reload(self) -> None:
        """``location.reload()``, and wait for the new document to be ready."""
        self.page.evaluate(
            "() => { window.__before_reload = 1; setTimeout(() => location.reload(), 0); }"
        )
        self.page.wait_for(
            "() => !window.__before_reload && document.readyState !== 'loading'", timeout=60
        )
        self.wait_ready()

    def send(self, text: str) -> None:
        self.page.type("[data-role=prompt]", text)
        self.page.press("[data-role=prompt]", "Enter")

    def message(self, index: int = -1) -> dict[str, Any]:
        got = self.page.evaluate(MESSAGE, index)
        assert got is not None, f"no answer {index} on screen"
        return dict(got)

    def wait_done(self, index: int = -1, timeout: float = 90) -> dict[str, Any]:
        self.page.wait_for(
            "(i) => { const m = [...document.querySelectorAll('[data-role=assistant]')].at(i);"
            " return m && m.dataset.state !== 'streaming'"
            " && !(window.pysseSwapsPending && window.pysseSwapsPending()); }",
            index,
            timeout=timeout,
        )
        return self.message(index)

    def raw(self, index: int = -1) -> bytes:
        return bytes.fromhex(self.page.evaluate("(i) => pysse.rawHex(i)", index))

    def stats(self) -> dict[str, Any]:
        return dict(json.loads(self.page.evaluate("() => pysse.stats()")))
