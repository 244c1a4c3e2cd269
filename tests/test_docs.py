"""The documents stay true to the tree: README's size (a newcomer reads it in five minutes),
every relative link and image points at a file that exists, and every Python block is valid
Python (the ones marked as examples also run: tests/test_chat.py, test_testing_browser.py)."""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")
PYTHON = re.compile(r"```python\n(.*?)```", re.S)  # also indented, inside a list item


def test_the_readme_is_short() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_relative_links_point_at_files(doc: Path) -> None:
    missing = [
        target
        for target, _ in LINK.findall(doc.read_text())
        if "://" not in target
        and not target.startswith("mailto:")
        and not (doc.parent / target).exists()
    ]
    assert missing == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_python_blocks_are_valid_python(doc: Path) -> None:
    for block in PYTHON.findall(doc.read_text()):
        ast.parse(
            textwrap.dedent(block)
        )  # a top-level await parses too (the browser examples use it)
