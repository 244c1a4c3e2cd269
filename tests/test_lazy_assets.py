"""pysse/browser/lazy_assets.py under real Pyodide (Node), booted the way the page boots and
fetching the built site's lazy bundles over HTTP with ``js.fetch`` (the static server the
tests use): an answer that needs a lexer and math waits for them, they arrive, and it ends
as CPython renders it; every allowed language's bundle installs and highlights as in
CPython, with nothing else missing (the build's import closure is complete); a bundle that
cannot be fetched fails, and the answer ends plain."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from buildtools.pyodide_node import PyodideRunError, run_as_page
from pysse.render import render
from pysse.render.highlight import ALLOWED, HighlightJob
from support import LiveServer

pytestmark = pytest.mark.pyodide

ANSWER = (
    "Some code:\n\n```javascript\nconst a = [1, 2].map((x) => x * 2); // twice\n```\n\n"
    "and math: $e^{i\\pi} + 1 = 0$, then\n\n$$\n\\frac{a}{b}\n$$\n\nthe end.\n"
)

WAIT = r"""
import asyncio, json, sys
from pysse.render import StreamingMarkdown, lazy
from pysse.browser.lazy_assets import LazyAssets
data = json.loads(INPUT)
assets = LazyAssets(data["lazy"], data["base"])
assets.declare()
arrived = []
lazy.REGISTRY.subscribe(lambda r: arrived.append([lazy.key(r), lazy.REGISTRY.why(r)]))
md = StreamingMarkdown()
md.feed(data["text"])
md.end()
first = md.update()
out = {"first_final": first.final, "waiting": sorted(map(lazy.key, md.waiting)),
       "busy": md.busy, "shown": md.html}
for _ in range(600):  # the page would wait a bounded time too
    if not md.waiting:
        break
    await asyncio.sleep(0.05)
while not md.update().final:
    pass
origins = {m: getattr(sys.modules[m].__spec__, "origin", "") for m in
           ("latex2mathml.converter", "pygments.lexers.javascript") if m in sys.modules}
out.update(html=md.html, arrived=arrived, fetched=assets.fetched, origins=origins,
           metadata="importlib.metadata" in sys.modules, lacking=sorted(map(lazy.key, md.lacking)))
json.dumps(out)
"""


def run(site: Path, code: str, payload: dict[str, Any], how: str = "plain") -> Any:
    try:
        return json.loads(run_as_page(code, json.dumps(payload), site, how))  # type: ignore[arg-type]
    except PyodideRunError as exc:
        pytest.fail(str(exc))


def manifest(site: Path) -> Any:
    html = (site / "index.html").read_text()
    raw = html.split('id="pysse-boot">', 1)[1].split("</script>", 1)[0]
    return json.loads(raw.replace("<\\/", "</"))


@pytest.mark.parametrize("how", ["plain", "snapshot"])
def test_an_answer_waits_for_its_bundles_and_ends_as_cpython_renders_it(
    site: Path, server: LiveServer, how: str
) -> None:
    lazy_section = manifest(site)["lazy"]
    assert {"lexer:javascript", "math:latex2mathml"} <= set(lazy_section["resources"])
    got = run(site, WAIT, {"lazy": lazy_section, "base": server.url + "/", "text": ANSWER}, how)
    assert not got["first_final"] and not got["busy"]
    assert got["waiting"] == ["lexer:javascript", "math:latex2mathml"]
    assert "hl-" not in got["shown"] and "math-source" in got["shown"]
    assert sorted(got["arrived"]) == [["lexer:javascript", None], ["math:latex2mathml", None]]
    assert got["html"] == render(ANSWER) and got["lacking"] == []
    assert got["html"].count("<math") == 2 and "hl-" in got["html"]
    assert all(o.startswith(lazy_section["root"] + "/") for o in got["origins"].values())
    assert len(got["origins"]) == 2
    assert not got["metadata"]  # latex2mathml's version lookup was patched out
    sizes = {k: sum(f["bytes"] for f in r["files"]) for k, r in lazy_section["resources"].items()}
    assert got["fetched"] == sizes["lexer:javascript"] + sizes["math:latex2mathml"]


EVERY_LEXER = r"""
import asyncio, json, sys
from pysse.render import lazy
from pysse.render.highlight import HighlightJob
from pysse.browser.lazy_assets import LazyAssets
data = json.loads(INPUT)
assets = LazyAssets(data["lazy"], data["base"])
assets.declare()
for key in data["lazy"]["resources"]:
    await assets.fetch(lazy.parse(key))
