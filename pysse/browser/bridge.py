"""Finding the JavaScript bridge (``bridge.js``: ``fetch()`` and the read loop) from Python.

The loop is JavaScript because a JS loop calling Python once per chunk costs ~6 us, while
awaiting ``reader.read()`` from Python costs ~20x that (NOTES.md). It ships in two places
from one file: at the bundled site's root, where ``web/app.js`` imports it as an ES module and
sets ``globalThis.pysseBridge``, and inside this package, so ``stream_chat`` works in any page
or worker without a line of JS: the module's text is evaluated once as a function body that
returns its exports. A page whose Content-Security-Policy forbids that (no
``'unsafe-eval'``) imports the module itself, as the bundled page does; the error says how.
"""

from __future__ import annotations

import re
from typing import Any

import js

from ..errors import PysseError

__all__ = ["BridgeUnavailableError", "get_bridge", "module_as_function"]

_EXPORT = re.compile(
    r"^export\s+((?:async\s+)?(?:function\*?|const|let|class)\s+([A-Za-z_$][\w$]*))", re.M
)


class BridgeUnavailableError(PysseError):
    """pysse's JavaScript bridge could not be loaded in this page (its CSP forbids it)."""


def module_as_function(source: str) -> str:
    """An ES module without imports, as an expression that evaluates to its exports (a
    function body: the module's names stay out of the global scope)."""
    names = [m.group(2) for m in _EXPORT.finditer(source)]
    body = _EXPORT.sub(r"\1", source)
    return f"(() => {{\n{body}\nreturn {{ {', '.join(names)} }};\n}})()"


def get_bridge() -> Any:
    """The page's bridge (``globalThis.pysseBridge``), loading pysse's own copy the first
    time when the page has none."""
    found = getattr(js, "pysseBridge", None)
    if found is not None and getattr(found, "start", None) is not None:
        return found
    from importlib import resources  # (not at import: the page's snapshot would carry it)

    from pyodide.code import run_js
    from pyodide.ffi import JsException

    source = resources.files(__package__).joinpath("bridge.js").read_text(encoding="utf-8")
    try:
        bridge = run_js(module_as_function(source))
    except JsException as exc:
        raise BridgeUnavailableError(
            f"could not load pysse's bridge.js ({exc}): this page's Content-Security-Policy "
            "probably forbids evaluating it (no 'unsafe-eval'). Serve bridge.js (python build.py "
            "wheels DIR writes it) and import it from a module file of your own, before "
            'stream_chat: import * as bridge from "./pysse/bridge.js"; '
            "globalThis.pysseBridge = bridge; (an inline script is blocked by the same policy)"
        ) from None
    js.pysseBridge = bridge
    return bridge
