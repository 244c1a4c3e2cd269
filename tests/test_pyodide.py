"""The pure-Python layers under real Pyodide (Python 3.14, Node + the npm package), compared
with CPython on the same inputs, so a CPython-only (or 3.14-only) slip is caught. Run three
ways: the wheels loaded as packages, and the two ways the page boots (web/boot.js): restored
from the site's memory snapshot, and a plain start from its .pyc zips."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fixtures_util import load_fixtures
from pysse.render import render
from pysse.server.demo import RICH_ANSWER
from pysse.server.shapes import SHAPES

pytestmark = pytest.mark.pyodide

CHECK = r"""
import json, sys
from pysse import ChatStream, SSEParser
from pysse.render import StreamingMarkdown
data = json.loads(INPUT)
out = {"python": sys.version.split()[0], "fixtures": {}}
for name, hexbody in data["fixtures"].items():
    body = bytes.fromhex(hexbody)
    rows = []
    for size in (1, 7, 64, len(body) or 1):
        cs = ChatStream()
        for i in range(0, len(body), size):
            cs.feed(body[i:i + size])
        cs.close()
        rows.append([cs.text, str(cs.outcome), cs.finish_reason,
                     [cs.usage.input_tokens, cs.usage.output_tokens] if cs.usage else None])
    out["fixtures"][name] = rows
hostile = {}
head = b'data: {"choices":[{"delta":{"content":"before "}}]}\n\n'
for n in (6000, 100000):  # once a fatal "Maximum call stack size exceeded" for the runtime
    pad = b"[" * n + b"]" * n
    body = head + b'data: {"choices":[{"delta":{"content":"x"},"pad":' + pad + b"}]}\n\n"
    for size in (997, len(body)):
        cs = ChatStream()
        for i in range(0, len(body), size):
            cs.feed(body[i:i + size])
        cs.close()
        hostile[f"deep {n} @ {size}"] = [cs.text, str(cs.outcome), cs.error and cs.error.kind]
body = b"retry: " + b"9" * 5000 + b"\n" + head + b"data: [DONE]\n\n"
for size in (1, 7, len(body)):
    cs = ChatStream()
    for i in range(0, len(body), size):
        cs.feed(body[i:i + size])
    cs.close()
    hostile[f"retry @ {size}"] = [cs.text, str(cs.outcome), cs.error and cs.error.kind]
out["hostile"] = hostile
md = StreamingMarkdown()
text = data["markdown"]
for i in range(0, len(text), 5):
    md.feed(text[i:i + 5])
md.finish()
out["markdown"] = md.html
# The page's reconnect policy (pysse.page.reconnect) decides the same in the browser.
import random
from pysse.page.reconnect import Reconnect
r = Reconnect(rnd=random.Random(5))
out["reconnect"] = [r.on_drop(i * 5000.0, "read-error", 1) for i in range(8)]
# math (mdit-py-plugins + latex2mathml), its hold-back rules, and the hardest formulas within
# the size and depth caps: the same HTML as CPython, and no crash of the runtime
from pysse.render import hold_back, render
from pysse.render.math import tex_to_html
math = data["math"]
out["math"] = render(math)
out["math_holdback"] = [hold_back(math[:i]) for i in range(0, len(math) + 1, 3)]
md = StreamingMarkdown()
for i in range(0, len(math), 4):
    md.feed(math[i:i + 4])
