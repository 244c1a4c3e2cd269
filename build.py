#!/usr/bin/env python3
"""pysse's one entry point.

    python build.py serve [--host 127.0.0.1] [--port 8000] [--upstream URL ...]
                                     build the site and serve it with the demo relay
    python build.py site DIR         write the static site alone (for any static host)
    python build.py wheels DIR       pysse for your own page: its wheels, a simple index for
                                     micropip, install.js, bridge.js, dom_writer.js
    python build.py examples DIR     the embedding examples (docs/embedding.md), ready to serve
    python build.py test [PYTEST_ARGS...]   lint, type-check and run every test
    python build.py bench [--only NAME]  run the benchmarks and print their tables
    python build.py fuzz --minutes N run the fuzz targets for N minutes
    python build.py screenshots      the README's screenshots (docs/*.png), made again

On first use it makes a virtual environment in ``.venv`` and installs what the command needs
from PyPI, fetches Pyodide from npm and the browser-side wheels from PyPI into ``.cache``, and
builds the pysse wheel. Later runs reuse all of it (keyed by content hashes) and start in
seconds. Only the standard library is used before the virtual environment exists.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import venv
import zipfile
from pathlib import Path
from typing import Any

from buildtools.assets import LAZY_ROOT, BootAssets
from buildtools.assets import build as boot_assets
from buildtools.compress import compress_site, link_or_copy, upgrade
from buildtools.examples import EXAMPLES, write_examples
from buildtools.wheel_index import browser_metadata, vendor_micropip, write_index
from pysse.server.command_line import OneLineParser, port_number  # standard library only

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
CACHE = ROOT / ".cache"
BUILD = ROOT / "build"
SITE = BUILD / "site"

PYODIDE_VERSION = "314.0.7"
PYODIDE_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
AXE_VERSION = "4.14.1"  # axe-core, for the accessibility tests only: never part of the site
# puppeteer-core drives Firefox over WebDriver BiDi in the engine matrix (tests/engines/);
# tests/engines/find.py looks for it where fetch_puppeteer_core puts it
PUPPETEER_VERSION = "25.16.0"
# The official Node SDKs the tests run as clients of the relays (tests/test_sdk_node.py)
NODE_SDKS = ("openai@7.59.0", "@anthropic-ai/sdk@1.15.0")
# Loaded by URL in this order: loadPackage() does no dependency resolution for URLs.
BROWSER_WHEELS = (
    "mdurl==0.1.2",
    "markdown-it-py==4.3.0",
    "mdit-py-plugins==0.7.0",
    "latex2mathml==3.81.1",
    "pygments==2.21.0",
)
# micropip for pages that install pysse (docs/embedding.md): the npm pyodide package lists it in
# its lock but does not ship it. The version must be the lock's (buildtools.wheel_index).
MICROPIP = "micropip==0.11.1"
PYSCRIPT_VERSION = "0.7.31"  # @pyscript/core from npm, for examples/pyscript
# mermaid from npm: its one-file bundle, fetched by the page on its first diagram (web/diagrams.js)
MERMAID_VERSION = "12.4.0"
EXTRAS = {
    "serve": "serve,markdown,site",
    "site": "markdown,site",
    "wheels": "markdown",
    "examples": "markdown",
    "test": "test",
    "bench": "test,bench",
    "fuzz": "test,fuzz",
    "screenshots": "test",
}


def log(msg: str) -> None:
    print(f"[build] {msg}", flush=True)


def run(cmd: list[str], **kw: object) -> None:
    subprocess.run(cmd, check=True, **kw)  # type: ignore[call-overload]


# -- environment -------------------------------------------------------------------------------


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_venv(extras: str) -> None:
    """Re-run this script inside .venv with pysse[extras] installed (once per pyproject)."""
    if os.environ.get("PYSSE_BUILD_IN_VENV") == "1":
        return
    py = venv_python()
    if not py.exists():
        log(f"creating {VENV.relative_to(ROOT)}")
        venv.EnvBuilder(with_pip=True).create(VENV)
    key = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + extras.encode()).hexdigest()
    stamp = VENV / f".pysse-installed-{key[:16]}"
    if not stamp.exists():
        log(f"installing pysse[{extras}] into .venv (first run only)")
        run(
            [
                str(py),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "-e",
                f"{ROOT}[{extras}]",
            ]
        )
        stamp.write_text(extras)
    env = dict(os.environ, PYSSE_BUILD_IN_VENV="1")
    os.execve(str(py), [str(py), str(Path(__file__).resolve()), *sys.argv[1:]], env)


def apt_install(*packages: str) -> bool:
    """Install Debian packages when we can (root with apt-get); False if we cannot."""
    if not (shutil.which("apt-get") and hasattr(os, "geteuid") and os.geteuid() == 0):
        return False
    log(f"installing Debian's {' '.join(packages)} (apt-get)")
    run(["apt-get", "update", "-qq"])
    run(["apt-get", "install", "-y", "-qq", *packages])
    return True


def find_chromium(install: bool = True) -> str:
    """The testing kit's lookup ($PYSSE_CHROMIUM, then chromium on PATH); else install
    Debian's package when root. A $PYSSE_CHROMIUM that names no program stops here: installing
    Debian's Chromium would quietly test another browser than the one asked for."""
    from pysse.errors import ConfigError
    from pysse.testing.browser import find_chromium as lookup

    try:
        return lookup()
    except ConfigError as exc:
        if os.environ.get("PYSSE_CHROMIUM"):
            raise SystemExit(f"build.py: {exc}") from None
        if install and apt_install("chromium") and Path("/usr/bin/chromium").exists():
            return "/usr/bin/chromium"
        raise SystemExit(str(exc)) from None


