"""pysse installed into a Pyodide the page already runs, the three ways docs/embedding.md
gives, from the site's own origin only (a real static file server, no network beyond it):
``loadPackage("micropip")`` (the lock entry ``build.py`` rewrites) then
``micropip.install("pysse[markdown]", index_urls=[...])``; a plain list of wheel URLs; and
``install.js``'s ``installPysse``, whose failures name the URL that failed (micropip's own
messages do not: a wrong index reads "Can't fetch metadata", a missing wheel "File is not a
zip file")."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from buildtools.wheel_index import canonical
from support import ServerProcess, free_port

pytestmark = pytest.mark.browser

PYODIDE = "/pyodide/314.0.7/"
BOOT = """async (base) => {
  const { loadPyodide } = await import(base + "/pyodide/314.0.7/pyodide.mjs");
  window.py = await loadPyodide();
  return true;
}"""
IMPORTS = "import pysse.browser, pysse.render.streaming, markdown_it, mdurl, mdit_py_plugins, latex2mathml, pygments"


@pytest.fixture(scope="module")
def origin(examples_dir: Path) -> Iterator[str]:
    port = free_port()
    argv = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1"]
    static = ServerProcess([*argv, "--directory", str(examples_dir), str(port)], port)
    yield static.url
    static.stop()


@pytest.fixture
def page(browser: Any, origin: str) -> Iterator[Any]:
    """The examples' index page (no script of its own), Pyodide booted in it as ``py``;
    ``page.requests`` lists every URL it asked for."""
    context = browser.new_context()
    p = context.new_page()
    errors: list[str] = []
    p.requests = []
    p.on("pageerror", lambda e: errors.append(str(e)))
    p.on("request", lambda r: p.requests.append(r.url))
    p.goto(origin + "/")
    p.evaluate(BOOT, origin)
    yield p
    context.close()
    assert errors == []


def manifest(examples_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((examples_dir / "pysse" / "wheels.json").read_text())
    return data


def installed(page: Any) -> dict[str, str]:
    """Each installed distribution micropip knows of (its name as the index spells it), with
    its version."""
    got: dict[str, str] = json.loads(
        page.evaluate(
            """() => py.runPython(`import json, micropip
json.dumps({p.name: p.version for p in micropip.list().values()})`)"""
        )
    )
    return {canonical(name): version for name, version in got.items()}


def test_micropip_from_the_lock_then_pysse_from_the_index(
    page: Any, origin: str, examples_dir: Path
) -> None:
    # The index URL as people write it, with a trailing slash: micropip 0.11.1 asks for
    # "simple//pysse/", and the index's links still resolve (they never climb with ../).
    page.evaluate(
        """async (index) => {
          await py.loadPackage("micropip");
          const micropip = py.pyimport("micropip");
          await micropip.install.callKwargs("pysse[markdown]", { index_urls: [index] });
          micropip.destroy();
        }""",
        origin + "/pysse/simple/",
    )
    page.evaluate("(code) => py.runPython(code)", IMPORTS)
    versions = installed(page)
    for wheel in manifest(examples_dir)["wheels"]:
        assert versions.get(wheel["project"]) == wheel["version"], (wheel["project"], versions)
    assert f"{origin}{PYODIDE}micropip-0.11.1-py3-none-any.whl" in page.requests  # the lock's
    assert f"{origin}/pysse/simple//pysse/" in page.requests
    assert all(u.startswith(origin + "/") for u in page.requests), page.requests  # offline


def test_a_plain_list_of_wheel_urls(page: Any, origin: str, examples_dir: Path) -> None:
    wheels = manifest(examples_dir)
    urls = [f"{origin}/pysse/{w['url']}" for w in wheels["wheels"]]
    page.evaluate(
        """async ([micropipUrl, urls]) => {
          await py.loadPackage(micropipUrl);  // micropip by URL: no lock entry needed
          const micropip = py.pyimport("micropip");
          await micropip.install(urls);  // every dependency is in the list: no index asked
          micropip.destroy();
        }""",
        [f"{origin}/pysse/{wheels['micropip']['url']}", urls],
    )
    page.evaluate("(code) => py.runPython(code)", IMPORTS)
    assert set(installed(page)) >= {w["project"] for w in wheels["wheels"]}
    assert all(u.startswith(origin + "/") for u in page.requests), page.requests
    assert not [u for u in page.requests if "/simple/" in u and not u.endswith(".whl")]


INSTALL = """async ([base, options]) => {
  const { installPysse } = await import(base + "/pysse/install.js");
  try {
    await installPysse(py, options);
    return { ok: true };
  } catch (e) {
    return { ok: false, name: e.name, message: e.message, url: e.url };
  }
}"""


def test_install_js_names_the_url_that_failed(page: Any, origin: str, examples_dir: Path) -> None:
    wheels = manifest(examples_dir)
    micropip_url = f"{origin}/pysse/{wheels['micropip']['url']}"
    mdurl = next(w for w in wheels["wheels"] if w["project"] == "mdurl")
    mdurl_url = f"{origin}/pysse/{mdurl['url']}"

    def missing(route: Any) -> None:
        route.fulfill(status=404, body="File not found")

    # micropip's wheel missing (an incomplete upload): loadPackage does not throw, the import
    # check does, and the wheel's URL is named.
    page.route(micropip_url, missing)
    got = page.evaluate(INSTALL, [origin, {}])
    assert got["ok"] is False and got["name"] == "InstallError"
    assert (
        got["message"]
        == f"micropip could not be loaded: {micropip_url} answered HTTP 404 Not Found"
    )
    page.unroute(micropip_url)

    # A wrong index URL: its page for pysse is the URL that failed.
    wrong = origin + "/static/pysse/simple"
    got = page.evaluate(INSTALL, [origin, {"index": wrong}])
    assert got["ok"] is False and got["url"] == f"{wrong}/pysse/"
    assert got["message"].startswith(
        f"pysse[markdown] could not be installed from {wrong}: {wrong}/pysse/ answered HTTP 404"
    ), got["message"]
    # micropip asks for every project at once: its message names whichever failed first
    assert "(micropip: ValueError: Can't fetch metadata for '" in got["message"]

    # A wheel missing from the index's directory: that wheel's URL.
    page.route(mdurl_url, missing)
    got = page.evaluate(INSTALL, [origin, {}])
    assert got["ok"] is False and got["url"] == mdurl_url, got
    assert f"{mdurl_url} answered HTTP 404" in got["message"]
    page.unroute(mdurl_url)

    # Everything back: the same Python installs what the failure left out (pysse itself was
    # installed, mdurl was not).
    assert page.evaluate(INSTALL, [origin, {}]) == {"ok": True}
    page.evaluate("(code) => py.runPython(code)", IMPORTS)


CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self' http:"
CSP_PAGE = f"""<!doctype html><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<title>csp</title><script type="module" src="app.js"></script>"""
CSP_APP = """import { loadPyodide } from "../pyodide/314.0.7/pyodide.mjs";
import { installPysse } from "../pysse/install.js";
window.py = await loadPyodide();
await installPysse(window.py, { highlight: false });
document.title = "installed";
"""
STREAM = """async ([url, withBridge]) => {
  if (withBridge) window.pysseBridge = await import("/pysse/bridge.js");
  py.globals.set("url", url);
  return py.runPythonAsync(`
import js
from pysse.browser import stream_chat
from pysse.browser.bridge import BridgeUnavailableError
from pysse.browser.js_writer import dom_writer_class
el = js.document.createElement("div")
js.document.body.appendChild(el)
try:
    r = await stream_chat(url, {"messages": []}, into=el)
    out = f"{r.outcome}: {r.text or r.detail} {el.innerHTML} {dom_writer_class() is None}"
except BridgeUnavailableError as exc:
    out = f"refused: {exc}"
out`);
}"""

PLAIN_CODE = """(src) => { py.globals.set("src", src); return py.runPython(`import importlib.util
from pysse.render.markdown import render
[importlib.util.find_spec("pygments") is None, render(src)]`).toJs(); }"""


def test_under_a_strict_csp_the_bridge_is_imported_not_evaluated(
    browser: Any, examples_dir: Path, tmp_path: Path
) -> None:
    """A page whose policy forbids eval (``script-src 'self' 'wasm-unsafe-eval'``, as the
    bundled page's): Pyodide and the install work; stream_chat cannot evaluate bridge.js and
    says what to do instead; done, it streams. The page installs without highlighting
    (``highlight: false``): pygments (74% of the install's bytes) is never fetched, a closed
    code fence is plain code and the rest renders the same."""
    from pysse.testing import Script, ScriptServer

    for name in ("pyodide", "pysse"):
        (tmp_path / name).symlink_to(examples_dir / name)
    (tmp_path / "csp").mkdir()
    (tmp_path / "csp" / "index.html").write_text(CSP_PAGE)
    (tmp_path / "csp" / "app.js").write_text(CSP_APP)
    port = free_port()
    argv = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1"]
    static = ServerProcess([*argv, "--directory", str(tmp_path), str(port)], port)
    context = browser.new_context()
    p = context.new_page()
    errors: list[str] = []
    requests: list[str] = []
    p.on("pageerror", lambda e: errors.append(str(e)))
    p.on("request", lambda r: requests.append(r.url))
    try:
        with ScriptServer(Script.answer("Fine under a strict policy.")) as kit:
            p.goto(static.url + "/csp/")
            p.wait_for_function("() => document.title === 'installed'", timeout=240_000)
            refused = p.evaluate(STREAM, [kit.url + "/v1/chat/completions", False])
            assert refused.startswith("refused: could not load pysse's bridge.js"), refused
            assert "import * as bridge from" in refused and "globalThis.pysseBridge" in refused
            done = p.evaluate(STREAM, [kit.url + "/v1/chat/completions", True])
            # (into an element: dom_writer.js cannot be evaluated either; Python's writer)
            assert (
                done
                == 'completed: Fine under a strict policy. <p dir="auto">Fine under a strict policy.</p>\n True'
            )
            assert [u for u in requests if "/markdown-it-py/" in u]
            assert not [u for u in requests if "pygments" in u]
            plain = p.evaluate(PLAIN_CODE, "**bold**\n\n~~~python\nx = 1\n~~~\n")
            assert plain[0] is True and plain[1].startswith(
                '<p dir="auto"><strong>bold</strong></p>'
            )
            assert '<code class="language-python">x = 1\n</code>' in plain[1], plain[1]
    finally:
        context.close()
        static.stop()
    assert errors == []
