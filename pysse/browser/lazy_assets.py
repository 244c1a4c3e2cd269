"""The site's lazy bundles (the boot manifest's ``lazy`` section, ``build.py``): fetched when
an answer first needs a language's lexer or math, installed into Pyodide's file system, and
announced to the renderer's registry (``pysse.render.lazy``).

It works in a page and in a dedicated module Web Worker alike: it needs ``js.fetch`` and
asyncio (Pyodide's event loop), never ``window`` or ``document``.

    assets = LazyAssets(manifest["lazy"], base_url)  # base_url: what the manifest's URLs
    assets.declare()                                 # are relative to (the site's root)
    unsubscribe = lazy.REGISTRY.subscribe(on_arrival)  # e.g. request a frame

The manifest's section (``build.py``'s ``lazy_manifest``)::

    {"root": "/lib/lazy",
     "resources": {"lexer:python": {"files": [{"url": "boot/HASH/lexer-python.zip",
                                                "bytes": 75320}],
                                     "packages": ["pygments.lexers"]},
                   "math:latex2mathml": {...}, ...}}

A resource not listed is in the boot set (nothing to fetch). Installing one (``install``):
each file is a stored zip, extracted under ``root`` (real files: latex2mathml opens its
symbol table by path); ``root`` goes on ``sys.path`` (the bundle's top-level packages:
``latex2mathml``, ``xml.etree``'s modules under ``xml``...), and each boot package the bundle
adds modules to (``packages``) gets its directory under ``root`` on its ``__path__``. The
finders of those directories are told that they changed one by one: Python 3.12+'s
``importlib.invalidate_caches()`` imports ``importlib.metadata``, which the page does not ship.

Once a resource arrived, its first use is paid at once (``warm``): the lexer's regular
expressions compiled, latex2mathml's symbol table read.

A fetch that fails (network, HTTP status, a size other than the manifest's) marks the
resource ``failed`` with the reason: the renderer stops waiting and shows what needed it
plain. Bundles are content-addressed (``boot/HASH/``): the HTTP cache keeps them.
"""

from __future__ import annotations

import asyncio
import importlib
import io
import os
import sys
import zipfile
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urljoin

from ..render import lazy

__all__ = ["LazyAssets", "install", "warm"]


def install(root: str, data: bytes, packages: Iterable[str] = ()) -> None:
    """Make a bundle's modules importable: extract the zip ``data`` under ``root``, put
    ``root`` on ``sys.path`` and ``root/<package>`` on each of ``packages``' ``__path__``."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        z.extractall(root)
    if root not in sys.path:
        sys.path.append(root)
    for name in packages:
        package = importlib.import_module(name)
        where = os.path.join(root, *name.split("."))
        if where not in package.__path__:
            package.__path__.append(where)
    for path, finder in list(sys.path_importer_cache.items()):
        if path == root or path.startswith(root + "/"):
            if finder is None:  # looked up before it existed
                del sys.path_importer_cache[path]
            elif hasattr(finder, "invalidate_caches"):
                finder.invalidate_caches()


def warm(resource: lazy.Resource) -> None:
    """Pay a resource's first use now, when it arrives (most often while the fence or the
    formula that asked for it still streams), not when the answer first renders with it:
    a lexer's module imported and its regular expressions compiled (~40-250 ms in Node for
    the common ones), latex2mathml's modules and symbol table loaded. A failure here is
    left for that first use to meet (it shows the block plain)."""
    from ..render import highlight, math

    try:
        if resource[0] == lazy.LEXER:
            highlight.lexer_for(resource[1])
        elif resource == lazy.MATH_RESOURCE:
            math.tex_to_html("x", False)
    except Exception:  # pragma: no cover - the renderer guards its own use
        pass


class LazyAssets:
    """Fetches and installs the bundles of one site's manifest for ``registry``."""

    def __init__(
        self,
        manifest: Mapping[str, Any],
        base_url: str,
        registry: lazy.Registry | None = None,
    ) -> None:
        self.root = str(manifest.get("root") or "/lib/lazy")
        self.resources: dict[str, Mapping[str, Any]] = dict(manifest.get("resources") or {})
        self.base_url = base_url
        self.registry = registry if registry is not None else lazy.REGISTRY
        self.tasks: dict[lazy.Resource, asyncio.Future[None]] = {}
        self.fetched = 0  # bytes fetched so far (for tests and the page's diagnostics)

    def declare(self) -> None:
        """Tell the registry what is missing and that ``load`` fetches it."""
        self.registry.declare([lazy.parse(k) for k in self.resources], self.load)

    def load(self, resource: lazy.Resource) -> None:
        """The registry's loader: start fetching ``resource`` (returns at once)."""
        if resource not in self.tasks:
            self.tasks[resource] = asyncio.ensure_future(self.fetch(resource))

    async def fetch(self, resource: lazy.Resource) -> None:
        """Fetch and install ``resource``; the registry learns that it arrived or failed."""
        entry = self.resources.get(lazy.key(resource))
        if entry is None:
            self.registry.failed(resource, "not in this site's manifest")
            return
        try:
            blobs = await asyncio.gather(*(self._get(f) for f in entry["files"]))
            for data in blobs:
                install(self.root, data, entry.get("packages") or ())
        except Exception as exc:  # a network error, an HTTP status, a damaged file
            self.registry.failed(resource, f"{type(exc).__name__}: {exc}")
            return
        self.registry.arrived(resource)
        warm(resource)

    async def _get(self, file: Mapping[str, Any]) -> bytes:
        import js

        url = urljoin(self.base_url, str(file["url"]))
        resp = await js.fetch(url)
        if not resp.ok:
            raise OSError(f"HTTP {resp.status} for {url}")
        data = bytes((await resp.arrayBuffer()).to_bytes())
        if len(data) != int(file["bytes"]):
            raise ValueError(f"{url} has {len(data)} bytes, not the {file['bytes']} built")
        self.fetched += len(data)
        return data