def find_redis_server(install: bool = True) -> str:
    """Debian's redis-server, for the multi-relay tests ($PYSSE_REDIS_SERVER, then PATH);
    installed when root, like Chromium."""
    explicit = os.environ.get("PYSSE_REDIS_SERVER")
    if explicit:  # never passed over for another redis-server (as $PYSSE_CHROMIUM)
        found = shutil.which(explicit)
        if found is None:
            raise SystemExit(
                f"build.py: PYSSE_REDIS_SERVER={explicit} is not an executable program: point "
                "it at redis-server (e.g. /usr/bin/redis-server) or unset it"
            )
        return found
    found = shutil.which("redis-server")
    if found:
        return found
    if install and apt_install("redis-server") and shutil.which("redis-server"):
        return str(shutil.which("redis-server"))
    raise SystemExit(
        "redis-server is needed for the multi-relay tests: apt-get install redis-server "
        "(or set PYSSE_REDIS_SERVER to its path)"
    )


def find_engines(install: bool = True) -> dict[str, str]:
    """Firefox ESR and WebKitGTK (with Xvfb) for the engine matrix, as environment
    variables for the tests; Debian's packages installed when root, as for Chromium. A
    missing engine stops the run with how to install it: the matrix never shrinks silently.
    ``PYSSE_ENGINES=chromium,webkit`` chooses the engines yourself (the others are not
    looked for)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from engines import EngineUnavailable
    from engines.find import find_firefox, find_webkit

    packages = {"firefox": ["firefox-esr"], "webkit": ["webkit2gtk-driver", "xvfb"]}
    lookups = {"firefox": find_firefox, "webkit": find_webkit}
    wanted = [e.strip() for e in os.environ.get("PYSSE_ENGINES", "").split(",") if e.strip()]
    chosen = wanted or ["chromium", *lookups]
    env = {"PYSSE_PUPPETEER_CORE": str(fetch_puppeteer_core())} if "firefox" in chosen else {}
    for name in chosen:
        if name not in lookups:
            continue
        try:
            lookups[name]()
        except EngineUnavailable as exc:
            if not (install and apt_install(*packages[name]) and _found(lookups[name])):
                raise SystemExit(
                    f"{exc}: the engine matrix needs it (apt-get install "
                    f"{' '.join(packages[name])}, or leave it out with "
                    f"PYSSE_ENGINES={','.join(e for e in chosen if e != name)})"
                ) from None
    env["PYSSE_ENGINES"] = ",".join(chosen)
    return env


def _found(lookup: Any) -> bool:
    try:
        lookup()
    except Exception:
        return False
    return True


def fetch_puppeteer_core() -> Path:
    """puppeteer-core from npm, installed once into .cache/puppeteer-core-VERSION/ (no
    browser download: the core package never fetches one)."""
    dest = CACHE / f"puppeteer-core-{PUPPETEER_VERSION}"
    package = dest / "node_modules" / "puppeteer-core"
    if (package / "package.json").exists():
        return package
    find_node()
    dest.mkdir(parents=True, exist_ok=True)
    log(f"npm install puppeteer-core@{PUPPETEER_VERSION}")
    npm = shutil.which("npm") or "npm"
    run(
        [
            npm,
            "install",
            "--no-audit",
            "--no-fund",
            "--silent",
            "--no-save",
            "--prefix",
            str(dest),
            f"puppeteer-core@{PUPPETEER_VERSION}",
        ],
    )
    return package


def find_node() -> str:
    node = shutil.which("node")
    if node:
        return node
    if apt_install("nodejs", "npm"):
        node = shutil.which("node")
        if node:
            return node
    raise SystemExit("Node.js and npm are needed to fetch Pyodide from npm: install them first.")


# -- the static site ---------------------------------------------------------------------------


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch_pyodide() -> Path:
    """The npm package, unpacked once into .cache/pyodide-VERSION/."""
    dest = CACHE / f"pyodide-{PYODIDE_VERSION}"
    if all((dest / f).exists() for f in PYODIDE_FILES):
        return dest
    find_node()
    CACHE.mkdir(exist_ok=True)
    tgz = CACHE / f"pyodide-{PYODIDE_VERSION}.tgz"
    if not tgz.exists():
        log(f"npm pack pyodide@{PYODIDE_VERSION}")
        npm = shutil.which("npm") or "npm"
        out = subprocess.run(
            [
                npm,
                "pack",
                f"pyodide@{PYODIDE_VERSION}",
                "--silent",
                "--pack-destination",
                str(CACHE),
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        produced = CACHE / out.splitlines()[-1]
        if produced != tgz:
            produced.rename(tgz)
    tmp = dest.with_suffix(".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with tarfile.open(tgz) as tar:
        for member in tar.getmembers():
            name = member.name.removeprefix("package/")
            if name in PYODIDE_FILES:
                member.name = name
                tar.extract(member, tmp, filter="data")
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    return dest


def fetch_axe() -> Path:
    """axe-core's ``axe.min.js`` from npm, unpacked once into .cache/axe-core-VERSION/. The
    tests inject it into pages (it never ships in the site)."""
    dest = CACHE / f"axe-core-{AXE_VERSION}" / "axe.min.js"
    if dest.exists():
        return dest
    find_node()
    tmp = CACHE / f"axe-core-{AXE_VERSION}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    log(f"npm pack axe-core@{AXE_VERSION}")
    npm = shutil.which("npm") or "npm"
    out = subprocess.run(
        [npm, "pack", f"axe-core@{AXE_VERSION}", "--silent", "--pack-destination", str(tmp)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    with tarfile.open(tmp / out.splitlines()[-1]) as tar:
        member = tar.getmember("package/axe.min.js")
        member.name = "axe.min.js"
        tar.extract(member, tmp, filter="data")
    dest.parent.mkdir(parents=True, exist_ok=True)
    (tmp / "axe.min.js").replace(dest)
    shutil.rmtree(tmp, ignore_errors=True)
    return dest


def fetch_node_sdks() -> Path:
    """The official Node SDKs (``NODE_SDKS``) installed once from npm into
    .cache/node-sdks-KEY/ (their ``node_modules``); the tests load them from there."""
    key = hashlib.sha256(" ".join(NODE_SDKS).encode()).hexdigest()[:12]
    dest = CACHE / f"node-sdks-{key}"
    if (dest / "node_modules" / ".pysse-complete").exists():
        return dest
    find_node()
    tmp = CACHE / f"node-sdks-{key}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    log(f"npm install {' '.join(NODE_SDKS)}")
    npm = shutil.which("npm") or "npm"
    quiet = ["--silent", "--no-audit", "--no-fund", "--no-save"]
    subprocess.run([npm, "install", *quiet, "--prefix", str(tmp), *NODE_SDKS], check=True)
    (tmp / "node_modules" / ".pysse-complete").write_text(" ".join(NODE_SDKS))
    shutil.rmtree(dest, ignore_errors=True)
    tmp.replace(dest)
    return dest


def fetch_browser_wheels(specs: tuple[str, ...] = BROWSER_WHEELS) -> list[Path]:
    """Pure-Python wheels from PyPI for the browser side, in load order."""
    dest = CACHE / "wheels"
    dest.mkdir(parents=True, exist_ok=True)
    found: list[Path] = []
    missing = []
    for spec in specs:
        name, version = spec.split("==")
        stem = name.replace("-", "_")
        hits = sorted(dest.glob(f"{stem}-{version}-*.whl"))
        if hits:
            found.append(hits[0])
        else:
            missing.append(spec)
    if missing:
        log(f"pip download {' '.join(missing)}")
        run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--disable-pip-version-check",
                "--no-deps",
                "--only-binary=:all:",
                "--python-version",
                "3.14",
                "-d",
                str(dest),
                *missing,
            ]
        )
        return fetch_browser_wheels(specs)
    return found


def source_hash() -> str:
    h = hashlib.sha256((ROOT / "pyproject.toml").read_bytes())
    for p in sorted((ROOT / "pysse").rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(ROOT)).encode() + p.read_bytes())
    return h.hexdigest()[:16]


def build_pysse_wheel() -> Path:
    dest = CACHE / "pysse-wheel" / source_hash()
    hits = sorted(dest.glob("pysse-*.whl"))
    if hits:
        return hits[0]
    log("building the pysse wheel")
    dest.mkdir(parents=True, exist_ok=True)
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--disable-pip-version-check",
            "--no-deps",
            "-w",
            str(dest),
            str(ROOT),
        ]
    )
    return sorted(dest.glob("pysse-*.whl"))[0]


# The JavaScript halves of pysse.browser: in the wheel (stream_chat loads them in any page) and
# at the site's root (the bundled page imports them as ES modules).
BROWSER_JS = ("bridge.js", "dom_writer.js")
# Beside the wheels for embedders (build.py wheels): install.js runs before pysse is installed,
# so it is never in the wheel.
EMBED_JS = (*BROWSER_JS, "install.js")

# Server-side code never runs in the page: the wheel Pyodide loads leaves it out, and so its
# entry points (console scripts, the pytest plugin) that name it.
BROWSER_EXCLUDE = (
    "pysse/server/",
    "pysse/testing/",
    "pysse/providers/encoders/",
    "pysse/browser/install.js",
)
BROWSER_WHEEL_LAYOUT = "browser-2"  # bump when browser_wheel() changes what it writes


def browser_wheel(full: Path) -> Path:
    """``full`` without the server-side packages and entry points, its METADATA holding only
    the ``markdown`` extra (``buildtools.wheel_index.browser_metadata``: what micropip
    resolves for ``pysse[markdown]``), its RECORD rewritten to match."""
    out = full.parent / BROWSER_WHEEL_LAYOUT / full.name
    if out.exists():
        return out
    out.parent.mkdir(exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with zipfile.ZipFile(full) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        record = next(n for n in src.namelist() if n.endswith(".dist-info/RECORD"))
        rows = []
        for info in src.infolist():
            name = info.filename
            if name.startswith(BROWSER_EXCLUDE) or name == record:
                continue
            if name.endswith(".dist-info/entry_points.txt"):
                continue
            data = src.read(info)
            if name.endswith(".dist-info/METADATA"):
                data = browser_metadata(data.decode("utf-8")).encode("utf-8")
            dst.writestr(info, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            rows.append(f"{info.filename},sha256={digest.decode()},{len(data)}")
        stamp = zipfile.ZipInfo(record, date_time=(2020, 2, 2, 0, 0, 0))  # reproducible
        dst.writestr(stamp, "\n".join([*rows, f"{record},,"]) + "\n", zipfile.ZIP_DEFLATED)
    tmp.rename(out)
    return out


def write_wheels(dest: Path) -> dict[str, object]:
    """pysse for any page running Pyodide (``buildtools.wheel_index``): the browser wheel and
    the wheels it needs with a simple index for micropip, micropip's own wheel, and the JS
    modules. Returns the wheel list (``wheels.json``)."""
    libs = fetch_browser_wheels()
    app = browser_wheel(build_pysse_wheel())
    (micropip,) = fetch_browser_wheels((MICROPIP,))
    js = [ROOT / "pysse" / "browser" / name for name in EMBED_JS]
    return write_index(dest, [*libs, app], micropip, js)


def vendor_pyodide(dest: Path) -> Path:
    """Pyodide from npm into ``dest`` (hard links to the cache), with micropip beside it and
    its lock entry rewritten, so ``pyodide.loadPackage("micropip")`` works offline."""
    shutil.copytree(fetch_pyodide(), dest, copy_function=link_or_copy)
    (micropip,) = fetch_browser_wheels((MICROPIP,))
    vendor_micropip(dest, micropip)
    return dest


def format_options() -> str:
    """The page's Format menu, from the provider registry (never a hand-kept copy)."""
    from html import escape

    from pysse.providers import PROVIDERS

    return "\n".join(
        f'        <option value="{escape(name)}">{escape(p.label)}</option>'
        for name, p in PROVIDERS.items()
    )


