"""Run by Pyodide (in Node, ``pyodide_assets.mjs``) at build time, never by the page: which
modules the page can import at boot, and which modules each lazy resource adds to them.

Why: every byte the page downloads before it is ready costs a phone seconds, and most of
what the full zips held was never imported (the stdlib's ``email``, ``http``, ``unittest``...;
pygments' ~500 lexers, of which the page allows ~45 and needs one per language it meets). So
the boot zips hold what the page can import, and each lazy resource (a language's lexer,
math) gets a bundle of what it adds, fetched when an answer first needs it.

How, in two passes over the same interpreter the page runs (Pyodide's CPython 3.14):

* **run**: everything the page's packages hold is imported and a sample answer rendered
  (as ``snapshot_prepare.py`` does before the snapshot), with the boot languages
  highlighted: ``sys.modules`` is then the boot set. Each resource is then exercised in turn
  (a lexer looked up and run on a sample; latex2mathml converting formulas), what it added
  recorded and dropped from ``sys.modules`` again, so the next one imports its own from
  scratch.
* **read**: the safety margin. Code imports modules inside functions that the run never
  called (an error path, a rarely used method). Every ``import`` statement of every module
  in a set, at any depth (module level, inside functions, in ``try`` blocks), is read from
  the sources (``ast``), and its targets added, recursively. Two kinds of target are not
  followed: a resource's own modules (a lexer module is imported by name only when its
  language is met; that is what the bundle is for), and ``NOT_FOLLOWED`` below, each with
  the reason the page never reaches it. ``importlib.import_module("name")`` with a literal
  name counts as an import; names built at run time cannot be read, which is what the run
  pass is for (``encodings`` is kept whole for the same reason: codecs are imported by the
  name a caller passes).

The result (JSON) names modules; ``layout.py`` turns it into zips.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
import zipfile
from collections.abc import Callable, Container, Iterator, Set

# Imports that the read pass does not follow: each is reached only from code the page never
# runs (read in the 3.14 sources; the reason says where).
NOT_FOLLOWED = {
    "importlib.metadata": "pygments.plugin's entry points, asked only for a lexer, style or "
    "formatter name pygments does not have (every allowed alias is its own); latex2mathml's "
    "__version__ (patches.py writes it in); importlib.invalidate_caches() (3.12+'s "
    "PathFinder), which nothing the page runs calls: lazy_assets.py invalidates the finders "
    "it changes itself",
    "urllib.request": "pathlib's file: URIs (Path.as_uri, from_uri); it brings http.client, "
    "email, ftplib, mimetypes",
    "multiprocessing": "processes: none in Pyodide",
    "concurrent.futures.process": "ProcessPoolExecutor: no processes in Pyodide",
    "concurrent.futures.interpreter": "InterpreterPoolExecutor: no subinterpreters in Pyodide",
    "concurrent.interpreters": "subinterpreters: none in Pyodide",
    "asyncio.windows_events": "imported when sys.platform == 'win32' only",
    "asyncio.windows_utils": "imported when sys.platform == 'win32' only",
    "encodings._win_cp_codecs": "imported when sys.platform == 'win32' only",
    "pyodide._nodesock_transport": "sockets under Node; the page runs in a browser",
    "tarfile": "shutil's make_archive/unpack_archive",
    "py_compile": "zipfile's PyZipFile.writepy",
    "getopt": "base64's command line (main)",
    "statistics": "random's self-test (_test_generator)",
    "_ast_unparse": "ast.unparse",
    "difflib": "argparse's suggestions for a mistyped choice: the page parses no command line",
    "pickle": "logging's network handlers (makePickle): the page logs to the console",
    "tracemalloc": "warnings' allocation traceback, only while tracemalloc traces",
    "pydoc": "help(): interactive only",
    "pdb": "the debugger: interactive only",
    "doctest": "doctests: never run in a page",
    "unittest": "tests: never run in a page",
    "_pyrepl": "the REPL: never started in a page",
}
# Pure-Python fallbacks, imported only when the C module is missing: not followed when this
# interpreter has the C module (checked at build time, not assumed).
FALLBACKS = {
    "_pydatetime": "_datetime",
    "_py_abc": "_abc",
    "_threading_local": "_thread",
    "_pydecimal": "_decimal",
    "_pyio": "_io",
}
# Imported from C, where the read pass cannot see it: kept with what it imports.
FROM_C = {"_strptime": "time.strptime and datetime.strptime import it from C"}


def index(archives: list[str]) -> dict[str, tuple[str, str, bool]]:
    """Module name -> (archive, entry, is package), in ``sys.path`` order (first wins)."""
    found: dict[str, tuple[str, str, bool]] = {}
    for archive in archives:
        with zipfile.ZipFile(archive) as z:
            for entry in z.namelist():
                if not entry.endswith(".py"):
                    continue
                parts = entry[:-3].split("/")
                is_pkg = parts[-1] == "__init__"
                if is_pkg:
                    parts.pop()
                if not parts or not all(p.isidentifier() for p in parts):
                    continue
                found.setdefault(".".join(parts), (archive, entry, is_pkg))
    return found


def parents(name: str) -> list[str]:
    bits = name.split(".")
    return [".".join(bits[:i]) for i in range(1, len(bits))]


def _typing_only(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``): a block that never runs."""
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` without the bodies of ``if TYPE_CHECKING:`` blocks."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and _typing_only(node):
            todo.extend(node.orelse)
        else:
            todo.extend(ast.iter_child_nodes(node))


def imports_of(source: str, name: str, is_pkg: bool, known: Container[str]) -> set[str]:
    """Every module an import statement anywhere in ``source`` names (module ``name``), but
    in ``if TYPE_CHECKING:`` blocks."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    package = name if is_pkg else name.rpartition(".")[0]
    out: set[str] = set()
    for node in _nodes(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".") if package else []
                base = base[: len(base) - node.level + 1] if node.level > 1 else base
                mod = ".".join([*base, *([node.module] if node.module else [])])
            else:
                mod = node.module or ""
            if mod:
                out.add(mod)
            for alias in node.names:  # ``from pkg import submodule``
                if f"{mod}.{alias.name}" in known:
                    out.add(f"{mod}.{alias.name}")
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                (isinstance(node.func, ast.Name) and node.func.id == "__import__")
                or (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
            )
        ):
            out.add(node.args[0].value)
    return {m for m in out if m}


class Reader:
    """The read pass over the sources of ``known`` modules; each module is read once."""

    def __init__(self, known: dict[str, tuple[str, str, bool]]) -> None:
        self.known = known
        self._imports: dict[str, set[str]] = {}
        self._zips: dict[str, zipfile.ZipFile] = {}

    def imports(self, name: str) -> set[str]:
        """What module ``name`` imports (its import statements, and its parent packages)."""
        if name not in self._imports:
            archive, entry, is_pkg = self.known[name]
            z = self._zips.get(archive) or self._zips.setdefault(archive, zipfile.ZipFile(archive))
            source = z.read(entry).decode("utf-8", "replace")
            targets = imports_of(source, name, is_pkg, self.known) | set(parents(name))
            self._imports[name] = {m for t in targets for m in (*parents(t), t)}
        return self._imports[name]

    def closure(self, start: set[str], stop: set[str], done: Set[str] = frozenset()) -> set[str]:
        """``start`` and every module their import statements reach (module docstring), not
        following ``stop`` (names, with everything under them), ``NOT_FOLLOWED``, nor
        ``done`` (a set already closed: what it reaches is known)."""
        blocked = stop | set(NOT_FOLLOWED)

        def follow(m: str) -> bool:
            return m in self.known and not any(p in blocked for p in (*parents(m), m))

        seen: set[str] = set()
        todo = [m for m in start if m in self.known]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            todo.extend(
                m for m in self.imports(name) if m not in seen and m not in done and follow(m)
            )
        return seen


# What exercises each kind of resource: a lexer runs on a bit of everything (strings,
# numbers, comments, tags, variables), latex2mathml converts formulas that reach its
# commands, environments and symbol table.
CODE_SAMPLE = (
    "#!/bin/sh\n# comment\nx = 1 + 2.5e3 * 0x1F  // c /* d */\n"
    's = \'str\' "dq" `bt` $var ${v} @dec\n<tag a="1">&amp;</tag>\n'
    "def f(a, *b): return [a for a in b if a]\n---\n+ added\n- removed\n[section]\nk: v\n"
)
TEX_SAMPLES = (
    r"x^2 + \frac{a}{b} - \sqrt[3]{y} \cdot \alpha_i",
    r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix} \int_0^\infty e^{-x}\,dx",
    r"\text{if } \mathbb{R} \ne \emptyset \quad \sum_{k=1}^{n} k = \binom{n+1}{2}",
    r"\left( \begin{array}{cc} a & b \end{array} \right) \overline{z} \hat{x} \mathrm{d}",
)


def frozen() -> set[str]:
    """Modules this interpreter imports from its frozen copies (``os``, ``codecs``, the
    import system...) whatever the stdlib zip holds: the zips need not carry them."""
    import _imp

    loaded = {
        name
        for name, module in sys.modules.items()
        if getattr(getattr(module, "__spec__", None), "origin", None) == "frozen"
    }
    if "os" not in loaded:  # frozen modules are off (-X frozen_modules=off): zips serve all
        return set()
    return loaded | set(_imp._frozen_module_names())  # type: ignore[attr-defined]


def exercise(work: Callable[[], object]) -> set[str]:
    """The modules ``work()`` imports, dropped from ``sys.modules`` again (with the caches
    that remember them), so that the next resource imports its own from scratch."""
    from pygments import lexers as lexer_package

    from pysse.render import highlight, math

    before = set(sys.modules)
    work()
    added = set(sys.modules) - before
    for name in added:
        del sys.modules[name]
    lexer_package._lexer_cache.clear()
    highlight._done.clear()
    math._converted.cache_clear()
    math._unzip_latex2mathml.cache_clear()
    return added


def run(
    zips: list[str],
    stdlib_zip: str,
    boot_languages: list[str],
    lexers: list[str],
    boot: Callable[[list[str]], object],
) -> str:
    """The run pass, then the read pass; the facts as JSON (``layout.py`` reads them).
    ``zips`` go on ``sys.path`` (holding sources); ``boot(languages)`` imports what the
    page's boot imports (``snapshot_prepare.py``); ``lexers`` are the allowed aliases."""
    archives = [*zips, stdlib_zip]
    sys.path[0:0] = zips
    boot(boot_languages)
    boot_run = set(sys.modules)
    from pysse.render import highlight, math

    def lexer(alias: str) -> Callable[[], object]:
        return lambda: highlight.HighlightJob(CODE_SAMPLE, alias).run()

    added = {f"lexer:{alias}": exercise(lexer(alias)) for alias in lexers}
    added["math:latex2mathml"] = exercise(lambda: [math.tex_to_html(t, True) for t in TEX_SAMPLES])

    known = index(archives)
    # Not followed from the boot set: lexer modules and latex2mathml (imported by name, when
    # a resource is needed: that is what the bundles are for), and the pure-Python fallbacks
    # of C modules this interpreter has.
    lazy = {m for m in known if m.startswith("pygments.lexers.") and m not in boot_run}
    lazy.add("latex2mathml")
    lazy.update(py for py, c in FALLBACKS.items() if importlib.util.find_spec(c) is not None)
    reader = Reader(known)
    # codecs are imported by the name a caller passes: encodings is kept whole (~55 KB)
    codecs = {m for m in known if m.startswith("encodings.") and m not in NOT_FOLLOWED}
    boot_read = reader.closure(boot_run | set(FROM_C) | codecs, lazy)
    booted = boot_run | boot_read
    resources: dict[str, dict[str, list[str]]] = {}
    for key, modules in added.items():
        read = reader.closure(modules, lazy - modules, booted) | modules
        resources[key] = {
            "run": sorted(m for m in modules - booted if m in known),
            "read": sorted(read - modules - booted),
        }
    return json.dumps(
        {
            "frozen": sorted(frozen() & set(known)),
            "boot_run": sorted(m for m in boot_run if m in known),
            "boot_read": sorted(boot_read - boot_run),
            "resources": resources,
            "modules": {m: [archives.index(a), e, p] for m, (a, e, p) in known.items()},
            "archives": archives,
        }
    )
