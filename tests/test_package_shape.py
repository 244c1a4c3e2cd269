"""The package's shape, read from its source: the layers' rules (only ``pysse.browser``
imports ``js``/``pyodide``; the page's packages stand in floors, and an import only points to
a lower floor), no import circle anywhere in ``pysse`` (not even under ``TYPE_CHECKING`` or
inside a function: the page's parts name the narrow hosts in ``app/ports.py``, never the
``App``; a store's interface never names its Redis implementation), and no module over 450
lines.

Why the whole package as one graph: a circle is two modules that each need the other, so
neither layer is where the folder listing puts it; a circle between two packages is as much
a tangle as one inside a package. Every module found under ``pysse/`` is in the graph, so a
package added later is covered without touching this file."""

from __future__ import annotations

import ast
from pathlib import Path

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
            subs = {a.name for a in node.names if is_module([*module, a.name])}
            found.update(".".join([*module, name]) for name in subs)
            # ``from . import sibling`` is ``import pkg.sibling``: it needs the package's
            # __init__ no more than any module of the package does; a name from it does
            if len(subs) < len(node.names):
                found.add(".".join(module))
    return found


def is_module(parts: list[str]) -> bool:
    """Whether ``parts`` (``["pysse", "render", "lazy"]``) names a module or package in the tree."""
    base = PKG.parent.joinpath(*parts)
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


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
    """The imports among ``prefix`` and its modules: each module's edges to the others."""
    names = {
        name_of(p): p
        for p in modules()
        if name_of(p) == prefix or name_of(p).startswith(prefix + ".")
    }
    return {n: {m for m in imports_of(p) if m in names and m != n} for n, p in names.items()}


def packages() -> list[str]:
    """Every package under ``pysse/``, from the file tree (a folder with an ``__init__.py``)."""
    return sorted(name_of(p) for p in PKG.rglob("__init__.py"))


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


def knots(edges: dict[str, set[str]]) -> list[set[str]]:
    """The groups of modules that reach each other through imports (strongly connected
    components of more than one module, Tarjan's algorithm): each holds at least one circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(n: str) -> None:
        index[n] = low[n] = len(index)
        stack.append(n)
        for m in sorted(edges[n]):
            if m not in index:
                visit(m)
                low[n] = min(low[n], low[m])
            elif m in stack:
                low[n] = min(low[n], index[m])
        if low[n] == index[n]:
            knot = set(stack[stack.index(n) :])
            del stack[stack.index(n) :]
            if len(knot) > 1:
                found.append(knot)

    for n in sorted(edges):
        if n not in index:
            visit(n)
    return found


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One circle from each knot, so a failure names every tangle at once, not the first."""
    return [find_cycle({n: edges[n] & knot for n in knot}) for knot in knots(edges)]


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []
    two = {"a": {"b"}, "b": {"a", "c"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}}
    assert sorted(circles(two)) == [["a", "b", "a"], ["c", "d", "e", "c"]]
    assert circles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_the_graph_holds_every_package_and_their_imports() -> None:
    """The graph the next test searches is the whole tree, with its edges: an empty or
    partial graph would pass it for nothing."""
    edges = graph("pysse")
    assert {
        "pysse",
        "pysse.app",
        "pysse.browser",
        "pysse.call",
        "pysse.chats",
        "pysse.server",
        "pysse.providers.encoders",
    } <= set(packages())
    assert set(packages()) <= set(edges)
    assert "pysse.sse" in edges["pysse.chat"]  # a plain import
    assert "pysse.providers.encoders" in edges["pysse.providers"]  # under TYPE_CHECKING


def test_no_import_circle_anywhere_in_pysse() -> None:
    found = circles(graph("pysse"))
    assert found == [], "import circles:\n" + "\n".join(" -> ".join(c) for c in found)


# The page's packages, floor by floor from the bottom: a module imports only from floors below
# its own (and from its own package). Every other part of ``pysse`` (sse, events, chat,
# providers, render, view, inspector, testing, ...) is the ground under all of them: it
# imports none of these. Two packages on one floor do not import each other: the streaming
# call knows no conversation, the chats know no call and no rendering.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("pysse.call", "pysse.chats"),  # one answer's call, for any page; the chats as data
    ("pysse.app",),  # the bundled page: its controller over both
    ("pysse.browser", "pysse.server", "pysse.page"),  # its IO; the relay; page: deprecated
)


def room_of(module: str) -> str:
    """The part of ``pysse`` a module belongs to: its package under ``pysse`` (``pysse.call``
    for ``pysse.call.net``), or the top-level module itself (``pysse.chat``)."""
    return ".".join(module.split(".")[:2])


def floor_of(room: str) -> int:
    """0 for the ground, else the room's floor in ``FLOORS`` (1 is the lowest)."""
    return next((i + 1 for i, rooms in enumerate(FLOORS) if room in rooms), 0)


def test_every_floor_names_a_package_that_exists() -> None:
    """A package renamed or removed cannot leave its floor's rule checking nothing."""
    assert {room for rooms in FLOORS for room in rooms} <= set(packages())


def test_imports_only_point_down_the_floors() -> None:
    """No import runs back up: a module on the ground never imports the page's packages, a
    package never imports its own floor or one above (``chats`` never ``call``, ``call``
    never ``app``, ``app`` never ``browser``)."""
    up = sorted(
        f"{a} -> {b}"
        for a, targets in graph("pysse").items()
        for b in targets
        if room_of(a) != room_of(b)
        and floor_of(room_of(b)) > 0
        and floor_of(room_of(b)) >= floor_of(room_of(a))
    )
    assert up == [], "imports that run up or across the floors:\n" + "\n".join(up)


def test_the_floor_check_finds_an_import_that_runs_up() -> None:
    assert floor_of("pysse.chats") == floor_of("pysse.call") == 1
    assert floor_of("pysse.app") == 2 and floor_of("pysse.browser") == 3
    assert floor_of(room_of("pysse.render.frames")) == 0
    assert room_of("pysse.call.net") == "pysse.call" and room_of("pysse.chat") == "pysse.chat"


def test_no_module_is_over_450_lines() -> None:
    long = {name_of(p): n for p in modules() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}