md.finish()
out["math_stream"] = md.html
out["hard_tex"] = [tex_to_html(t, True) for t in data["hard_tex"]]
json.dumps(out)
"""

NODE = r"""
const { pathToFileURL } = require("url");
(async () => {
  const [dir, wheelsJson, code, input] = process.argv.slice(2);
  const { loadPyodide } = await import(pathToFileURL(dir + "/pyodide.mjs").href);
  const py = await loadPyodide({ indexURL: dir + "/" });
  await py.loadPackage(JSON.parse(wheelsJson), { messageCallback: () => {} });
  py.globals.set("INPUT", input);
  process.stdout.write(py.runPython(code));
})().catch((e) => { console.error(e); process.exit(1); });
"""


# The page's boot, in Node: the site's manifest (index.html), its zips written where the page
# writes them, and for the snapshot the page's own undoDelta (web/boot.js).
NODE_SITE = r"""
const fs = require("fs");
const path = require("path");
const { pathToFileURL } = require("url");
(async () => {
  const [site, how, code, input] = process.argv.slice(2);
  const html = fs.readFileSync(path.join(site, "index.html"), "utf8");
  const m = JSON.parse(html.match(/id="pysse-boot">(.*?)<\/script>/)[1].replaceAll("<\\/", "</"));
  const run = how === "snapshot" ? m.snapshot : m.plain;
  const dir = path.join(site, m.pyodide);
  const { loadPyodide } = await import(pathToFileURL(path.join(dir, "pyodide.mjs")).href);
  const { default: factory } = await import(pathToFileURL(path.join(dir, "pyodide.asm.mjs")).href);
  const { undoDelta } = await import(pathToFileURL(path.join(site, "boot.js")).href);
  const read = (url) => new Uint8Array(fs.readFileSync(path.join(site, url)));
  const config = {
    indexURL: dir + "/", stdLibURL: path.join(site, run.stdlib.url),
    fsInit: async (FS) => run.zips.forEach((z, i) => FS.writeFile(m.zipPaths[i], read(z.url))),
  };
  if (how === "snapshot") {
    const snap = read(run.url);
    config._loadSnapshot = snap;
    config.createPyodideModule = async (settings) => {
      const module = await factory(settings);
      await undoDelta(snap, module.HEAPU8, run.delta);
      return module;
    };
  }
  const py = await loadPyodide(config);
  if (how === "snapshot") {
    if (py.runPython("import sys; sys._pysse_snapshot_stamp") !== run.stamp) throw new Error("stamp");
  } else {
    py.runPython(`import sys; sys.path[0:0] = ${JSON.stringify(m.zipPaths)}`);
  }
  py.globals.set("INPUT", input);
  process.stdout.write(py.runPython(code));
})().catch((e) => { console.error(e); process.exit(1); });
"""


def run_in_pyodide(site: Path, tmp_path: Path, code: str, payload: str, how: str = "wheels") -> Any:
    """Run ``code`` (which leaves a JSON string as its value) in Pyodide under Node with
    ``INPUT = payload``; its JSON result. ``how``: the site's wheels loaded by Pyodide, or the
    page's own boot (``plain`` from its zips, or its ``snapshot``)."""
    node = shutil.which("node")
    assert node, "Node.js is required for this test (python build.py test installs it)"
    pyodide_dir = Path(os.environ.get("PYSSE_PYODIDE") or site / "pyodide" / "314.0.7")
    cfg = json.loads((site / "site.json").read_text())
    wheels = [str(site / w) for w in cfg["wheels"]]
    script = tmp_path / "run.js"
    if how == "wheels":
        script.write_text(NODE)
        args = [str(pyodide_dir), json.dumps(wheels)]
    else:
        script.write_text(NODE_SITE)
        args = [str(site), how]
    proc = subprocess.run(
        [node, str(script), *args, code, payload],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.mark.parametrize("how", ["wheels", "plain", "snapshot"])
def test_pure_layers_match_cpython_under_pyodide(site: Path, tmp_path: Path, how: str) -> None:
    fixtures = {name: body.hex() for name, body, _ in load_fixtures()}
    math = (Path(__file__).parent / "fixtures" / "answer_math.md").read_text()
    hard_tex = [
        "\\sqrt" * 199 + "x",
        "x^{" * 24 + "x" + "}" * 24,
        "\\frac" * 120 + "ab" * 120,
        "\\left(" * 24 + "x" + "\\right)" * 24,
        "\\begin{matrix}" * 12 + "x" + "\\end{matrix}" * 12,
        "{" * 25 + "x" + "}" * 25,
        "\\text{<img src=x onerror=alert(1)>}",
    ]
    payload = json.dumps(
        {"fixtures": fixtures, "markdown": RICH_ANSWER, "math": math, "hard_tex": hard_tex}
    )
    got = run_in_pyodide(site, tmp_path, CHECK, payload, how)
    assert got["python"].startswith("3.14")

    # The very same check, run here in CPython, must give the very same answers.
    scope: dict[str, object] = {"INPUT": payload}
    exec(
        compile(CHECK.replace("json.dumps(out)", "RESULT = json.dumps(out)"), "check", "exec"),
        scope,
    )
    want = json.loads(str(scope["RESULT"]))
    assert got["fixtures"] == want["fixtures"]
    assert got["markdown"] == want["markdown"]
    assert got["hostile"] == want["hostile"]
    assert got["reconnect"] == want["reconnect"] and got["reconnect"][-1] is None
    for key in ("math", "math_holdback", "math_stream", "hard_tex"):
        assert got[key] == want[key], key
    assert got["math"].count("<math") == 12 and got["math_stream"] == got["math"]
    assert "<img" not in "".join(got["hard_tex"])
    for name, (text, outcome, kind) in got["hostile"].items():
        if name.startswith("deep"):
            assert (text, outcome, kind) == ("before ", "error", "malformed"), name
        else:
            assert (text, outcome, kind) == ("before ", "completed", None), name


def test_cpython_test_env_uses_the_browser_wheel_versions() -> None:
    import importlib.metadata
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import build

    for spec in build.BROWSER_WHEELS:
        name, version = spec.split("==")
        assert importlib.metadata.version(name) == version, spec


SHAPES_CHECK = r"""
import json, sys, types
data = json.loads(INPUT)
dom_model = types.ModuleType("dom_model")
sys.modules["dom_model"] = dom_model
exec(compile(data["dom_model"], "dom_model.py", "exec"), dom_model.__dict__)
from pysse.render import hold_back, render
out = {"python": sys.version.split()[0], "shapes": {}}
for name, text in data["shapes"].items():
    rows = []
    for cuts in data["cuts"]:
        s = dom_model.stream_into_dom(text, cuts)  # raises if a settled node ever changed
        rows.append([s.html == render(text), s.md.text == text, s.md._blocks.rescues, s.html])
    out["shapes"][name] = rows
deep = "[" * 40000 + "]"
out["hold_back"] = hold_back(deep) == deep
out["zeek"] = render("```zeek\n" + "0" * 700 + "x\n```\n")
json.dumps(out)
"""


def test_streaming_shapes_under_pyodide(site: Path, tmp_path: Path) -> None:
    """Every prefix of each answer shape (1-character and random deltas) through the model DOM
    in real Pyodide: settled nodes never change, the final HTML equals the one-shot render
    there and equals CPython's; hold-back and the lexer allow-list hold there too."""
    shapes = {name: make(12) for name, make in SHAPES.items()}
    cuts = [[1], [3, 1, 8, 2, 13, 5]]
    dom_model = (Path(__file__).parent / "dom_model.py").read_text()
    payload = json.dumps({"shapes": shapes, "cuts": cuts, "dom_model": dom_model})
    got = run_in_pyodide(site, tmp_path, SHAPES_CHECK, payload)
    assert got["python"].startswith("3.14")
    for name, text in shapes.items():
        for (same, text_ok, rescues, html), c in zip(got["shapes"][name], cuts, strict=True):
            assert same and text_ok and rescues == 0, (name, c)
            assert html == render(text), name  # and the same HTML as CPython
    assert got["hold_back"] is True
    assert "hl-" not in got["zeek"] and "0000" in got["zeek"]
