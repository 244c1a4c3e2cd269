"""Optional resources the renderer can do without until they arrive: a language's lexer
(``("lexer", ALIAS)``, ALIAS a value of ``highlight.ALLOWED``) and math's converter
(``("math", "latex2mathml")``).

Why: the page's first visit downloads what it boots from before it is ready, and most of
pygments (~45 lexers the page allows, ~75% of its library zip) and latex2mathml are needed
only by some answers. So the site ships them as lazy bundles (``buildtools/layout.py``),
fetched when an answer first needs one; until then a fence is shown plain and a formula as
its source, as they are today when pygments or a conversion fails.

The registry is pure Python and knows nothing of how a resource is fetched: browser code
(``pysse.browser.lazy_assets``) ``declare()`` s the site's lazy resources with a loader,
and tells the registry when one ``arrived()`` or ``failed()``. Nothing is declared by
default (CPython, tests, pages built without lazy bundles): every resource counts as
available and the renderer imports it as it always did.

The contract:

* ``want(r)``: True if ``r`` can be used now; if not, it is requested (the loader is called
  once per resource, and must only start the fetch: it may call ``arrived`` at once).
* ``pending(r)``: declared, not arrived, not failed: the renderer waits for it
  (``streaming.py``: the blocks that need it stay unsettled).
* ``failed(r, why)``: it will not come (a network error, a 404); the renderer stops
  waiting and shows what needs it plain for good, as a one-shot ``render()`` then does.
* ``version`` grows by one with each arrival or failure, and ``subscribe(fn)`` calls
  ``fn(r)`` then: a page's cue to call ``update()`` on an answer that ``waiting`` on it.
* ``recording()``: the resources a render found missing (``want`` returned False), for a
  caller that keeps rendered HTML (a cache of finished answers) and must know what it lacks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

__all__ = ["LEXER", "MATH", "MATH_RESOURCE", "REGISTRY", "Registry", "Resource", "key", "parse"]

Resource = tuple[str, str]
LEXER = "lexer"
MATH = "math"
MATH_RESOURCE: Resource = (MATH, "latex2mathml")


def key(resource: Resource) -> str:
    """``("lexer", "python")`` -> ``"lexer:python"``: the site manifest's spelling."""
    return f"{resource[0]}:{resource[1]}"


def parse(text: str) -> Resource:
    """``"lexer:python"`` -> ``("lexer", "python")``."""
    kind, _, name = text.partition(":")
    if not (kind and name):
        raise ValueError(f"not a resource key: {text!r}")
    return kind, name


class Registry:
    """Which optional resources are here, which are awaited, and who fetches them."""

    def __init__(self) -> None:
        self._missing: set[Resource] = set()
        self._requested: set[Resource] = set()
        self._failed: dict[Resource, str] = {}
        self._loader: Callable[[Resource], object] | None = None
        self._listeners: list[Callable[[Resource], object]] = []
        self._recorders: list[set[Resource]] = []
        self.version = 0

    def declare(self, resources: Iterable[Resource], loader: Callable[[Resource], object]) -> None:
        """``resources`` are not installed yet; ``loader(r)`` starts fetching one."""
        self._missing.update(resources)
        self._loader = loader

    @property
    def lazy(self) -> bool:
        """Something declared has not arrived (or failed): renderers must look."""
        return bool(self._missing)

    def available(self, resource: Resource) -> bool:
        return resource not in self._missing

    def pending(self, resource: Resource) -> bool:
        """Declared, not arrived, not failed: worth waiting for."""
        return resource in self._missing and resource not in self._failed

    def requested(self, resource: Resource) -> bool:
        return resource in self._requested

    def why(self, resource: Resource) -> str | None:
        """Why ``resource`` failed, or None."""
        return self._failed.get(resource)

    def want(self, resource: Resource) -> bool:
        """Whether ``resource`` can be used now; requested if it cannot."""
        if resource not in self._missing:
            return True
        self.request(resource)
        if resource in self._missing:
            for seen in self._recorders:
                seen.add(resource)
            return False
        return True  # the loader had it at once

    def request(self, resource: Resource) -> None:
        """Start fetching ``resource`` (once; nothing if it is here or failed)."""
        if resource not in self._missing or resource in self._requested:
            return
        self._requested.add(resource)
        if self._loader is not None:
            self._loader(resource)

    def arrived(self, resource: Resource) -> None:
        """``resource`` is installed: usable from now on."""
        self._missing.discard(resource)
        self._failed.pop(resource, None)
        self._changed(resource)

    def failed(self, resource: Resource, why: str) -> None:
        """``resource`` will not come: stop waiting for it (what needs it stays plain)."""
        if resource in self._missing:
            self._failed[resource] = why
            self._changed(resource)

    def subscribe(self, fn: Callable[[Resource], object]) -> Callable[[], None]:
        """Call ``fn(resource)`` on each arrival or failure; returns the unsubscribe."""
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn) if fn in self._listeners else None

    @contextmanager
    def recording(self) -> Iterator[set[Resource]]:
        """The resources found missing (``want`` False) while the block runs."""
        seen: set[Resource] = set()
        self._recorders.append(seen)
        try:
            yield seen
        finally:
            self._recorders.remove(seen)

    def _changed(self, resource: Resource) -> None:
        self.version += 1
        for fn in list(self._listeners):
            fn(resource)


REGISTRY = Registry()  # the process's one registry (the page declares into it)
