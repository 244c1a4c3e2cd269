"""The pure-Python layers under real Pyodide (Python 3.14, Node + the npm package), compared
with CPython on the same inputs, so a CPython-only (or 3.14-only) slip is caught."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from fixtures_util import load_fixtures
from pysse.server.demo import RICH_ANSWER

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


def test_pure_layers_match_cpython_under_pyodide(site: Path, tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node, "Node.js is required for this test (python build.py test installs it)"
    pyodide_dir = Path(os.environ.get("PYSSE_PYODIDE") or site / "pyodide" / "314.0.7")
    cfg = json.loads((site / "site.json").read_text())
    wheels = [str(site / w) for w in cfg["wheels"]]
    fixtures = {name: body.hex() for name, body, _ in load_fixtures()}
    script = tmp_path / "run.js"
    script.write_text(NODE)
    payload = json.dumps({"fixtures": fixtures, "markdown": RICH_ANSWER})
    proc = subprocess.run(
        [node, str(script), str(pyodide_dir), json.dumps(wheels), CHECK, payload],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout)
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
