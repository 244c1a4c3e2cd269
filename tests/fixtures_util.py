"""Shared by the tests: the fixture streams with their expected results, and the reference
parse every other reading must agree with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pysse import ChatStream

FIXTURES = Path(__file__).parent / "fixtures"  # noqa: RUF100


def load_fixtures() -> list[tuple[str, bytes, dict[str, Any]]]:
    expected = json.loads((FIXTURES / "expected.json").read_text())
    return [(name, (FIXTURES / f"{name}.sse").read_bytes(), exp) for name, exp in expected.items()]


def reference(body: bytes) -> ChatStream:
    """The stream parsed whole: what every other way of reading it must agree with."""
    cs = ChatStream()
    cs.feed(body)
    cs.close()
    return cs
