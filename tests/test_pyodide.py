"""The pure-Python layers under real Pyodide (Python 3.14, Node + the npm package), compared
with CPython on the same inputs, so a CPython-only (or 3.14-only) slip is caught. Run three
ways: the wheels loaded as packages, and the two ways the page boots (web/boot.js): restored
from the site's memory snapshot, and a plain start from its .pyc zips."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from buildtools.pyodide_node import PyodideRunError, run_as_page, run_with_wheels
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
# The page's reconnect policy (pysse.call.reconnect) decides the same in the browser.
import random
from pysse.call.reconnect import Reconnect
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
# CJK emphasis (render/cjk.py reads unicodedata: Pyodide's Unicode is newer than CPython 3.11's)
cjk = data["cjk"]
out["cjk"] = render(cjk)
md = StreamingMarkdown()
for i in range(0, len(cjk), 3):
    md.feed(cjk[i:i + 3])
md.finish()
out["cjk_stream"] = md.html
json.dumps(out)
"""


def run_in_pyodide(site: Path, code: str, payload: str, how: str = "wheels") -> Any:
    """Run ``code`` (which leaves a JSON string as its value) in Pyodide under Node with
    ``INPUT = payload``; its JSON result. ``how``: the site's wheels loaded by Pyodide, or the
    page's own boot (``plain`` from its zips, or its ``snapshot``)."""
    assert shutil.which("node"), (
        "Node.js is required for this test (python build.py test installs it)"
    )
    try:
        if how == "wheels":
            pyodide_dir = Path(os.environ.get("PYSSE_PYODIDE") or site / "pyodide" / "314.0.7")
            cfg = json.loads((site / "site.json").read_text())
            out = run_with_wheels(
                code, payload, pyodide_dir, [str(site / w) for w in cfg["wheels"]]
            )
        else:
            # every lazy bundle installed: the page's answers have what they need by then
            how_ = "snapshot" if how == "snapshot" else "plain"
            out = run_as_page(code, payload, site, how_, lazy=True)
    except PyodideRunError as exc:
        pytest.fail(str(exc))
    return json.loads(out)


@pytest.mark.parametrize("how", ["wheels", "plain", "snapshot"])
def test_pure_layers_match_cpython_under_pyodide(site: Path, how: str) -> None:
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
    cjk = "\n\n".join(
        (Path(__file__).parent / "fixtures" / name).read_text()
        for name in ("cjk_answer.md", "cjk_friendly/strong.md", "cjk_friendly/pseudo-emoji.md")
    )
    payload = json.dumps(
        {
            "fixtures": fixtures,
            "markdown": RICH_ANSWER,
            "math": math,
            "hard_tex": hard_tex,
            "cjk": cjk,
        }
    )
    got = run_in_pyodide(site, CHECK, payload, how)
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
    assert got["cjk"] == want["cjk"] and got["cjk_stream"] == got["cjk"]
    assert "<strong>“强调”</strong>后" in got["cjk"]
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


def test_streaming_shapes_under_pyodide(site: Path) -> None:
    """Every prefix of each answer shape (1-character and random deltas) through the model DOM
    in real Pyodide: settled nodes never change, the final HTML equals the one-shot render
    there and equals CPython's; hold-back and the lexer allow-list hold there too."""
    shapes = {name: make(12) for name, make in SHAPES.items()}
    cuts = [[1], [3, 1, 8, 2, 13, 5]]
    dom_model = (Path(__file__).parent / "dom_model.py").read_text()
    payload = json.dumps({"shapes": shapes, "cuts": cuts, "dom_model": dom_model})
    got = run_in_pyodide(site, SHAPES_CHECK, payload)
    assert got["python"].startswith("3.14")
    for name, text in shapes.items():
        for (same, text_ok, rescues, html), c in zip(got["shapes"][name], cuts, strict=True):
            assert same and text_ok and rescues == 0, (name, c)
            assert html == render(text), name  # and the same HTML as CPython
    assert got["hold_back"] is True
    assert "hl-" not in got["zeek"] and "0000" in got["zeek"]
