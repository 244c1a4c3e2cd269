"""docs/testing-kit.md: every Python example there is a test, and runs here as written (taken
from the file itself, so the page cannot rot)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from pysse.testing import ScriptServer

DOC = Path(__file__).resolve().parents[1] / "docs" / "testing-kit.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)


def examples_in(block: str) -> dict[str, Any]:
    scope: dict[str, Any] = {}
    exec(compile(block, str(DOC), "exec"), scope)
    return {name: f for name, f in scope.items() if name.startswith("test_")}


EXAMPLES = [(name, f) for block in BLOCKS for name, f in examples_in(block).items()]


def test_the_page_has_examples() -> None:
    assert len(BLOCKS) >= 2 and len(EXAMPLES) == len(BLOCKS)  # one test per block


@pytest.mark.parametrize(("name", "example"), EXAMPLES, ids=[n for n, _ in EXAMPLES])
def test_example(name: str, example: Any, sse_server: ScriptServer) -> None:
    example(sse_server)
