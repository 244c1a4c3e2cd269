"""Scroll following for an answer streaming into any element of any page (``stream_chat``).

The bundled page binds its log once (``scroll.py``); an embedder's element can sit in any
scroller, or in the page itself. This finds the nearest scrolling ancestor (else the document),
feeds the reader's gestures to the pure ``ScrollFollower`` while the answer streams, and keeps
the bottom in view only while the reader is there: a reader who scrolled up is never yanked.
"""

from __future__ import annotations

from typing import Any

import js
from pyodide.ffi import create_proxy

from ..render.frames import ScrollFollower

__all__ = ["Follow", "is_element", "scroller_of"]

UP_KEYS = ("ArrowUp", "PageUp", "Home")
DOWN_KEYS = ("ArrowDown", "PageDown", "End", " ")


def is_element(node: Any) -> bool:
    """Whether ``node`` is an element (a JS null reaches Python as ``jsnull``, not None)."""
    return getattr(node, "nodeType", None) == 1


def scroller_of(el: Any) -> Any:
    """The element that scrolls ``el`` into view: its nearest ancestor whose overflow can
    scroll, else the document's scrolling element."""
    node = el.parentElement
    while is_element(node):
        overflow = str(js.getComputedStyle(node).overflowY)
        if overflow in ("auto", "scroll", "overlay"):
            return node
        node = node.parentElement
    return js.document.scrollingElement


class Follow:
    """Follows the bottom of ``scroller`` while the reader is there (see the module
    docstring); ``close()`` removes its listeners."""

    def __init__(self, scroller: Any) -> None:
        self.scroller = scroller
        self.follower = ScrollFollower()
        whole_page = scroller == js.document.scrollingElement
        self._target = js.window if whole_page else scroller
        self._bound: list[tuple[Any, str, Any]] = []
        self._on(self._target, "scroll", self._on_scroll)
        self._on(self._target, "wheel", self._on_wheel)
        self._on(self._target, "keydown", self._on_key)
        # the reader's hand on the view: a finger dragging it, its scrollbar pressed
        self._on(self._target, "touchmove", lambda e: self.follower.hold(True))
        self._on(self._target, "pointerdown", self._on_pointer_down)
        for name in ("touchend", "touchcancel"):
            self._on(js.window, name, lambda e: self.follower.hold(False))
        for name in ("pointerup", "pointercancel"):  # (a finger's pan cancels its pointer)
            self._on(js.window, name, self._on_pointer_up)
        self.after_render()

    def after_render(self, *_: Any) -> None:
        s = self.scroller
        self.follower.seen(s.scrollHeight, js.performance.now())
        target = self.follower.target_after_render(s.scrollHeight, s.clientHeight)
        if target is not None:
            s.scrollTop = target

    def close(self) -> None:
        for el, name, proxy in self._bound:
            el.removeEventListener(name, proxy)
            proxy.destroy()
        self._bound.clear()

    def _on(self, el: Any, name: str, fn: Any) -> None:
        proxy = create_proxy(fn)
        el.addEventListener(name, proxy, js_passive())
        self._bound.append((el, name, proxy))

    def _on_scroll(self, e: Any) -> None:
        s = self.scroller
        self.follower.seen(s.scrollHeight, js.performance.now())
        self.follower.on_scroll(s.scrollTop, s.scrollHeight, s.clientHeight)

    def _on_wheel(self, e: Any) -> None:
        if e.deltaY < 0:
            self.follower.on_user_intent_up()
        elif e.deltaY > 0:
            self.follower.on_user_intent_down(self.scroller.scrollHeight, e.timeStamp)

    def _on_pointer_down(self, e: Any) -> None:
        """A press on the scrollbar (outside the client box) or the middle button's
        autoscroll: what scrolls while it is held is the reader's doing."""
        if e.pointerType == "touch":
            return  # (a finger counts once it drags: touchmove)
        s = self.scroller
        if self._target == js.window:  # the page's own scrollbar, at the window's edge
            on_bar = e.clientX >= s.clientWidth or e.clientY >= s.clientHeight
        else:
            on_bar = e.target == s and (e.offsetX >= s.clientWidth or e.offsetY >= s.clientHeight)
        if on_bar or e.button == 1:
            self.follower.hold(True)

    def _on_pointer_up(self, e: Any) -> None:
        if e.pointerType != "touch":
            self.follower.hold(False)

    def _on_key(self, e: Any) -> None:
        if e.key in UP_KEYS or (e.key == " " and e.shiftKey):  # (Shift+Space: a page up)
            self.follower.on_user_intent_up()
        elif e.key in DOWN_KEYS:
            self.follower.on_user_intent_down(self.scroller.scrollHeight, e.timeStamp)


def js_passive() -> Any:
    """``{passive: true}``: these listeners never cancel the reader's scrolling."""
    from .dom import js_obj

    return js_obj({"passive": True})
