#!/usr/bin/env python3
"""pysse's one entry point.

    python build.py serve [--host 127.0.0.1] [--port 8000] [--upstream URL ...]
                                     build the site and serve it with the demo relay
    python build.py site DIR         write the static site alone (for any static host)
    python build.py test [PYTEST_ARGS...]   lint, type-check and run every test
    python build.py bench [--only NAME]  run the benchmarks and print their tables
    python build.py fuzz --minutes N run the fuzz targets for N minutes

On first use it makes a virtual environment in ``.venv`` and installs what the command needs
from PyPI, fetches Pyodide from npm and the browser-side wheels from PyPI into ``.cache``, and
builds the pysse wheel. Later runs reuse all of it (keyed by content hashes) and start in
seconds. Only the standard library is used before the virtual environment exists.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

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
# Loaded by URL in this order: loadPackage() does no dependency resolution for URLs.
BROWSER_WHEELS = ("mdurl==0.1.2", "markdown-it-py==4.3.0", "pygments==2.21.0")
EXTRAS = {
    "serve": "serve,markdown",
    "site": "markdown",
    "test": "test",
    "bench": "test,bench",
    "fuzz": "test,fuzz",
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
    """$PYSSE_CHROMIUM, then chromium on PATH; else install Debian's package when root."""
    candidates = [
        os.environ.get("PYSSE_CHROMIUM"),
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ]
    for c in candidates:
        if c and Path(c).exists():
            return c
    if install and apt_install("chromium") and Path("/usr/bin/chromium").exists():
        return "/usr/bin/chromium"
    raise SystemExit(
        "No Chromium found. Install Debian's package (`sudo apt-get install chromium`) or set "
        "PYSSE_CHROMIUM=/path/to/chromium. (pysse never downloads a browser itself.)"
    )


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


def fetch_browser_wheels() -> list[Path]:
    """Pure-Python wheels from PyPI for the browser side, in load order."""
    dest = CACHE / "wheels"
    dest.mkdir(parents=True, exist_ok=True)
    found: list[Path] = []
    missing = []
    for spec in BROWSER_WHEELS:
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
        return fetch_browser_wheels()
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


# Server-side code never runs in the page: the wheel Pyodide loads leaves it out.
BROWSER_EXCLUDE = ("pysse/server/", "pysse/testing/")