def place(site: Path, src: Path, name: str | None = None) -> str:
    """``src`` in the site at a content-addressed URL (``boot/HASH/NAME``: immutable)."""
    d = site / "boot" / sha(src)[:12]
    d.mkdir(parents=True, exist_ok=True)
    link_or_copy(src, d / (name or src.name))
    return f"boot/{d.name}/{name or src.name}"


def boot_manifest(
    site: Path, pyodide: Path, boot: BootAssets, diagrams: Path | None = None
) -> dict[str, object]:
    """What web/boot.js boots from: URLs and decoded sizes (for the progress bar); and
    where the page finds Mermaid on its first diagram (``diagrams``: web/diagrams.js)."""

    def entry(src: Path) -> dict[str, object]:
        return {"url": place(site, src), "bytes": src.stat().st_size}

    lock = json.loads((pyodide / "pyodide-lock.json").read_text())
    manifest: dict[str, object] = {
        "pyodide": f"pyodide/{PYODIDE_VERSION}/",
        "wasmBytes": (pyodide / "pyodide.asm.wasm").stat().st_size,
        "lockInfo": lock["info"],
        "zipPaths": [z.fs_path for z in boot.zips],
        "plain": {"stdlib": entry(boot.stdlib), "zips": [entry(z.file) for z in boot.zips]},
        "snapshot": None,
        "lazy": lazy_manifest(site, boot),
    }
    if diagrams is not None:
        manifest["diagrams"] = entry(diagrams)
    snap = boot.snapshot
    if snap is not None:
        manifest["snapshot"] = {
            **entry(snap.file),
            "stamp": snap.stamp,
            "delta": snap.delta,
            "stdlib": entry(snap.stdlib),
            "zips": [entry(z.file) for z in snap.zips],
        }
    return manifest


