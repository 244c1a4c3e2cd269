"""docs/testing-kit.md: every Python example there is a test, and runs here as written (taken
from the file itself, so the page cannot rot)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

import pytest

from pysse.testing import ScriptServer

DOC = Path(__file__).resolve().parents[1] / "docs" / "testing-kit.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)


def examples_in(block: str) -> dict[str, Any]:
    # as if saved in tests/, beside the fixtures an example reads
    scope: dict[str, Any] = {"__file__": str(DOC.parents[1] / "tests" / "test_my_page.py")}
    exec(compile(block, str(DOC), "exec"), scope)
    return {name: f for name, f in scope.items() if name.startswith("test_")}


def needs(f: Any) -> list[str]:
    return list(inspect.signature(f).parameters)


ALL = [(name, f) for block in BLOCKS for name, f in examples_in(block).items()]
# The examples that need only the kit's server run here; the one that drives a page with
# pytest-playwright (``page``) is run verbatim by tests/test_testing_browser.py.
EXAMPLES = [(name, f) for name, f in ALL if needs(f) == ["sse_server"]]


def test_the_page_has_examples() -> None:
    assert all(examples_in(block) for block in BLOCKS)  # a test in every block
    assert len(EXAMPLES) >= 3
    assert all(needs(f) in (["sse_server"], ["page", "app_url", "sse_server"]) for _, f in ALL)


@pytest.mark.parametrize(("name", "example"), EXAMPLES, ids=[n for n, _ in EXAMPLES])
def test_example(name: str, example: Any, sse_server: ScriptServer) -> None:
    example(sse_server)
