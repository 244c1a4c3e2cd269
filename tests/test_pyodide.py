"""The pure-Python layers under real Pyodide (Python 3.14, Node + the npm package), compared
with CPython on the same inputs, so a CPython-only (or 3.14-only) slip is caught."""

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
md = StreamingMarkdown()
text = data["markdown"]
for i in range(0, len(text), 5):
    md.feed(text[i:i + 5])
md.finish()
out["markdown"] = md.html
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


def run_in_pyodide(site: Path, tmp_path: Path, code: str, payload: str) -> Any:
    """Run ``code`` (which leaves a JSON string as its value) in Pyodide under Node, with the
    site's wheels loaded and ``INPUT = payload``; its JSON result."""
    node = shutil.which("node")
    assert node, "Node.js is required for this test (python build.py test installs it)"
    pyodide_dir = Path(os.environ.get("PYSSE_PYODIDE") or site / "pyodide" / "314.0.7")
    cfg = json.loads((site / "site.json").read_text())
    wheels = [str(site / w) for w in cfg["wheels"]]
    script = tmp_path / "run.js"
    script.write_text(NODE)
    proc = subprocess.run(
        [node, str(script), str(pyodide_dir), json.dumps(wheels), code, payload],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_pure_layers_match_cpython_under_pyodide(site: Path, tmp_path: Path) -> None:
    fixtures = {name: body.hex() for name, body, _ in load_fixtures()}
    payload = json.dumps({"fixtures": fixtures, "markdown": RICH_ANSWER})
    got = run_in_pyodide(site, tmp_path, CHECK, payload)
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