def lazy_manifest(site: Path, boot: BootAssets) -> dict[str, object]:
    """The lazy resources (``pysse.render.lazy``): for each, the zips to fetch and extract
    into ``root`` (a directory on ``sys.path``) and the boot packages whose ``__path__`` must
    also reach into it; ``pysse.browser.lazy_assets`` installs them. A resource that is
    not listed is in the boot set."""

    def entry(src: Path) -> dict[str, object]:
        return {"url": place(site, src), "bytes": src.stat().st_size}

    return {
        "root": LAZY_ROOT,
        "resources": {
            key: {"files": [entry(b.file)], "packages": list(b.packages)}
            for key, b in sorted(boot.lazy.items())
        },
    }


def head_links(manifest: dict[str, object]) -> list[str]:
    """Start every download while the HTML is parsed, not one after another as boot needs
    them: the main thread's modules, and the runtime's wasm and what the plain start reads (a
    first visit starts plain: web/boot.js ``choosePath``; a later one restores the snapshot
    the service worker cached, and these come from the caches). The worker that boots Python
    reads them from the HTTP cache: immutable, same origin."""
    base = str(manifest["pyodide"])
    run: Any = manifest["plain"]
    fetches = [f"{base}pyodide.asm.wasm", run["stdlib"]["url"], *(z["url"] for z in run["zips"])]
    modules = ["view.js", "dom_writer.js"]
    data = json.dumps(manifest, separators=(",", ":")).replace("</", "<\\/")
    return [
        *(f'<link rel="modulepreload" href="{m}">' for m in modules),
        *(f'<link rel="preload" href="{u}" as="fetch" crossorigin>' for u in fetches),
        f'<script type="application/json" id="pysse-boot">{data}</script>',
    ]


