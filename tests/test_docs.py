"""The documents stay true to the tree: README's size (a newcomer reads it in five minutes),
every relative link and image points at a file that exists, every path a document names in
code (`pysse/app/chats.py`, or a module's own name) is in the tree, and every Python block is
valid Python (the ones marked as examples also run: tests/test_chat.py,
test_testing_browser.py)."""

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
TREES = ("pysse", "web", "tests", "bench", "buildtools", "docs", "examples")
# A path in code: from one of the trees (a file with an extension, or a folder), or a bare
# Python module's name (`chats.py`, `blocks/waits.py`: somewhere under the trees).
_TOP = "|".join(TREES)
NAMED = re.compile(
    rf"`((?:{_TOP})/(?:[\w.\-]+/)*(?:[\w\-]+\.(?:py|js|cjs|css|html|md|json|png))?"
    r"|[\w\-/]+\.py)`"
)
# What the documents name on purpose but is not in the tree: a file a reader would write.
EXAMPLES = {"pysse/providers/myformat.py", "pysse/providers/encoders/myformat.py"}


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


def _tree() -> set[str]:
    """Every file and folder under the trees, by its path from the root and every shorter
    tail of it (``render/blocks/waits.py``, ``blocks/waits.py``, ``waits.py``)."""
    out = {p.name for p in ROOT.iterdir()}  # (build.py, pyproject.toml, the trees themselves)
    for top in TREES:
        for path in (ROOT / top).rglob("*"):
            parts = path.relative_to(ROOT).parts
            out.update("/".join(parts[i:]) for i in range(len(parts)))
    return out


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_path_a_document_names_is_in_the_tree(doc: Path) -> None:
    tree = _tree()
    stale = [
        name
        for name in NAMED.findall(doc.read_text())
        if name.rstrip("/") not in tree and name not in EXAMPLES
    ]
    assert stale == [], f"{doc.name} names what the tree does not have: {stale}"
