"""build.py: the static site it writes. The wheel the page loads holds only what runs there,
and the page's Format menu comes from the provider registry. The boot assets (buildtools):
a manifest of files that exist, bytecode zips, precompressed siblings, a cache that makes a
second build cheap, and a site that still boots without Node."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any, NoReturn

import brotli
import pytest

from pysse.providers import PROVIDERS

ROOT = Path(__file__).resolve().parent.parent


def pysse_wheel(site: Path) -> Path:
    urls = json.loads((site / "site.json").read_text())["wheels"]
    (url,) = [u for u in urls if "/pysse-" in u]
    return site / url


def test_the_browser_wheel_leaves_server_code_out(site: Path) -> None:
    with zipfile.ZipFile(pysse_wheel(site)) as whl:
        names = whl.namelist()
        assert "pysse/app/app.py" in names and "pysse/render/streaming.py" in names
        server_side = ("pysse/server/", "pysse/testing/", "pysse/providers/encoders/")
        assert not [n for n in names if n.startswith(server_side)]  # the page never writes
        record = next(n for n in names if n.endswith(".dist-info/RECORD"))
        rows = [r.split(",") for r in whl.read(record).decode().splitlines()]
        listed = {r[0] for r in rows}
        assert listed == set(names)
        for name, digest, size in rows:
            if name == record:
                continue
            data = whl.read(name)
            want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert digest == f"sha256={want}" and int(size) == len(data), name


def test_the_format_menu_comes_from_the_registry(site: Path) -> None:
    html = (site / "index.html").read_text()
    for name, provider in PROVIDERS.items():
        assert f'<option value="{name}">{provider.label}</option>' in html
    assert "<!--formats" not in html


def test_site_with_a_relay_and_format_writes_them_to_site_json(tmp_path: Path) -> None:
    import build

    assert build.site_relay_check("relay.example/relay", None) is not None
    assert "expected one of" in (build.site_relay_check("", "cohere") or "")
    assert build.site_relay_check("https://relay.example/relay", "anthropic") is None
    out = build.build_site(tmp_path / "site", relay="https://relay.example/relay", fmt="anthropic")
    config = json.loads((out / "site.json").read_text())
    assert config["relay"] == "https://relay.example/relay" and config["format"] == "anthropic"
    first = config["first"]  # a first visit's message goes out before Python is up
    assert first["url"] == config["relay"] and first["marker"] in first["body"]
    assert "max_tokens" in json.loads(first["body"])  # written in Anthropic's format
    assert first["made_for"] == {"relay": config["relay"], "format": "anthropic"}
    plain = json.loads((build.build_site(tmp_path / "plain") / "site.json").read_text())
    assert plain["relay"] == "" and "format" not in plain and "demo" not in plain
    assert "first" not in plain  # no relay: a fresh page has nowhere to send


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--relay", "relay.example/relay"], "build.py site: "),
        (["--format", "cohere"], "build.py site: --format 'cohere': expected one of "),
    ],
)
def test_site_with_a_wrong_relay_or_format_is_one_line_and_status_2(
    tmp_path: Path, args: list[str], message: str
) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "build.py"), "site", str(tmp_path / "out"), *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYSSE_BUILD_IN_VENV="1"),  # (this venv: no install to log)
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(message) and done.stderr.count("\n") == 1, done.stderr
    assert not (tmp_path / "out").exists()  # nothing built


def test_the_site_loads_the_math_wheels_in_order_and_never_ships_axe(site: Path) -> None:
    urls = json.loads((site / "site.json").read_text())["wheels"]
    names = [u.rsplit("/", 1)[1].split("-")[0] for u in urls]
    assert names.index("markdown_it_py") < names.index("mdit_py_plugins")  # no resolution
    assert "latex2mathml" in names
    files = [p.name.lower() for p in site.rglob("*")]
    assert not [n for n in files if "axe" in n]
    for page in ("index.html", "app.js", "store.js", "theme.js"):
        assert "axe" not in (site / page).read_text().lower()


def boot_manifest(site: Path) -> dict[str, Any]:
    html = (site / "index.html").read_text()
    m = re.search(r'<script type="application/json" id="pysse-boot">(.*?)</script>', html)
    assert m, "no boot manifest in index.html"
    return dict(json.loads(m.group(1).replace("<\\/", "</")))


def test_the_boot_manifest_lists_files_that_exist_and_preloads_them(site: Path) -> None:
    m = boot_manifest(site)
    html = (site / "index.html").read_text()
    snap = m["snapshot"]
    assert snap is not None, "this machine has Node: the site must have a snapshot"
    assert m["zipPaths"] == ["/lib/pysse-lib.zip", "/lib/pysse-app.zip"]
    assert m["wasmBytes"] == (site / m["pyodide"] / "pyodide.asm.wasm").stat().st_size
    assert m["lockInfo"]["abi_version"]
    entries = [m["plain"]["stdlib"], *m["plain"]["zips"], snap, snap["stdlib"], *snap["zips"]]
    for e in entries:
        assert e["url"].startswith("boot/") and (site / e["url"]).stat().st_size == e["bytes"]
    preloads = set(re.findall(r'<link rel="preload" href="([^"]+)" as="fetch" crossorigin>', html))
    # A first visit starts plain (web/boot.js choosePath): its files start at once; the
    # snapshot's are the service worker's to fetch when idle, never raced with the first visit.
    plain = m["plain"]
    want = {
        f"{m['pyodide']}pyodide.asm.wasm",
        plain["stdlib"]["url"],
        *(z["url"] for z in plain["zips"]),
    }
    assert preloads == want
    assert snap["url"] not in html.split('id="pysse-boot"')[0]
    assert '<link rel="modulepreload" href="view.js">' in html  # the main thread's module
    assert "<!--boot" not in html
    # The delta's header: the loader refuses the file until boot.js has undone the delta.
    head = (site / snap["url"]).read_bytes()[:16]
    assert int.from_bytes(head[:4], "little") == 0 and snap["delta"]["magic"] != 0


def test_zips_hold_what_the_page_can_import_and_the_lazy_ones_leave_the_snapshot_out(
    site: Path,
) -> None:
    m = boot_manifest(site)
    with zipfile.ZipFile(site / m["plain"]["zips"][1]["url"]) as z:
        names = set(z.namelist())
    assert "pysse/browser/__init__.pyc" in names and "pysse/browser/__init__.py" not in names
    server_side = ("pysse/server/", "pysse/testing/", "pysse/providers/encoders/")
    assert not [n for n in names if n.startswith(server_side)]  # the page never writes streams
    with zipfile.ZipFile(site / m["plain"]["zips"][0]["url"]) as z:
        lib = set(z.namelist())
    # pygments' core and the boot languages' lexers only; no latex2mathml (lazy bundles)
    assert "pygments/lexer.pyc" in lib and "pygments/lexers/special.pyc" in lib
    assert "pygments/lexers/python.pyc" not in lib
    assert not [n for n in lib if n.startswith("latex2mathml") or ".dist-info/" in n]
    with zipfile.ZipFile(site / m["plain"]["stdlib"]["url"]) as z:
        stdlib = set(z.namelist())
    # bytecode for what boot imports, sources for the margin it may import later
    assert "asyncio/__init__.pyc" in stdlib and "_strptime.py" in stdlib
    assert "encodings/cp1252.py" in stdlib  # codecs: kept whole
    unused = ("email/", "unittest/", "pydoc.py", "http/client.py", "xml/etree/", "tarfile.py")
    assert not [n for n in stdlib if n.startswith(unused)]
    with zipfile.ZipFile(site / m["snapshot"]["stdlib"]["url"]) as z:
        lazy = set(z.namelist())
    assert "asyncio/__init__.pyc" not in lazy and "_strptime.py" in lazy and lazy < stdlib


def test_pysse_never_reads_docstrings_which_its_bytecode_leaves_out() -> None:
    # buildtools/layout.py strips module and function docstrings from pysse's bytecode: fine
    # only while nothing in pysse reads a __doc__ (or asks inspect/pydoc for one).
    import ast

    from buildtools.layout import STRIPPED

    assert STRIPPED == ("pysse/",)
    root = Path(__file__).resolve().parents[1] / "pysse"
    readers = []
    for path in root.rglob("*.py"):
        if path.name == "__main__.py":  # the command line: kept whole (layout.py)
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and node.attr in ("__doc__", "getdoc")) or (
                isinstance(node, ast.Name) and node.id in ("__doc__", "getdoc", "pydoc")
            ):
                readers.append(f"{path.relative_to(root)}:{node.lineno}")
    assert readers == []


def test_each_lazy_resource_is_a_bundle_of_what_it_adds(site: Path) -> None:
    from pysse.render.highlight import ALLOWED

    lazy = boot_manifest(site)["lazy"]
    assert lazy["root"] == "/lib/lazy"
    resources = lazy["resources"]
    assert set(resources) == {f"lexer:{a}" for a in set(ALLOWED.values()) - {"text"}} | {
        "math:latex2mathml"
    }
    for key, entry in resources.items():
        (file,) = entry["files"]
        assert (
            file["url"].startswith("boot/") and (site / file["url"]).stat().st_size == file["bytes"]
        ), key
        with zipfile.ZipFile(site / file["url"]) as z:
            names = z.namelist()
        if key.startswith("lexer:"):
            # lexer modules (and pygments.unistring, for some): added to boot packages
            assert "pygments.lexers" in entry["packages"], key
            assert set(entry["packages"]) <= {"pygments", "pygments.lexers"}, key
            # bytecode for what the lexer imports, sources for what it may (the read pass)
            lexer_modules = [n for n in names if n.startswith("pygments/lexers/")]
            assert lexer_modules and all(n.endswith(".pyc") for n in lexer_modules), key
            assert not [n for n in names if n.startswith(("pygments/lexer.", "email/"))], key
    with zipfile.ZipFile(site / resources["math:latex2mathml"]["files"][0]["url"]) as z:
        math = set(z.namelist())
    assert {"latex2mathml/unimathsymbols.txt", "xml/etree/ElementTree.pyc"} <= math
    assert not [n for n in math if n.startswith(("importlib/", "email/", "urllib/", "xml/sax"))]
    assert resources["math:latex2mathml"]["packages"] == ["xml"]


def test_precompressed_siblings_decode_to_the_file(site: Path) -> None:
    m = boot_manifest(site)
    small = ["index.html", "boot.js", "app.js", "style.css"]
    big = [f"{m['pyodide']}pyodide.asm.wasm", m["snapshot"]["url"], m["snapshot"]["stdlib"]["url"]]
    for rel in small + big:
        data = (site / rel).read_bytes()
        br = (site / (rel + ".br")).read_bytes()
        gz = (site / (rel + ".gz")).read_bytes()
        assert brotli.decompress(br) == data and gzip.decompress(gz) == data, rel
        assert len(br) < len(gz) < len(data), rel
    assert not (site / "site.json.br").exists()  # too small to gain anything


def test_a_second_build_reuses_every_derived_asset(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import build
    from buildtools import assets, compress

    def fail(*args: object, **kw: object) -> NoReturn:
        raise AssertionError("rebuilt something the cache has")

    monkeypatch.setattr(assets, "run_node", fail)
    monkeypatch.setattr(compress, "_brotli", fail)
    monkeypatch.setattr(compress, "_gzip", fail)
    out = build.build_site(tmp_path / "again")
    assert boot_manifest(out)["snapshot"]["stamp"] == boot_manifest(site)["snapshot"]["stamp"]


def test_without_node_the_site_boots_from_sources(tmp_path: Path) -> None:
    import build
    from buildtools import assets

    logged: list[str] = []
    wheels = build.fetch_browser_wheels()
    app = build.browser_wheel(build.build_pysse_wheel())
    pyodide = build.fetch_pyodide()
    got = assets.build(build.CACHE, pyodide, wheels, app, None, logged.append)
    assert got.snapshot is None and not got.compiled
    assert got.stdlib == pyodide / "python_stdlib.zip"
    assert "Node.js was not found" in got.problems[0] and "warning" in logged[0]
    with zipfile.ZipFile(got.zips[0].file) as z:
        names = z.namelist()
    assert "pysse/browser/__init__.py" in names and "markdown_it/__init__.py" in names


@pytest.mark.parametrize("var", ["PYSSE_CHROMIUM", "PYSSE_REDIS_SERVER"])
def test_a_wrong_explicit_program_stops_the_build_and_installs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, var: str
) -> None:
    # Issue 24: a wrong $PYSSE_CHROMIUM was passed over for Debian's Chromium (installed
    # if need be): the tests ran another browser than the one asked for.
    import build

    installed: list[tuple[str, ...]] = []
    monkeypatch.setattr(build, "apt_install", lambda *pkgs: installed.append(pkgs) or True)
    monkeypatch.setenv(var, str(tmp_path / "nope"))
    find = build.find_chromium if var == "PYSSE_CHROMIUM" else build.find_redis_server
    with pytest.raises(SystemExit, match=f"{var}=.*nope"):
        find()
    assert installed == []
