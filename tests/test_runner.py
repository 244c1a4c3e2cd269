"""``pysse.runner``: what the Run sandbox executes around a code block, in CPython (the
sandbox runs the same source in its own Pyodide): output batched and bounded, the
traceback trimmed to the block's frames, top-level ``await``, a fresh ``__main__``."""

from __future__ import annotations

import asyncio

from pysse import runner


def run(code: str, limit: int = runner.MAX_OUTPUT) -> tuple[bool, list[tuple[str, str]]]:
    sent: list[tuple[str, str]] = []
    ok = asyncio.run(runner.run(code, lambda s, t: sent.append((s, t)), limit))
    return ok, sent


def joined(sent: list[tuple[str, str]]) -> str:
    return "".join(t for _, t in sent)


def test_output_in_order_with_its_stream() -> None:
    ok, sent = run("import sys\nprint('a')\nprint('b', file=sys.stderr)\nprint('c')")
    assert ok
    assert sent == [("stdout", "a\n"), ("stderr", "b\n"), ("stdout", "c\n")]


def test_a_traceback_shows_the_blocks_frames_only() -> None:
    ok, sent = run("def f(x):\n    return 1 / x\n\nprint('before')\nf(0)")
    assert not ok
    text = joined(sent)
    assert text.startswith("before\nTraceback (most recent call last):\n")
    frames = [line for line in text.splitlines() if line.startswith("  File ")]
    # the block's two frames, nothing of the runner's (carets differ between versions)
    assert frames == ['  File "<block>", line 5, in <module>', '  File "<block>", line 2, in f']
    assert "    return 1 / x\n" in text  # the block's lines, shown
    assert text.endswith("ZeroDivisionError: division by zero\n")
    assert "runner.py" not in text


def test_a_library_frame_under_the_block_stays() -> None:
    ok, sent = run("import json\njson.loads('{')")
    assert not ok
    text = joined(sent)
    assert 'File "<block>", line 2' in text and "json" in text.split("<block>", 1)[1]
    assert "runner.py" not in text


def test_a_syntax_error_is_its_line_and_caret() -> None:
    ok, sent = run("x = (1,\nprint(x")
    assert not ok
    text = joined(sent)
    assert not text.startswith("Traceback") and "SyntaxError" in text
    assert 'File "<block>", line ' in text and "runner.py" not in text


def test_top_level_await_and_a_fresh_main() -> None:
    ok, sent = run("import asyncio\nawait asyncio.sleep(0)\nprint(__name__, 'x' in dir())\nx = 1")
    assert ok and sent == [("stdout", "__main__ False\n")]
    ok, sent = run("print('x' in globals())")
    assert sent == [("stdout", "False\n")]


def test_output_is_bounded_with_one_note() -> None:
    ok, sent = run("for i in range(10000): print('0123456789')", limit=1000)
    assert ok
    text = joined(sent)
    assert text.startswith("0123456789\n") and text.count("0123456789") == 91
    assert text.endswith("\n[output cut: more than 1,000 characters]\n")
    assert len(text) < 1100


def test_output_is_batched() -> None:
    clock = [0.0]
    got: list[tuple[str, str]] = []
    out = runner.Output(lambda s, t: got.append((s, t)), clock=lambda: clock[0])
    for _ in range(100):
        out.write("stdout", "x")
    assert got == []  # not one message a print
    clock[0] = 1.0
    out.write("stdout", "y")
    assert got == [("stdout", "x" * 100 + "y")]
    out.write("stderr", "z")
    out.flush()
    assert got[-1] == ("stderr", "z")


def test_system_exit_is_reported_not_raised() -> None:
    ok, sent = run("raise SystemExit(3)")
    assert not ok and joined(sent).endswith("SystemExit: 3\n")


def test_the_streams_come_back() -> None:
    import sys

    before = sys.stdout, sys.stderr
    run("print(1)")
    assert (sys.stdout, sys.stderr) == before


def test_build_inlines_the_runner_and_hashes_its_script() -> None:
    import base64
    import hashlib
    import re
    from pathlib import Path

    import build

    root = Path(__file__).resolve().parents[1]
    page = build.runner_page(
        (root / "web" / "runner.html").read_text(), (root / "pysse" / "runner.py").read_text()
    )
    assert "RUNNER_PY" not in page and "def trimmed_traceback" in page
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert csp is not None
    policy = csp.group(1)
    assert "default-src 'none'" in policy and "connect-src blob:" in policy
    assert "'self'" not in policy and "http" not in policy
    script = page[page.rindex("<script>") + 8 : page.rindex("</script>")]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"'sha256-{digest}'" in policy
    assert page.count("<script>") == 1  # one executable script: the hashed one


def test_a_closed_python_block_has_run_and_no_other_does() -> None:
    from pysse.render.markdown import render

    run = 'class="run"'
    assert render("```python\nprint(1)\n```").count(run) == 1
    assert render("```py\nprint(1)\n```").count(run) == 1
    assert run not in render("```js\nconsole.log(1)\n```")
    assert run not in render("```\nprint(1)\n```")
    assert run not in render("    print(1)\n")  # (an indented block names no language)
    assert run not in render("```python\nprint(1)\n")  # still streaming: not closed
