"""The reconnection time a ``retry:`` field sets (WHATWG HTML, 9.2.6), for ``pysse.sse``.

The spec sets it from any run of ASCII digits, however long. ``int()`` refuses more than 4,300
digits (and is quadratic below that), so the digits are counted first: up to
:data:`RETRY_DIGITS` significant digits the value is exact; a longer one (more than 10**4299
ms) is kept as :data:`RETRY_SATURATED`, which is larger than every exact value. It never
raises; whoever waits the delay caps it (``pysse.call.reconnect`` caps it at its outage
bound, before converting it to a float).
"""

from __future__ import annotations

import sys

__all__ = ["RETRY_DIGITS", "RETRY_SATURATED", "retry_value"]

RETRY_DIGITS: int = 4300
"""``retry:`` values are exact up to this many significant digits: CPython's default limit for
``int(str)``, past which a delay is over 10**4299 ms anyway."""
RETRY_SATURATED: int = 10**RETRY_DIGITS
"""What ``SSEParser.retry`` holds for a ``retry:`` with more than :data:`RETRY_DIGITS`
significant digits: larger than every exact value, so every cap still applies."""


def retry_value(digits: str) -> int:
    """The reconnection time a ``retry:`` field of ASCII digits sets (see the module docstring):
    counted before it is converted, so no length can make ``int()`` raise or take long."""
    significant = digits.lstrip("0")
    # The interpreter's own limit may be lower (PYTHONINTMAXSTRDIGITS; 0 means none).
    limit = min(RETRY_DIGITS, sys.get_int_max_str_digits() or RETRY_DIGITS)
    if len(significant) > limit:
        return RETRY_SATURATED
    return int(significant or "0")
