"""Run by Pyodide (in Node, ``pyodide_assets.mjs``) at build time, never by the page: the zips
the page boots from and the lazy bundles, laid out from ``trace_imports.py``'s facts.

* **Boot zips** (``python_stdlib.zip``, ``pysse-lib.zip``, ``pysse-app.zip``): the modules the
  page imports at boot and the read pass's margin, nothing else: no ``email``, no ``http``,
  no ``unittest``, no lexer outside the boot languages, no latex2mathml, and not the modules
  the interpreter imports from its frozen copies (``os``, ``codecs``, ``importlib._bootstrap``
  ...: in a zip they were never read).
* **Lazy bundles**, one zip a resource (``lexer:ALIAS``, ``math:latex2mathml``): the modules
  its run and read passes added to the boot set, with the data files of its packages
  (latex2mathml's symbol table, which it opens by path: the page extracts bundles to real
  files). A lexer module shared by two languages is in both bundles: a language is one
  request, and most answers meet one or two.
* **Laid out for the compressor**: every zip is stored (HTTP's brotli then compresses across
  entries: 20-36% smaller than per-entry deflate), with sorted entries and fixed timestamps
  (the same inputs give the same bytes: content-addressed, cached). Each module is written
  as bytecode (``.pyc``, ``UNCHECKED_HASH``: zipimport never compares it with a source) or
  as its source (``.py``): Python 3.14's bytecode is ~1.8x the source on the wire, and
  compiling the source costs CPU at import. So the form is chosen per group
  (``assets.FORMS``), from measurements (``docs/boot.md``): bytecode where boot or a lazy
  resource imports it, the source where the read pass only may (rarely or never).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import zipfile
from importlib._bootstrap_external import _code_to_hash_pyc  # type: ignore[attr-defined]

EPOCH = (2020, 1, 1, 0, 0, 0)
# Files of a package directory that are not read at run time.
NOT_DATA = (".py", ".pyi", ".pyc", "py.typed", ".md", ".rst", ".yaml", ".ini", ".bat", ".cfg")
NOT_DATA_NAMES = ("LICENSE", "README", "fetch_macholib")
# Packages whose bytecode leaves docstrings out (``strip_docstrings``): pysse's own, which
# never reads ``__doc__`` but in its command line (``__main__.py``, kept whole; never run by
# the page): 15% of its zip on the wire, as it documents itself in docstrings.
STRIPPED = ("pysse/",)
STDLIB_NAME = "python_stdlib.zip"
LIB_NAME = "pysse-lib.zip"
APP_NAME = "pysse-app.zip"


def _is_data(entry: str) -> bool:
    base = entry.rsplit("/", 1)[-1]
    return not (
        entry.endswith(NOT_DATA) or base.startswith(NOT_DATA_NAMES) or ".dist-info/" in entry
    )


def pyc(source: bytes, filename: str, strip: bool = False) -> bytes:
    """``source`` compiled by this interpreter, as an unchecked-hash ``.pyc``; with ``strip``,
    without its module's and functions' docstrings (``strip_docstrings``)."""
    tree: object = source
    if strip:
        tree = strip_docstrings(ast.parse(source))
    code = compile(tree, filename, "exec", dont_inherit=True)  # type: ignore[call-overload]
    return bytes(_code_to_hash_pyc(code, importlib.util.source_hash(source), checked=False))


def strip_docstrings(tree: ast.Module) -> ast.Module:
    """The module's and its functions' docstrings removed (their ``__doc__`` is then None),
    every other line where it was (tracebacks are unchanged). Only for code known never to
    read ``__doc__`` (``STRIPPED``: pysse, checked by tests/test_build.py): ``optimize=2``
    would also drop asserts and every docstring (~14% less on the wire, another program).
    Class docstrings stay: a dataclass without one computes its signature at import."""
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = node.body
        first = body[0] if body else None
        value = first.value if isinstance(first, ast.Expr) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            if len(body) > 1 or isinstance(node, ast.Module):
                del body[0]  # (a ``pass`` would come before ``from __future__``)
            else:
                body[0] = ast.Pass(lineno=value.lineno, col_offset=value.col_offset)
    return tree


class Writer:
    """One stored zip, written in sorted order when closed."""

    def __init__(self, path: str, fs_path: str) -> None:
        self.path = path
        self.fs_path = fs_path  # where the page puts it (tracebacks name the file there)
        self.entries: dict[str, bytes] = {}

    def add_module(self, entry: str, source: bytes, form: str) -> None:
        if form == "pyc":
            filename = f"{self.fs_path}/{entry}"
            try:
                code = pyc(source, filename)
            except SyntaxError:  # kept as it is: importing it fails as it would anyway
                self.entries[entry] = source
                return
            if entry.startswith(STRIPPED) and not entry.endswith("__main__.py"):
                code = pyc(source, filename, strip=True)
            self.entries[entry + "c"] = code
            return
        self.entries[entry] = source

    def close(self) -> int:
        with zipfile.ZipFile(self.path, "w", zipfile.ZIP_STORED) as z:
            for name in sorted(self.entries):
                z.writestr(zipfile.ZipInfo(name, date_time=EPOCH), self.entries[name])
        return os.path.getsize(self.path)


def layout(
    facts_json: str,
    archives: list[str],
    app_archive: int,
    out_dir: str,
    fs_paths: dict[str, str],
    forms: dict[str, str],
) -> str:
    """Write the boot zips and the bundles into ``out_dir`` (``archives``: the trace's, at the
    same indexes, the last one the stdlib; ``app_archive``: pysse's); the facts as JSON."""
    facts = json.loads(facts_json)
    modules: dict[str, tuple[int, str, bool]] = {
        name: (int(i), str(e), bool(p)) for name, (i, e, p) in facts["modules"].items()
    }
    stdlib = len(archives) - 1
    zips = [zipfile.ZipFile(a) for a in archives]
    boot_run = set(facts["boot_run"])
    boot = boot_run | set(facts["boot_read"])
    frozen = set(facts["frozen"])  # imported from the interpreter's frozen copies

    def target(index: int) -> str:
        return STDLIB_NAME if index == stdlib else APP_NAME if index == app_archive else LIB_NAME

    writers = {n: Writer(os.path.join(out_dir, n), fs_paths[n]) for n in fs_paths}
    for name in sorted(boot - frozen):
        index, entry, _ = modules[name]
        form = forms["boot"] if name in boot_run else forms["margin"]
        writers[target(index)].add_module(entry, zips[index].read(entry), form)
    for index, z in enumerate(zips):  # the data files of the boot packages
        dirs = {e.rpartition("/")[0] for i, e, p in modules.values() if p and i == index}
        for entry in z.namelist():
            top = entry.rpartition("/")[0]
            if _is_data(entry) and top in dirs and not entry.endswith("/"):
                owner = top.replace("/", ".")
                if owner in boot:
                    writers[target(index)].entries[entry] = z.read(entry)
    sizes = {n: w.close() for n, w in writers.items()}
    os.makedirs(os.path.join(out_dir, "lazy"), exist_ok=True)
    bundles: dict[str, object] = {}
    for key, found in facts["resources"].items():
        run = set(found["run"])
        names = sorted(run | set(found["read"]))
        if not names:
            continue  # in the boot set already: nothing to fetch
        file = key.replace(":", "-") + ".zip"
        w = Writer(os.path.join(out_dir, "lazy", file), "/lib/lazy")
        packages: set[str] = set()
        for name in names:
            index, entry, is_pkg = modules[name]
            z = zips[index]
            w.add_module(entry, z.read(entry), forms["lazy" if name in run else "margin"])
            parent = name.rpartition(".")[0]
            if parent and parent in boot:
                packages.add(parent)  # a boot package the bundle adds a module to
            if is_pkg:
                top = entry.rpartition("/")[0]
                for data in z.namelist():
                    if data.rpartition("/")[0] == top and _is_data(data) and data != top + "/":
                        w.entries[data] = z.read(data)
        bundles[key] = {
            "file": f"lazy/{file}",
            "bytes": w.close(),
            "modules": names,
            "packages": sorted(packages),
        }
    for z in zips:
        z.close()
    return json.dumps({"zips": sizes, "bundles": bundles, "boot_modules": len(boot)})
