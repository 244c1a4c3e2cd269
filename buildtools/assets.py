"""The page's boot assets, made at build time and cached in ``.cache/boot`` by content hash.

What the page boots from (``web/boot.js`` reads the manifest this writes into index.html):

* ``plain``: Pyodide's stdlib and the wheels as zips put on ``sys.path``, for a normal
  interpreter start. Compiled to ``.pyc`` by Pyodide itself (``pyodide_assets.mjs``), since
  compiling ~150 stdlib modules from source was most of the old boot's 2-3 s freeze; the
  sources as they are when that cannot run (no Node).
* ``snapshot``: a memory snapshot with the page's modules already imported, and "lazy" zips
  (without those modules) for what the page may import later. The page falls back to
  ``plain`` whenever the snapshot cannot be used.

Every step is keyed by the hash of its inputs (Pyodide's files, the wheels, these tools), so a
second build reuses everything and a change to pysse rebuilds only its zip and the snapshot.
A failing step is logged and the site is built without what it would have made.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
NODE_TOOL = HERE / "pyodide_assets.mjs"
TOOLS = (NODE_TOOL, HERE / "pyc_zip.py", HERE / "snapshot_prepare.py")
# Where the page writes each zip in Pyodide's file system (on sys.path in this order). Part of
# the snapshot: a restored interpreter finds its modules' zips at these paths.
LIB_ZIP = "/lib/pysse-lib.zip"  # the third-party wheels: change with their versions
APP_ZIP = "/lib/pysse-app.zip"  # pysse: changes with every commit


@dataclass(frozen=True)
class Zip:
    file: Path
    fs_path: str


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


def cached(dest: Path, make: Callable[[Path], None]) -> Path:
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
) -> BootAssets:
    """The boot assets for Pyodide in ``pyodide``, the third-party wheels ``libs`` (in load
    order) and pysse's browser wheel ``app``; the snapshot unless ``with_snapshot`` is False."""
    root = cache / "boot"
    root.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    if node is None:
        problems.append("Node.js was not found: no .pyc zips and no snapshot (slower boot)")
        log(f"warning: {problems[-1]}")
        return sources_only(root, pyodide, libs, app, problems)
    tools = digest(*TOOLS)

    def pyc(name: str, key: str, cmd: list[str]) -> Path:
        def make(d: Path) -> None:
            log(f"compiling {name} to .pyc with Pyodide (Node)")
            facts = run_node(node, pyodide, cmd[0], str(d / name), *cmd[1:])
            log(f"  {name}: {facts['bytes']:,} bytes, {facts['entries']} entries, {facts['ms']} ms")

        return cached(root / f"{Path(name).stem}-{key}", make) / name

    try:
        stdlib = pyc("python_stdlib.zip", digest(tools, pyodide / "python_stdlib.zip"), ["stdlib"])
        zips = (
            Zip(pyc("pysse-lib.zip", digest(tools, *libs), ["app", *map(str, libs)]), LIB_ZIP),
            Zip(pyc("pysse-app.zip", digest(tools, app), ["app", str(app)]), APP_ZIP),
        )
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as exc:
        problems.append(f"compiling with Pyodide in Node failed ({exc}): no .pyc zips, no snapshot")
        log(f"warning: {problems[-1]}")
        return sources_only(root, pyodide, libs, app, problems)
    if not with_snapshot:
        return BootAssets(stdlib, zips, compiled=True, snapshot=None, problems=tuple(problems))
    snapshot = None
    runtime = [pyodide / f for f in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm")]
    stamp = digest(tools, *runtime, stdlib, *(z.file for z in zips))

    def make_snapshot(d: Path) -> None:
        log("making the memory snapshot with Pyodide (Node)")
        facts = run_node(
            node,
            pyodide,
            "snapshot",
            str(stdlib),
            stamp,
            str(d),
            *(f"{z.fs_path}={z.file}" for z in zips),
        )
        (d / "facts.json").write_text(json.dumps(facts, indent=1))
        log(
            f"  app.snap: {facts['bytes']:,} bytes, {facts['modules']} modules imported,"
            f" checked by a restore in {facts['restore_ms']} ms"
        )

    try:
        d = cached(root / f"snap-{stamp}", make_snapshot)
        facts = json.loads((d / "facts.json").read_text())
        snapshot = Snapshot(
            d / "app.snap",
            stamp,
            d / Path(str(facts["stdlib_fs_path"])).name,
            tuple(Zip(d / Path(z.fs_path).name, z.fs_path) for z in zips),
            facts.get("delta"),
            facts,
        )
    except (RuntimeError, subprocess.TimeoutExpired, OSError, ValueError) as exc:
        problems.append(f"the memory snapshot could not be made ({exc}): the page boots without it")
        log(f"warning: {problems[-1]}")
    return BootAssets(stdlib, zips, compiled=True, snapshot=snapshot, problems=tuple(problems))
