"""The package's shape, read from its source: the layers' rules (only ``pysse.browser``
imports ``js``/``pyodide``), no import circle inside ``pysse.browser`` (not even under
``TYPE_CHECKING``: the page's parts name the narrow hosts in ``browser/ports.py``, never the
``App``), and no module over 450 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "pysse"
MAX_LINES = 450


def modules() -> list[Path]:
    return sorted(PKG.rglob("*.py"))


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports (absolute names), wherever the import statement is:
    at the top, inside a function, or under ``if TYPE_CHECKING``."""
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    package = parts[:-1]  # a module's package; an __init__'s is its own
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = [*base, *(node.module.split(".") if node.module else [])]
            found.add(".".join(module))
            found.update(".".join([*module, alias.name]) for alias in node.names)  # submodules
    return found


def name_of(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_only_the_browser_package_imports_js_or_pyodide() -> None:
    offenders = [
        name_of(p)
        for p in modules()
        if not name_of(p).startswith("pysse.browser")
        and any(m.split(".")[0] in ("js", "pyodide") for m in imports_of(p))
    ]
    assert offenders == []


def graph(prefix: str) -> dict[str, set[str]]:
    names = {name_of(p): p for p in modules() if name_of(p).startswith(prefix + ".")}
    return {n: {m for m in imports_of(p) if m in names and m != n} for n, p in names.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str]:
    """A cycle in ``edges`` as the list of its modules, or [] (depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(n: str) -> list[str]:
        state[n] = 1
        path.append(n)
        for m in sorted(edges[n]):
            if state.get(m) == 1:
                return [*path[path.index(m) :], m]
            if m not in state and (cycle := visit(m)):
                return cycle
        path.pop()
        state[n] = 2
        return []

    for n in sorted(edges):
        if n not in state and (cycle := visit(n)):
            return cycle
    return []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


@pytest.mark.parametrize("package", ["pysse.browser", "pysse.page", "pysse.render"])
def test_no_import_circle(package: str) -> None:
    edges = graph(package)
    assert len(edges) > 5, package
    assert find_cycle(edges) == []


def test_no_module_is_over_450_lines() -> None:
    long = {name_of(p): n for p in modules() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}
