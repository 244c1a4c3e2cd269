"""An element's attribute views in the page's model DOM (``element.py``): ``dataset``,
``style``, ``classList``, as the DOM spells them. Writes go through the element, so each is an
op for the view."""

from __future__ import annotations

import re
from typing import Any, Protocol

__all__ = ["ClassList", "DataSet", "Element", "Style", "data_attr"]


class Element(Protocol):
    """What the views need of an element (``element.Element``)."""

    attrs: dict[str, str]
    className: str

    def setAttribute(self, name: str, value: object) -> None: ...
    def _op(self, name: str, *args: Any) -> None: ...


_CAMEL = re.compile(r"[A-Z]")


def data_attr(name: str) -> str:
    """``dataset.answerId`` -> ``data-answer-id``."""
    return "data-" + _CAMEL.sub(lambda m: "-" + m.group(0).lower(), name)


class DataSet:
    """``el.dataset``: ``data-*`` attributes by camelCase name; None where there is none."""

    __slots__ = ("_el",)
    _el: Element

    def __init__(self, el: Element) -> None:
        object.__setattr__(self, "_el", el)

    def __getattr__(self, name: str) -> str | None:
        el: Element = object.__getattribute__(self, "_el")
        return el.attrs.get(data_attr(name))

    def __setattr__(self, name: str, value: object) -> None:
        el: Element = object.__getattribute__(self, "_el")
        el.setAttribute(data_attr(name), str(value))


class Style:
    """``el.style``: inline properties set by camelCase name (only written, read back here)."""

    __slots__ = ("_el", "_values")
    _el: Element
    _values: dict[str, str]

    def __init__(self, el: Element) -> None:
        object.__setattr__(self, "_el", el)
        object.__setattr__(self, "_values", {})

    def __getattr__(self, name: str) -> str:
        values: dict[str, str] = object.__getattribute__(self, "_values")
        return values.get(name, "")

    def __setattr__(self, name: str, value: object) -> None:
        values: dict[str, str] = object.__getattribute__(self, "_values")
        if values.get(name, "") != str(value):
            values[name] = str(value)
            el: Element = object.__getattribute__(self, "_el")
            el._op("style", name, str(value))


class ClassList:
    __slots__ = ("_el",)

    def __init__(self, el: Element) -> None:
        self._el = el

    def _names(self) -> list[str]:
        return self._el.attrs.get("class", "").split()

    def contains(self, name: str) -> bool:
        return name in self._names()

    def add(self, name: str) -> None:
        if name not in self._names():
            self._el.className = " ".join([*self._names(), name])

    def remove(self, name: str) -> None:
        if name in self._names():
            self._el.className = " ".join(n for n in self._names() if n != name)

    def toggle(self, name: str, on: bool | None = None) -> None:
        (self.add if (not self.contains(name) if on is None else on) else self.remove)(name)