def build_site(
    out: Path = SITE,
    relay: str | None = "",
    fmt: str | None = None,
    best: bool = False,
    snapshot: bool = True,
) -> Path:
    """Lay out the static site: the page, Pyodide, the boot assets (``buildtools.assets``:
    .pyc zips and a memory snapshot, listed in a manifest inside index.html), the wheels, and
    site.json with the relay the page sends to (``relay``) and its format (``fmt``); then
    ``.br``/``.gz`` siblings of every file (brotli quality 11 with ``best``, else faster).
    ``snapshot=False`` leaves the snapshot out: ~4 MB less to download, a slower start.

    Versioned assets live under content-addressed paths (``pyodide/VERSION/``,
    ``wheels/HASH/``, ``boot/HASH/``) so a server can mark them immutable."""
    pyodide = fetch_pyodide()
    libs = fetch_browser_wheels()
    app = browser_wheel(build_pysse_wheel())
    from pysse.render.highlight import ALLOWED

    node = shutil.which("node")
    boot = boot_assets(CACHE, pyodide, libs, app, node, log, snapshot, ALLOWED.values())
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(ROOT / "web", tmp)
    for js_module in BROWSER_JS:  # shipped in the wheel too (embedders): one copy, one source
        shutil.copy2(ROOT / "pysse" / "browser" / js_module, tmp / js_module)
    vendor_pyodide(tmp / "pyodide" / PYODIDE_VERSION)
    runner = tmp / "runner.html"
    runner.write_text(runner_page(runner.read_text(), (ROOT / "pysse" / "runner.py").read_text()))
    # The wheels the page loads are those of the index embedders install from (wheels/simple/).
    listed: Any = write_wheels(tmp / "wheels")["wheels"]
    urls = [f"wheels/{w['url']}" for w in listed]
    config: dict[str, object] = {
        "pyodide": f"pyodide/{PYODIDE_VERSION}/",
        "wheels": urls,
        "relay": relay or "",
    }
    if fmt:
        config["format"] = fmt
    from pysse.app.next_request import first_visit

    first = first_visit(config)  # a first visit's message goes out before Python is up
    if first is not None:
        config["first"] = first
    (tmp / "site.json").write_text(json.dumps(config, indent=1))
    mermaid = fetch_npm(f"mermaid@{MERMAID_VERSION}", "dist") / "mermaid.min.js"
    manifest = boot_manifest(tmp, pyodide, boot, mermaid)
    index = tmp / "index.html"
    index.write_text(
        index.read_text()
        .replace(
            "<!--boot: build.py writes preload links and the boot manifest here-->",
            "\n".join(head_links(manifest)),
        )
        .replace(
            "<!--formats: build.py writes one option per provider format (pysse.providers) here-->",
            format_options(),
        )
    )
    write_service_worker(tmp, manifest)
    compress_site(tmp, CACHE, best, log)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    kind = "snapshot" if boot.snapshot else ("plain, .pyc" if boot.compiled else "plain, sources")
    log(f"site ready in {out} (boot: {kind})")
    return out


def runner_page(html: str, runner_py: str) -> str:
    """web/runner.html (the Run sandbox) with ``pysse/runner.py``'s source inside it, and its
    policy naming its one executable script by hash: a sandboxed document's origin is opaque,
    and what ``'self'`` matches there differs between engines; a hash means the same in all."""
    if "</" in runner_py or "<!--" in runner_py:  # (a script element's text is raw: no escapes)
        raise ValueError("pysse/runner.py must not hold '</' or '<!--' (runner.html inlines it)")
    html = html.replace("RUNNER_PY", runner_py, 1)
    start = html.rindex("<script>") + len("<script>")
    script = html[start : html.index("</script>", start)]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    return html.replace("'sha256-RUNNER'", f"'sha256-{digest}'", 1)


