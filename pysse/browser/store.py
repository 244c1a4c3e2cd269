"""The chat store's backend in the browser: IndexedDB through ``web/store.js``
(``globalThis.pysseStore``, in the page's worker or its main thread), with Python values at
the boundary: strings stay strings, a recording is ``{"meta": str, "bytes": bytes}`` here and
``{meta, bytes: Uint8Array}`` there, a missing value is None."""

from __future__ import annotations

from typing import Any

from pyodide.ffi import JsProxy, to_js

from .dom import js_obj

__all__ = ["IndexedDBStore"]


def _py(value: Any) -> Any:
    """A stored value as Python: None for undefined/null, a recording as a dict."""
    if value is None or type(value).__name__ == "JsNull":
        return None
    if isinstance(value, JsProxy) and hasattr(value, "meta"):
        return {"meta": str(value.meta), "bytes": value.bytes.to_bytes()}
    return value


def _js(value: Any) -> Any:
    if isinstance(value, dict):
        return js_obj({"meta": value["meta"], "bytes": to_js(value["bytes"])})
    return value


class IndexedDBStore:
    """``pysse.app.platform.StoreBackend`` over ``web/store.js``."""

    def __init__(self, js_store: Any) -> None:
        self.s = js_store

    async def open(self) -> bool:
        return bool(await self.s.open())

    async def get(self, store: str, key: str) -> Any:
        return _py(await self.s.get(store, key))

    async def getMany(self, store: str, keys: list[str]) -> list[Any]:
        return [_py(v) for v in await self.s.getMany(store, to_js(keys))]

    async def put(self, store: str, key: str, value: Any) -> None:
        await self.s.put(store, key, _js(value))

    async def putIfStamp(
        self, chat_id: str, expected: str | None, entries: list[tuple[str, str, Any]]
    ) -> tuple[bool, str | None]:
        got = await self.s.putIfStamp(
            chat_id, expected, to_js([[s, k, _js(v)] for s, k, v in entries])
        )
        seen = got[1]
        return bool(got[0]), None if seen is None else str(seen)

    async def delete(self, store: str, key: str) -> None:
        await getattr(self.s, "del")(store, key)

    async def all(self, store: str) -> list[Any]:
        return [_py(v) for v in await self.s.all(store)]

    async def keys(self, store: str) -> list[str]:
        return [str(k) for k in await self.s.keys(store)]

    async def delPrefix(self, store: str, prefix: str) -> None:
        await self.s.delPrefix(store, prefix)

    async def getPrefix(self, store: str, prefix: str) -> list[Any]:
        return [_py(v) for v in await self.s.getPrefix(store, prefix)]

    async def keysPrefix(self, store: str, prefix: str) -> list[str]:
        return [str(k) for k in await self.s.keysPrefix(store, prefix)]

    async def clear(self) -> None:
        await self.s.clear()
