from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"  # noqa: RUF100


def load_fixtures() -> list[tuple[str, bytes, dict[str, Any]]]:
    expected = json.loads((FIXTURES / "expected.json").read_text())
    return [(name, (FIXTURES / f"{name}.sse").read_bytes(), exp) for name, exp in expected.items()]