def write_service_worker(site: Path, manifest: dict[str, object]) -> None:
    """``sw.js`` with this build's lists (web/sw.js): the page's own files, what the page boots
    from (cached when the service worker installs, once the first visit is ready: the plain
    start's files from the HTTP cache, the snapshot's from the network, idle, for the next
    visit), every content-addressed file (older builds' files are dropped), and the build's
    identity (a new one makes the browser install the new worker)."""
    shell = sorted(
        p.name
        for p in site.iterdir()
        if p.is_file() and p.suffix in (".html", ".js", ".css", ".json") and p.name != "sw.js"
    )
    base = str(manifest["pyodide"])
    runtime = [f"{base}{f}" for f in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm")]
    for name in ("plain", "snapshot"):  # the plain start's (in the HTTP cache after a first
        run: Any = manifest[name]  # visit), the snapshot's (fetched idle, for the next visit)
        if run:
            runtime += [run["stdlib"]["url"], *(z["url"] for z in run["zips"])]
            runtime += [run["url"]] if name == "snapshot" else []
    keep = sorted(
        str(p.relative_to(site))
        for folder in ("boot", "pyodide")
        for p in (site / folder).rglob("*")
        if p.is_file() and p.suffix not in (".br", ".gz")
    )
    h = hashlib.sha256()
    for name in shell:
        h.update(name.encode() + b"\0" + (site / name).read_bytes())
    h.update("\n".join(keep).encode())
    lists = {
        "BUILD": h.hexdigest()[:16],
        "SHELL": ["./", *shell],  # ("./": index.html as the page's address; "" would be sw.js)
        "RUNTIME": runtime,
        "KEEP": keep,
        # each content-addressed file's sha256: the service worker keeps only those bytes
        "HASHES": {p: sha(site / p) for p in keep},
    }
    sw = site / "sw.js"
    text = sw.read_text()
    for name, value in lists.items():
        start = text.index(f"const {name} = ")
        end = text.index(";", start)
        text = text[:start] + f"const {name} = {json.dumps(value)}" + text[end:]
    sw.write_text(text)


def fetch_npm(spec: str, keep: str) -> Path:
    """An npm package's ``keep`` directory (``package/KEEP``), unpacked once into .cache."""
    name = spec.replace("@", "", 1).replace("/", "-").replace("@", "-")
    dest = CACHE / f"npm-{name}"
    if dest.is_dir():
        return dest
    find_node()
    tmp = CACHE / f"npm-{name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    log(f"npm pack {spec}")
    npm = shutil.which("npm") or "npm"
    out = subprocess.run(
        [npm, "pack", spec, "--silent", "--pack-destination", str(tmp)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    unpacked = tmp / "unpacked"
    with tarfile.open(tmp / out.splitlines()[-1]) as tar:
        prefix = f"package/{keep}/"
        for member in tar.getmembers():
            if member.name.startswith(prefix) or member.name == "package/LICENSE":
                member.name = member.name.removeprefix(prefix).removeprefix("package/")
                tar.extract(member, unpacked, filter="data")
    unpacked.rename(dest)
    shutil.rmtree(tmp, ignore_errors=True)
    return dest


def build_examples(out: Path) -> Path:
    """The embedding examples (``examples/``) ready to serve from ``out``: Pyodide (with
    micropip), pysse's wheels and index (``out/pysse/``), PyScript from npm, each example."""
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    vendor_pyodide(tmp / "pyodide" / PYODIDE_VERSION)
    write_wheels(tmp / "pysse")
    pyscript = fetch_npm(f"@pyscript/core@{PYSCRIPT_VERSION}", "dist")
    write_examples(ROOT / "examples", tmp, pyscript, tmp / "pyscript-core" / PYSCRIPT_VERSION)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    log(f"examples ready in {out} ({', '.join(EXAMPLES)}): serve it, open /")
    return out


# -- commands ------------------------------------------------------------------------------------


def serve_startup(args: argparse.Namespace) -> Any:
    """What ``serve`` checks before it builds the site (minutes): the relay's options with
    ``--upstream``, its store and CA bundle, then the port and host
    (``pysse.server.startup``). A problem is one line on stderr naming the setting and the
    fix, and exit status 2: never a traceback, never after the build."""
    from pysse.errors import ConfigError
    from pysse.server.command_line import exit_with
    from pysse.server.startup import start_server

    try:
        return start_server(args, relay=bool(args.upstream))
    except ConfigError as exc:
        exit_with("build.py serve", str(exc))


def cmd_serve(args: argparse.Namespace) -> int:
    from pysse.server.app import create_app
    from pysse.server.serve import ServerLimits, run

    start = serve_startup(args)
    site = build_site()
    relay = start.relay
    # Served at once at brotli 9; brotli 11 swapped in as it is ready (buildtools/compress.py)
    threading.Thread(target=upgrade, args=(site, CACHE, log), daemon=True).start()
    app = create_app(site, relay=relay, forwarder=start.forwarder)
    if relay:
        from pysse.server.relay import upstreams_line

        where = f" (relay at /relay -> {upstreams_line(relay)})"
    else:
        where = ""
    print(f"\n  pysse chat page: http://{args.host}:{args.port}/{where}\n", flush=True)
    limits = ServerLimits(max_connections=args.max_connections, header_timeout=args.header_timeout)
    run(app, args.host, args.port, limits, sockets=start.sockets)
    return 0


def site_relay_check(relay: str, fmt: str | None) -> str | None:
    """What is wrong with ``site --relay/--format``, in words, or None."""
    from pysse.call.request import check_relay_url
    from pysse.providers import FORMATS

    if fmt is not None and fmt not in FORMATS:
        return f"--format {fmt!r}: expected one of {', '.join(FORMATS)}"
    return check_relay_url(relay) if relay else None


def cmd_site(args: argparse.Namespace) -> int:
    problem = site_relay_check(args.relay, args.format)
    if problem:  # one line and status 2, as the relay's and serve's configuration errors
        print(f"build.py site: {problem}", file=sys.stderr)
        return 2
    build_site(
        Path(args.dir).resolve(),
        relay=args.relay,
        fmt=args.format,
        best=True,
        snapshot=not args.no_snapshot,
    )
    return 0


def cmd_wheels(args: argparse.Namespace) -> int:
    dest = Path(args.dir).resolve()
    manifest: Any = write_wheels(dest)
    total = sum(int(w["bytes"]) for w in manifest["wheels"])
    log(f"{len(manifest['wheels'])} wheels ({total / 1e6:.2f} MB) and their index in {dest}")
    log(f'micropip.install("pysse[markdown]", index_urls=[".../{dest.name}/simple"])')
    return 0


def cmd_examples(args: argparse.Namespace) -> int:
    build_examples(Path(args.dir).resolve())
    return 0


LINTED = ("pysse", "buildtools", "tests", "bench", "examples", "build.py")


def cmd_test(args: argparse.Namespace) -> int:
    chromium = find_chromium()
    redis_server = find_redis_server()
    find_node()
    engines = find_engines()
    site = build_site()
    examples = build_examples(BUILD / "examples")
    env = dict(
        os.environ,
        **engines,
        PYSSE_CHROMIUM=chromium,
        PYSSE_REDIS_SERVER=redis_server,
        PYSSE_SITE=str(site),
        PYSSE_EXAMPLES=str(examples),
        PYSSE_PYODIDE=str(fetch_pyodide()),
        PYSSE_AXE=str(fetch_axe()),
        PYSSE_NODE_SDKS=str(fetch_node_sdks()),
    )
    pytest = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
    steps: list[tuple[list[str], dict[str, str]]] = [
        ([sys.executable, "-m", "ruff", "check", *LINTED], env),
        ([sys.executable, "-m", "ruff", "format", "--check", *LINTED], env),
        ([sys.executable, "-m", "mypy", "--strict", "pysse", "buildtools"], env),
        # (the whole suite prints its 25 slowest tests: what to slim when CI nears its hour)
        ([*pytest, *(args.pytest_args or ["--durations=25"])], env),
    ]
    if not args.pytest_args:  # the page's main-thread mode: its smaller matrix
        main_env = dict(env, PYSSE_PAGE_THREAD="main")
        steps.append(([*pytest, "-m", "browser", *MAIN_THREAD_MATRIX], main_env))
    # Every step runs, a failed one too: CI then shows every failure of a run at once (the
    # main-thread matrix used to go unseen behind a failure of the whole suite).
    failed: list[tuple[str, int]] = []
    for step, step_env in steps:
        extra = " (PYSSE_PAGE_THREAD=main)" if step_env is not env else ""
        shown = " ".join(Path(step[0]).name if i == 0 else s for i, s in enumerate(step)) + extra
        log(shown)
        code = subprocess.run(step, cwd=ROOT, env=step_env).returncode
        if code != 0:
            failed.append((shown, code))
    for shown, code in failed:
        log(f"FAILED (exit {code}): {shown}")
    return failed[0][1] if failed else 0


# The browser tests run again with the page's Python on its main thread (its fallback mode,
# ?thread=main): streaming, failures, Stop, settings, the actions, attachments (scaled in the
# thread Python runs in), chats, restores, search and a Python block run and kept, in Chromium.
# The whole suite runs in the default mode (a Web Worker), in every engine.
MAIN_THREAD_MATRIX = (
    "tests/test_browser.py",
    "tests/test_browser_actions.py",
    "tests/test_browser_attach.py",
    "tests/test_browser_chats.py",
    "tests/test_browser_restore.py",
    "tests/test_browser_search.py",
    "tests/test_browser_takeout.py",
    "tests/test_browser_runner.py::test_run_prints_and_shows_a_traceback_of_the_users_code",
    "tests/test_browser_runner.py::test_a_run_s_output_is_kept_with_the_answer_through_a_reload",
)


def cmd_bench(args: argparse.Namespace) -> int:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if args.only in (None, "parser"):
        run([sys.executable, "-m", "bench.bench_parser"], cwd=ROOT, env=env)
    if args.only in (None, "markdown"):  # CPython, Pyodide in Node, throttled Chromium
        site = build_site()
        md_env = dict(env, PYSSE_CHROMIUM=find_chromium(), PYSSE_SITE=str(site))
        run([sys.executable, "-m", "bench.bench_markdown"], cwd=ROOT, env=md_env)
    if args.only in (None, "relay"):
        run([sys.executable, "-m", "bench.bench_relay"], cwd=ROOT, env=env)
    if args.only in (None, "resume"):
        env.update(PYSSE_REDIS_SERVER=find_redis_server())
        run([sys.executable, "-m", "bench.bench_resume"], cwd=ROOT, env=env)
    if args.only in (None, "scale"):  # 5,000 slow streams; one relay process, then several
        env.update(PYSSE_REDIS_SERVER=find_redis_server())
        run([sys.executable, "-m", "bench.bench_scale"], cwd=ROOT, env=env)
    if args.only in (None, "browser", "boot"):
        site = build_site(best=True)
        env.update(PYSSE_CHROMIUM=find_chromium(), PYSSE_SITE=str(site))
    if args.only in (None, "boot"):
        plain = build_site(BUILD / "site-plain", best=True, snapshot=False)
        env.update(PYSSE_SITE_PLAIN=str(plain))
        run([sys.executable, "-m", "bench.bench_boot"], cwd=ROOT, env=env)
    if args.only in (None, "browser"):
        run([sys.executable, "-m", "bench.bench_browser"], cwd=ROOT, env=env)
    if args.only in (None, "embed"):
        examples = build_examples(BUILD / "examples")
        embed_env = dict(env, PYSSE_CHROMIUM=find_chromium(), PYSSE_EXAMPLES=str(examples))
        run([sys.executable, "-m", "bench.bench_embed"], cwd=ROOT, env=embed_env)
    if args.only in (None, "search"):  # issue #23: search across 500 long chats
        site = build_site(BUILD / "site-search")  # its own: a test run may rebuild build/site
        env.update(PYSSE_CHROMIUM=find_chromium(), PYSSE_SITE=str(site))
        run([sys.executable, "-m", "bench.bench_search"], cwd=ROOT, env=env)
    if args.only in (None, "phone"):  # issue #28: long tasks, input, memory at 1x and 4x
        # brotli 9, as the tests' site: the page's speed, not its bytes, is measured here
        env.update(PYSSE_CHROMIUM=find_chromium(), PYSSE_SITE=str(build_site()))
        if args.baseline:
            env.update(PYSSE_SITE_BASELINE=str(baseline_site(args.baseline)))
        run([sys.executable, "-m", "bench.bench_phone"], cwd=ROOT, env=env)
    if args.only in (None, "render", "peer"):  # #36: style, layout, paint; #41: streamdown
        env.update(PYSSE_CHROMIUM=find_chromium(), PYSSE_SITE=str(build_site()))
        if args.only == "peer":  # the mixed answer: pysse's two modes and streamdown
            env.setdefault("PYSSE_RENDER_STREAMS", "mixed")
            env.setdefault("PYSSE_RENDER_PARTS", "chromium,peer")
            env.update(PYSSE_BENCH_ONLY="peer")
        env.update(PYSSE_PUPPETEER_CORE=str(fetch_puppeteer_core()))
        if args.baseline:
            env.update(PYSSE_SITE_BASELINE=str(baseline_site(args.baseline)))
            env.update(PYSSE_BASELINE_REF=args.baseline)  # for the command it prints
        run([sys.executable, "-m", "bench.bench_render"], cwd=ROOT, env=env)
    if args.only in (None, "network"):  # issue #33: a first visit on a phone's network
        sites = {  # brotli 11: what is deployed
            "snapshot": build_site(best=True),
            "plain": build_site(BUILD / "site-plain", best=True, snapshot=False),
        }
        if args.baseline:
            sites["baseline snapshot"] = baseline_site(args.baseline, best=True)
            sites["baseline plain"] = baseline_site(args.baseline, best=True, snapshot=False)
        listed = json.dumps({name: str(path) for name, path in sites.items()})
        net_env = dict(env, PYSSE_CHROMIUM=find_chromium(), PYSSE_NETWORK_SITES=listed)
        run([sys.executable, "-m", "bench.bench_network"], cwd=ROOT, env=net_env)
    if args.only in (None, "worker"):  # issue #28 lever 4: Python in a Web Worker or not
        examples = build_examples(BUILD / "examples")
        worker_env = dict(env, PYSSE_CHROMIUM=find_chromium(), PYSSE_EXAMPLES=str(examples))
        run([sys.executable, "-m", "bench.bench_worker"], cwd=ROOT, env=worker_env)
    return 0


def baseline_site(ref: str, best: bool = False, snapshot: bool = True) -> Path:
    """The site as git revision ``ref`` builds it (for a benchmark's side-by-side baseline):
    its files from ``git archive``, built by its own build.py (``build_site``, as the tests
    build; ``best``: brotli 11, as deployed; ``snapshot=False``: ``--no-snapshot``) with
    this venv and this cache (both keyed by content hashes), kept in build/ per commit."""
    sha = subprocess.run(
        ["git", "rev-parse", "--verify", f"{ref}^{{commit}}"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    out = BUILD / f"baseline-{sha[:12]}{'-best' if best else ''}{'' if snapshot else '-plain'}"
    if (out / "index.html").exists():
        return out
    src = BUILD / f"baseline-src-{sha[:12]}"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    log(f"building the baseline site of {ref} ({sha[:12]}) in {out.relative_to(ROOT)}")
    archive = subprocess.run(["git", "archive", sha], cwd=ROOT, check=True, capture_output=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(src, filter="data")
    (src / ".cache").symlink_to(CACHE)
    env = dict(os.environ, PYSSE_BUILD_IN_VENV="1")
    code = (
        "import sys, build; from pathlib import Path; "
        "build.build_site(Path(sys.argv[1]), best=sys.argv[2] == '1', snapshot=sys.argv[3] == '1')"
    )
    flags = ["1" if best else "0", "1" if snapshot else "0"]
    run([sys.executable, "-c", code, str(out), *flags], cwd=src, env=env)
    return out


def cmd_screenshots(args: argparse.Namespace) -> int:
    site = build_site()
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYSSE_SITE=str(site))
    env["PYSSE_CHROMIUM"] = find_chromium()
    run([sys.executable, "-m", "bench.screenshots"], cwd=ROOT, env=env)
    return 0


def cmd_fuzz(args: argparse.Namespace) -> int:
    seconds = int(args.minutes * 60)
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYSSE_FUZZ_SECONDS=str(seconds))
    if not args.atheris:
        return subprocess.run([sys.executable, "-m", "bench.fuzz"], cwd=ROOT, env=env).returncode
    corpus = CACHE / "fuzz-corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    for f in (ROOT / "tests" / "fixtures").glob("*.sse"):
        shutil.copy2(f, corpus / f.name)
    cmd = [
        sys.executable,
        "bench/fuzz_atheris.py",
        f"-max_total_time={seconds}",
        "-rss_limit_mb=2048",
        str(corpus),
    ]
    return subprocess.run(cmd, cwd=ROOT, env=env).returncode


def _relay_arguments(ap: argparse.ArgumentParser) -> bool:
    """serve's relay options: pysse-relay's own (one definition). Before the venv exists they
    cannot be imported (no httpx yet): False, and the re-run inside the venv parses them."""
    try:
        from pysse.server.relay import add_relay_arguments
    except ImportError:
        return False
    add_relay_arguments(ap, upstream_required=False)
    return True


def parser() -> argparse.ArgumentParser:
    """build.py's command line. A wrong option is one line and exit status 2
    (``OneLineParser``), for every command and before the virtual environment exists."""
    ap = OneLineParser(prog="build.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve", help="build and serve the chat page with the demo relay")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=port_number, default=8000)
    s.set_defaults(relay_options=_relay_arguments(s))
    st = sub.add_parser("site", help="write the static site to DIR")
    st.add_argument("dir")
    st.add_argument("--relay", default="", help="the relay URL the page sends to")
    st.add_argument("--format", default=None, help="the relay's wire format (default: auto)")
    st.add_argument(
        "--no-snapshot",
        action="store_true",
        help="leave the memory snapshot out (fewer bytes, slower start)",
    )
    w = sub.add_parser("wheels", help="pysse's wheels and a micropip index, for your own page")
    w.add_argument("dir")
    ex = sub.add_parser("examples", help="the embedding examples, ready to serve from DIR")
    ex.add_argument("dir")
    t = sub.add_parser("test", help="ruff, mypy --strict and pytest (unit + browser)")
    t.add_argument("pytest_args", nargs=argparse.REMAINDER)
    b = sub.add_parser("bench", help="benchmarks")
    b.add_argument(
        "--only",
        choices=[
            "parser",
            "markdown",
            "relay",
            "resume",
            "scale",
            "boot",
            "browser",
            "embed",
            "search",
            "phone",
            "render",
            "peer",
            "worker",
            "network",
        ],
    )
    b.add_argument(
        "--baseline",
        metavar="REF",
        help="phone, render, network: also measure the site git revision REF builds, side by side",
    )
    f = sub.add_parser("fuzz", help="long fuzz runs")
    f.add_argument("--minutes", type=float, default=10)
    f.add_argument("--atheris", action="store_true", help="coverage-guided, with atheris")
    sub.add_parser("screenshots", help="the README's screenshots in docs/, made again")
    return ap


def main() -> int:
    ap = parser()
    args, unknown = ap.parse_known_args()
    if unknown and args.cmd == "test":  # `build.py test -k relay`: pytest's options
        args.pytest_args = [*unknown, *args.pytest_args]
    elif unknown and (args.cmd != "serve" or args.relay_options):
        ap.error(f"unrecognized arguments: {' '.join(unknown)}")
    ensure_venv(EXTRAS[args.cmd])
    handler = {
        "serve": cmd_serve,
        "site": cmd_site,
        "wheels": cmd_wheels,
        "examples": cmd_examples,
        "test": cmd_test,
        "bench": cmd_bench,
        "fuzz": cmd_fuzz,
        "screenshots": cmd_screenshots,
    }[args.cmd]
    return handler(args)


if __name__ == "__main__":
    raise SystemExit(main())
