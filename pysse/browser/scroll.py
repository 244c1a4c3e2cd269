"""Scroll following in the page: feeds the reader's gestures (wheel, keys, scroll events) to the
pure ``ScrollFollower`` and applies its decisions to the log and the "Jump to latest" button."""

from __future__ import annotations

from typing import Any

from ..render.frames import ScrollFollower
from .dom import Listeners

__all__ = ["ScrollBinding"]


class ScrollBinding:
    """Keeps the log pinned to the bottom while the reader is there, and never yanks them."""

    def __init__(self, log: Any, jump_btn: Any) -> None:
        self.log = log
        self.jump_btn = jump_btn
        self.follower = ScrollFollower()

    def bind(self, listeners: Listeners) -> None:
        on = listeners.on
        on(self.jump_btn, "click", lambda e: self.jump())
        on(self.jump_btn, "wheel", self._on_jump_wheel)
        on(self.log, "scroll", self._on_scroll)
        on(self.log, "wheel", self._on_wheel)
        on(self.log, "keydown", self._on_key)

    def reset(self) -> None:
        self.follower = ScrollFollower()
        self.jump_btn.hidden = True

    def follow(self) -> None:
        """The user sent a message: show the bottom again."""
        self.follower.following = True
        self.after_render()

    def after_render(self, *_: Any) -> None:
        """Content changed (a render, an image loaded, a resize)."""
        log = self.log
        target = self.follower.target_after_render(log.scrollHeight, log.clientHeight)
        if target is not None:
            log.scrollTop = target
        self.jump_btn.hidden = not self.follower.show_jump

    def jump(self) -> None:
        log = self.log
        log.scrollTop = self.follower.jump(log.scrollHeight, log.clientHeight)
        self.jump_btn.hidden = True

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

    def _on_key(self, e: Any) -> None:
        if e.key in ("ArrowUp", "PageUp", "Home"):
            self.follower.on_user_intent_up()
        elif e.key in ("ArrowDown", "PageDown", "End", " "):
            self.follower.on_user_intent_down(self.log.scrollHeight)

    def _on_scroll(self, e: Any) -> None:
        log = self.log
        self.follower.on_scroll(log.scrollTop, log.scrollHeight, log.clientHeight)
        if self.follower.following:
            self.jump_btn.hidden = True