failed = {k: lazy.REGISTRY.why(lazy.parse(k)) for k in data["lazy"]["resources"]}
out = {"failed": {k: v for k, v in failed.items() if v}, "html": {}}
for alias in data["aliases"]:
    out["html"][alias] = HighlightJob(data["code"], alias).run()
json.dumps(out)
"""


def test_every_allowed_language_installs_and_highlights_as_in_cpython(
    site: Path, server: LiveServer
) -> None:
    lazy_section = manifest(site)["lazy"]
    aliases = sorted(set(ALLOWED.values()))
    lexers = {k.split(":", 1)[1] for k in lazy_section["resources"] if k.startswith("lexer:")}
    assert lexers and lexers <= set(aliases)
    code = "x = 1  # c\ns = 'q' \"d\"\n<a href='x'>y</a> $v {k: [1, 2.5]}\nfn(a) -> b;\n"
    payload = {"lazy": lazy_section, "base": server.url + "/", "aliases": aliases, "code": code}
    got = run(site, EVERY_LEXER, payload)
    assert got["failed"] == {}
    for alias in aliases:
        want = HighlightJob(code, alias).run()
        assert want and got["html"][alias] == want, alias


FAILING = r"""
import asyncio, json
from pysse.render import StreamingMarkdown, lazy
from pysse.browser.lazy_assets import LazyAssets
data = json.loads(INPUT)
assets = LazyAssets(data["lazy"], data["base"])
assets.declare()
md = StreamingMarkdown()
md.feed(data["text"])
md.end()
md.update()
for _ in range(600):
    if not md.waiting:
        break
    await asyncio.sleep(0.05)
while not md.update().final:
    pass
why = {k: lazy.REGISTRY.why(lazy.parse(k)) for k in data["lazy"]["resources"]}
json.dumps({"html": md.html, "why": why})
"""


def test_a_bundle_that_cannot_be_fetched_fails_and_the_answer_ends_plain(
    site: Path, server: LiveServer
) -> None:
    resources = manifest(site)["lazy"]["resources"]
    js = dict(resources["lexer:javascript"], files=[{"url": "boot/nope/lexer.zip", "bytes": 9}])
    wrong = resources["math:latex2mathml"]["files"][0]
    math = dict(resources["math:latex2mathml"], files=[dict(wrong, bytes=wrong["bytes"] + 1)])
    lazy_section = {
        "root": "/lib/lazy",
        "resources": {"lexer:javascript": js, "math:latex2mathml": math},
    }
    got = run(site, FAILING, {"lazy": lazy_section, "base": server.url + "/", "text": ANSWER})
    assert "HTTP 404" in got["why"]["lexer:javascript"]
    assert "not the" in got["why"]["math:latex2mathml"]  # the size the build wrote
    assert "hl-" not in got["html"] and "<math" not in got["html"]
    assert got["html"].count('class="math-source"') == 2


WARM = r"""
import json, sys
from pysse.render import lazy
from pysse.browser.lazy_assets import LazyAssets
data = json.loads(INPUT)
assets = LazyAssets(data["lazy"], data["base"])
assets.declare()
await assets.fetch(("lexer", "javascript"))
await assets.fetch(lazy.MATH_RESOURCE)
from pygments.lexers.javascript import JavascriptLexer
json.dumps({"compiled": "_tokens" in vars(JavascriptLexer),
            "symbols": "latex2mathml.symbols_parser" in sys.modules})
"""


def test_a_bundle_arrives_warm(site: Path, server: LiveServer) -> None:
    # its first use paid on arrival, not when an answer first renders with it
    lazy_section = manifest(site)["lazy"]
    got = run(site, WARM, {"lazy": lazy_section, "base": server.url + "/"})
    assert got == {"compiled": True, "symbols": True}
