"""Scroll following in the page: feeds the reader's gestures (wheel, keys, scroll events) to the
pure ``ScrollFollower`` and applies its decisions to the log and the "Jump to latest" button.
Where the engine has no CSS scroll anchoring (WebKit), it also holds a reader's view still
while the content changes (``pysse.page.view_hold``)."""

from __future__ import annotations

from typing import Any

import js

from ..page.view_hold import ViewHold
from ..render.frames import ScrollFollower
from .dom import Listeners

__all__ = ["ScrollBinding"]


class ScrollBinding:
    """Keeps the log pinned to the bottom while the reader is there, and never yanks them."""

    def __init__(self, log: Any, jump_btn: Any) -> None:
        self.log = log
        self.jump_btn = jump_btn
        self.follower = ScrollFollower()
        self.hold = ViewHold(native=bool(js.CSS.supports("overflow-anchor", "auto")))

    def bind(self, listeners: Listeners) -> None:
        on = listeners.on
        on(self.jump_btn, "click", lambda e: self.jump())
        on(self.jump_btn, "wheel", self._on_jump_wheel)
        on(self.log, "scroll", self._on_scroll)
        on(self.log, "wheel", self._on_wheel)
        on(self.log, "keydown", self._on_key)

    def reset(self) -> None:
        self.follower = ScrollFollower()
        self.hold.forget()
        self.jump_btn.hidden = True

    def follow(self) -> None:
        """The user sent a message: show the bottom again."""
        self.follower.following = True
        self.after_render()

    def after_render(self, *_: Any) -> None:
        """Content changed (a render, an image loaded, a resize)."""
        log = self.log
        self._hold_view()
        target = self.follower.target_after_render(log.scrollHeight, log.clientHeight)
        if target is not None:
            log.scrollTop = target
        self.jump_btn.hidden = not self.follower.show_jump
        self._remember()

    def _hold_view(self) -> None:
        """Scroll by however far the reader's anchor moved (engines without anchoring)."""
        if not self.hold.active(self.follower.following) or self.hold.anchor is None:
            return
        node = self.hold.anchor.node
        top = self._top_in_log(node) if node.isConnected else None
        shift = self.hold.correction(top)
        if shift:
            self.log.scrollTop = self.log.scrollTop + shift

    def _remember(self) -> None:
        """The element at the middle of the reader's view, as the next anchor."""
        if not self.hold.active(self.follower.following):
            self.hold.forget()
            return
        log = self.log
        box = log.getBoundingClientRect()
        el = js.document.elementFromPoint(box.left + box.width / 2, box.top + log.clientHeight / 2)
        if el == log or not log.contains(el):  # (null, or outside the log)
            self.hold.forget()
        else:
            self.hold.remember(el, self._top_in_log(el))

    def _top_in_log(self, el: Any) -> float:
        return float(el.getBoundingClientRect().top - self.log.getBoundingClientRect().top)

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
        self._remember()  # the reader moved: what they look at now is the anchor
