"""JavaScript values from Python, for the browser package's calls into JS (fetch headers and
options, listener options)."""

from __future__ import annotations

from typing import Any

import js
from pyodide.ffi import to_js

__all__ = ["js_obj"]


def js_obj(d: dict[str, Any]) -> Any:
    """A plain JS object (not a Map) from a dict, for fetch headers and options."""
    return to_js(d, dict_converter=js.Object.fromEntries)
