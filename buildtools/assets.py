"""The page's boot assets, made at build time and cached in ``.cache/boot`` by content hash.

What the page boots from (``web/boot.js`` reads the manifest this writes into index.html):

* ``plain``: the stdlib and the wheels as zips put on ``sys.path``, for a normal interpreter
  start: only what the page can import (``trace_imports.py``: what its boot imports, and
  every import statement that code could still run), laid out by ``layout.py``: bytecode
  made by Pyodide itself where boot imports it (compiling ~150 stdlib modules from source
  was most of the old boot's 2-3 s freeze), sources where it rarely does. The full sources
  as they are when Node cannot run.
* ``snapshot``: a memory snapshot with the page's modules already imported, and "lazy" zips
  (without those modules) for what the page may import later. The page falls back to
  ``plain`` whenever the snapshot cannot be used.
* ``lazy`` bundles: what a lexer (``lexer:ALIAS``, for each allowed language not in
  ``BOOT_LANGUAGES``) or math (``math:latex2mathml``) adds to the boot set, fetched when an
  answer first needs it (``pysse.browser.lazy_assets``, ``pysse.render.lazy``).

Every step is keyed by the hash of its inputs (Pyodide's files, the wheels, these tools), so a
second build reuses everything and a change to pysse rebuilds its trace, zips and snapshot.
A failing step is logged and the site is built without what it would have made.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from .patches import patch_wheel

HERE = Path(__file__).resolve().parent
NODE_TOOL = HERE / "pyodide_assets.mjs"
TOOLS = (
    NODE_TOOL,
    HERE / "trace_imports.py",
    HERE / "layout.py",
    HERE / "snapshot_prepare.py",
    HERE / "patches.py",
)
# Where the page writes each zip in Pyodide's file system (on sys.path in this order). Part of
# the snapshot: a restored interpreter finds its modules' zips at these paths.
PYTHON_TAG = "314"  # Pyodide 314.0.7's CPython: the loader mounts /lib/python314.zip
LIB_ZIP = "/lib/pysse-lib.zip"  # the third-party wheels: change with their versions
APP_ZIP = "/lib/pysse-app.zip"  # pysse: changes with every commit
LAZY_ROOT = "/lib/lazy"  # where the page extracts lazy bundles (pysse.browser.lazy_assets)
# Languages whose lexers are in the boot set (and the snapshot). Measured (docs/boot.md,
# "Lazy resources"): a lexer bundle is requested when its fence *opens* and arrives while the
# fence streams (~2-70 KB, one request), so even Python's costs nobody a visible delay; in
# the boot set it would cost every first visit its bytes. "text" is a few hundred bytes.
BOOT_LANGUAGES = ("text",)
# How each group of modules is written (layout.py), measured in docs/boot.md: bytecode for
# what boot imports (its source costs ~4 s more CPU in Node to compile at start) and for the
# lazy bundles (a lexer's source compiles in up to 0.5 s, its bytecode imports in 30 ms);
# the source for the safety margin, which is imported rarely or never (~45% the bytes).
FORMS = {"boot": "pyc", "margin": "py", "lazy": "pyc"}


@dataclass(frozen=True)
class Zip:
    file: Path
    fs_path: str


@dataclass(frozen=True)
class Bundle:
    """A lazy resource's zip: extracted into ``LAZY_ROOT``; ``packages`` are boot packages it
    adds modules to (their ``__path__`` gets the matching directory under the root)."""

    file: Path
    modules: tuple[str, ...]
    packages: tuple[str, ...]


@dataclass(frozen=True)
class Snapshot:
    file: Path
    stamp: str  # the snapshot's identity, also inside it (the page compares the two)
    stdlib: Path  # lazy zips: without the modules the snapshot holds
    zips: tuple[Zip, ...]
    delta: dict[str, object] | None = None  # how the page undoes the heap delta (boot.js)
    facts: dict[str, object] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class BootAssets:
    stdlib: Path  # for a normal interpreter start
    zips: tuple[Zip, ...]
    compiled: bool  # .pyc (made by Pyodide) or the sources as they are
    snapshot: Snapshot | None
    problems: tuple[str, ...] = ()  # why something was left out, in words
    lazy: dict[str, Bundle] = field(default_factory=dict)  # resource key -> its bundle
    facts: dict[str, object] = field(default_factory=dict, compare=False)  # the layout's


def digest(*parts: Path | str | bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, Path):
            data = part.read_bytes()
        elif isinstance(part, str):
            data = part.encode()
        else:
            data = part
        h.update(len(data).to_bytes(8, "little") + data)
    return h.hexdigest()[:20]


def cached(dest: Path, make: Callable[[Path], object]) -> Path:
    """``dest`` (a directory), made by ``make(tmp)`` unless an earlier build made it. Written
    under a temporary name and renamed: concurrent builds sharing .cache never see half."""
    if dest.is_dir():
        return dest
    tmp = dest.with_name(f"{dest.name}.tmp{id(make)}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        make(tmp)
        try:
            tmp.rename(dest)
        except OSError:  # another build finished the same thing first
            if not dest.is_dir():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def run_node(node: str, pyodide: Path, *args: str) -> dict[str, object]:
    proc = subprocess.run(
        [node, str(NODE_TOOL), args[0], str(pyodide), *args[1:]],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip()[-2000:] or f"exit code {proc.returncode}")
    facts: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return facts


def source_zip(wheels: Iterable[Path], out: Path) -> None:
    """The wheels merged as they are (sources): the zip for a build without Node."""
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        seen: set[str] = set()
        for whl in wheels:
            with zipfile.ZipFile(whl) as src:
                for info in src.infolist():
                    if info.filename not in seen:
                        seen.add(info.filename)
                        z.writestr(
                            zipfile.ZipInfo(info.filename, (2020, 1, 1, 0, 0, 0)), src.read(info)
                        )


def sources_only(
    root: Path, pyodide: Path, libs: list[Path], app: Path, problems: list[str]
) -> BootAssets:
    """Pyodide's own stdlib and the wheels' sources: boots, compiling them at every start."""
    key = digest(*libs, app, Path(__file__))
    src = cached(root / f"src-{key}", lambda d: source_zip([*libs, app], d / "pysse-app.zip"))
    return BootAssets(
        pyodide / "python_stdlib.zip",
        (Zip(src / "pysse-app.zip", APP_ZIP),),
        compiled=False,
        snapshot=None,
        problems=tuple(problems),
    )


def build(
    cache: Path,
    pyodide: Path,
    libs: list[Path],
    app: Path,
    node: str | None,
    log: Callable[[str], None],
    with_snapshot: bool = True,
    lexers: Iterable[str] = (),
) -> BootAssets:
    """The boot assets for Pyodide in ``pyodide``, the third-party wheels ``libs`` (in load
    order) and pysse's browser wheel ``app``; a lazy bundle for each of ``lexers`` (allowed
    pygments aliases) not in ``BOOT_LANGUAGES``, and for math; the snapshot unless
    ``with_snapshot`` is False."""
    root = cache / "boot"
    root.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    if node is None:
        problems.append("Node.js was not found: no .pyc zips and no snapshot (slower boot)")
        log(f"warning: {problems[-1]}")
        return sources_only(root, pyodide, libs, app, problems)
    tools = digest(*TOOLS)
    try:
        wheels = [*patched(root, libs), app]
        layout = lay_out(root, node, pyodide, wheels, sorted(set(lexers)), tools, log)
    except (RuntimeError, subprocess.TimeoutExpired, OSError, ValueError) as exc:
        problems.append(f"laying out the zips with Pyodide in Node failed ({exc}): no .pyc zips,")
        problems[-1] += " no lazy bundles, no snapshot"
        log(f"warning: {problems[-1]}")
        return sources_only(root, pyodide, libs, app, problems)
    facts = json.loads((layout / "layout.json").read_text())
    stdlib = layout / "python_stdlib.zip"
    zips = (Zip(layout / "pysse-lib.zip", LIB_ZIP), Zip(layout / "pysse-app.zip", APP_ZIP))
    lazy = {
        key: Bundle(layout / b["file"], tuple(b["modules"]), tuple(b["packages"]))
        for key, b in facts["bundles"].items()
    }
    done = BootAssets(stdlib, zips, compiled=True, snapshot=None, lazy=lazy, facts=facts)
    if not with_snapshot:
        return done
    snapshot = None
    runtime = [pyodide / f for f in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm")]
    stamp = digest(tools, *runtime, stdlib, *(z.file for z in zips), *BOOT_LANGUAGES)

    def make_snapshot(d: Path) -> None:
        log("making the memory snapshot with Pyodide (Node)")
        facts = run_node(
            node,
            pyodide,
            "snapshot",
            str(stdlib),
            stamp,
            str(d),
            json.dumps(BOOT_LANGUAGES),
            *(f"{z.fs_path}={z.file}" for z in zips),
        )
        (d / "facts.json").write_text(json.dumps(facts, indent=1))
        log(
            f"  app.snap: {facts['bytes']:,} bytes, {facts['modules']} modules imported,"
            f" checked by a restore in {facts['restore_ms']} ms"
        )

    try:
        d = cached(root / f"snap-{stamp}", make_snapshot)
        snap_facts = json.loads((d / "facts.json").read_text())
        snapshot = Snapshot(
            d / "app.snap",
            stamp,
            d / Path(str(snap_facts["stdlib_fs_path"])).name,
            tuple(Zip(d / Path(z.fs_path).name, z.fs_path) for z in zips),
            snap_facts.get("delta"),
            snap_facts,
        )
    except (RuntimeError, subprocess.TimeoutExpired, OSError, ValueError) as exc:
        problems.append(f"the memory snapshot could not be made ({exc}): the page boots without it")
        log(f"warning: {problems[-1]}")
    return replace(done, snapshot=snapshot, problems=tuple(problems))


def patched(root: Path, libs: list[Path]) -> list[Path]:
    """``libs`` with the build-time patches of ``patches.py`` applied (cached by content)."""
    out = []
    for whl in libs:
        key = digest(whl, HERE / "patches.py")
        d = cached(root / f"patched-{key}", partial(patch_wheel, whl))
        out.append(d / whl.name if (d / whl.name).exists() else whl)
    return out


def lay_out(
    root: Path,
    node: str,
    pyodide: Path,
    wheels: list[Path],
    lexers: list[str],
    tools: str,
    log: Callable[[str], None],
) -> Path:
    """The trace (``trace_imports.py``) and the zips laid out from it (``layout.py``), in one
    cached directory: the boot zips, ``lazy/*.zip`` and ``layout.json``."""
    stdlib = pyodide / "python_stdlib.zip"
    options = {
        "fs_paths": {
            "python_stdlib.zip": f"/lib/python{PYTHON_TAG}.zip",
            "pysse-lib.zip": LIB_ZIP,
            "pysse-app.zip": APP_ZIP,
        },
        "forms": FORMS,
    }
    key = digest(tools, stdlib, *wheels, json.dumps([BOOT_LANGUAGES, lexers, options]))

    def make(d: Path) -> None:
        log("tracing the page's imports with Pyodide (Node)")
        langs, aliases = json.dumps(BOOT_LANGUAGES), json.dumps(lexers)
        trace = d / "trace.json"
        facts = run_node(node, pyodide, "trace", str(trace), langs, aliases, *map(str, wheels))
        log(f"  {facts['boot']} modules at boot, {facts['margin']} more it may import")
        log("laying out the zips and lazy bundles with Pyodide (Node)")
        facts = run_node(
            node, pyodide, "layout", str(trace), str(d), json.dumps(options), *map(str, wheels)
        )
        (d / "layout.json").write_text(json.dumps(facts, indent=1))
        sizes = ", ".join(f"{n} {b:,}" for n, b in dict(facts["zips"]).items())  # type: ignore[call-overload]
        log(f"  {sizes}; {len(facts['bundles'])} lazy bundles")  # type: ignore[arg-type]

    return cached(root / f"layout-{key}", make)
