"""The public paths that moved still import, for one release, and say where to go instead:
``pysse.page.call`` (``ChatCall``'s home until the page's packages were cut by purpose into
``pysse.call``, ``pysse.chats`` and ``pysse.app``; issue #45). An embedder's page imports
``ChatCall`` from ``pysse.browser``, whose path never moved."""

from __future__ import annotations

import importlib
import sys

import pytest


def fresh_import(name: str) -> object:
    """``name`` imported anew (a module runs its warning once, when first imported)."""
    for loaded in [m for m in sys.modules if m == "pysse.page" or m.startswith("pysse.page.")]:
        del sys.modules[loaded]
    return importlib.import_module(name)


def test_the_old_call_path_imports_and_warns() -> None:
    from pysse.call import call

    with pytest.warns(DeprecationWarning, match="removed in the next release") as caught:
        old = fresh_import("pysse.page.call")
    assert any("pysse.browser" in str(w.message) for w in caught)  # where to go instead
    for name in ("ChatCall", "ChatResult", "CallListener", "Timeouts", "Net", "Probe"):
        assert getattr(old, name) is getattr(call, name), name
    assert set(old.__all__) == set(call.__all__)  # type: ignore[attr-defined]


def test_the_old_package_warns() -> None:
    with pytest.warns(DeprecationWarning, match=r"pysse\.page is deprecated.*next release"):
        fresh_import("pysse.page")


def test_the_new_paths_do_not_warn(recwarn: pytest.WarningsRecorder) -> None:
    for name in ("pysse.call.call", "pysse.chats.conversation", "pysse.app.settings"):
        importlib.import_module(name)
    ours = [w for w in recwarn if "pysse" in str(w.message)]
    assert ours == []