def browser_wheel(full: Path) -> Path:
    """``full`` without the server-side packages, its RECORD rewritten to match."""
    out = full.parent / "browser" / full.name
    if out.exists():
        return out
    out.parent.mkdir(exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with zipfile.ZipFile(full) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        record = next(n for n in src.namelist() if n.endswith(".dist-info/RECORD"))
        rows = []
        for info in src.infolist():
            if info.filename.startswith(BROWSER_EXCLUDE) or info.filename == record:
                continue
            data = src.read(info)
            dst.writestr(info, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            rows.append(f"{info.filename},sha256={digest.decode()},{len(data)}")
        dst.writestr(record, "\n".join([*rows, f"{record},,"]) + "\n")
    tmp.rename(out)
    return out


def format_options() -> str:
    """The page's Format menu, from the provider registry (never a hand-kept copy)."""
    from html import escape

    from pysse.providers import PROVIDERS

    return "\n".join(
        f'        <option value="{escape(name)}">{escape(p.label)}</option>'
        for name, p in PROVIDERS.items()
    )


def build_site(out: Path = SITE, relay: str | None = "") -> Path:
    """Lay out the static site: the page, Pyodide, the wheels, and site.json naming them.

    Versioned assets live under content-addressed paths (``pyodide/VERSION/``,
    ``wheels/HASH/``) so a server can mark them immutable."""
    pyodide = fetch_pyodide()
    wheels = [*fetch_browser_wheels(), browser_wheel(build_pysse_wheel())]
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(ROOT / "web", tmp)
    shutil.copytree(pyodide, tmp / "pyodide" / PYODIDE_VERSION)
    urls = []
    for whl in wheels:
        d = tmp / "wheels" / sha(whl)[:12]
        d.mkdir(parents=True)
        shutil.copy2(whl, d / whl.name)
        urls.append(f"wheels/{d.name}/{whl.name}")
    config = {"pyodide": f"pyodide/{PYODIDE_VERSION}/", "wheels": urls, "relay": relay}
    (tmp / "site.json").write_text(json.dumps(config, indent=1))
    # Start every download while the HTML is parsed, not one after another as boot needs
    # them: the runtime's modules, its wasm and stdlib, and the wheels.
    base = config["pyodide"]
    links = [
        f'<link rel="modulepreload" href="{base}pyodide.mjs">',
        f'<link rel="modulepreload" href="{base}pyodide.asm.mjs">',
    ]
    links += [
        f'<link rel="preload" href="{base}{f}" as="fetch" crossorigin>'
        for f in ("pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
    ]
    links += [f'<link rel="preload" href="{u}" as="fetch" crossorigin>' for u in urls]
    index = tmp / "index.html"
    index.write_text(
        index.read_text()
        .replace(
            "<!--preload: build.py writes preload links for the runtime and wheels here-->",
            "\n".join(links),
        )
        .replace(
            "<!--formats: build.py writes one option per provider format (pysse.providers) here-->",
            format_options(),
        )
    )
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    log(f"site ready in {out}")
    return out


# -- commands ------------------------------------------------------------------------------------


def cmd_serve(args: argparse.Namespace) -> int:
    site = build_site()
    import uvicorn

    from pysse.server import create_app

    app = create_app(
        site, upstream=args.upstream, api_key_env=args.api_key_env, upstream_format=args.format
    )
    print(f"\n  pysse chat page: http://{args.host}:{args.port}/\n", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def cmd_site(args: argparse.Namespace) -> int:
    build_site(Path(args.dir).resolve(), relay=args.relay)
    return 0


def cmd_test(args: argparse.Namespace) -> int:
    chromium = find_chromium()
    find_node()
    site = build_site()
    env = dict(
        os.environ,
        PYSSE_CHROMIUM=chromium,
        PYSSE_SITE=str(site),
        PYSSE_PYODIDE=str(fetch_pyodide()),
    )
    steps = [
        [sys.executable, "-m", "ruff", "check", "pysse", "tests", "bench", "build.py"],
        [sys.executable, "-m", "ruff", "format", "--check", "pysse", "tests", "bench", "build.py"],
        [sys.executable, "-m", "mypy", "--strict", "pysse"],
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args.pytest_args],
    ]
    for step in steps:
        log(" ".join(Path(step[0]).name if i == 0 else s for i, s in enumerate(step)))
        code = subprocess.run(step, cwd=ROOT, env=env).returncode
        if code != 0:
            return code
    return 0


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
    if args.only in (None, "browser"):
        site = build_site()
        env.update(PYSSE_CHROMIUM=find_chromium(), PYSSE_SITE=str(site))
        run([sys.executable, "-m", "bench.bench_browser"], cwd=ROOT, env=env)
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve", help="build and serve the chat page with the demo relay")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8000)
    s.add_argument("--upstream", help="forward to a real provider instead of the demo model")
    s.add_argument("--api-key-env", default=None, help="env var holding the upstream API key")
    s.add_argument("--format", default=None, help="the upstream's wire format")
    st = sub.add_parser("site", help="write the static site to DIR")
    st.add_argument("dir")
    st.add_argument("--relay", default="", help="the relay URL the page starts with")
    t = sub.add_parser("test", help="ruff, mypy --strict and pytest (unit + browser)")
    t.add_argument("pytest_args", nargs=argparse.REMAINDER)
    b = sub.add_parser("bench", help="benchmarks")
    b.add_argument("--only", choices=["parser", "markdown", "relay", "browser"])
    f = sub.add_parser("fuzz", help="long fuzz runs")
    f.add_argument("--minutes", type=float, default=10)
    f.add_argument("--atheris", action="store_true", help="coverage-guided, with atheris")
    args = ap.parse_args()
    ensure_venv(EXTRAS[args.cmd])
    handler = {
        "serve": cmd_serve,
        "site": cmd_site,
        "test": cmd_test,
        "bench": cmd_bench,
        "fuzz": cmd_fuzz,
    }[args.cmd]
    return handler(args)


if __name__ == "__main__":
    raise SystemExit(main())
