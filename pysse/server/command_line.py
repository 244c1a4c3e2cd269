"""How ``pysse-relay`` and ``python build.py`` say that a setting is wrong: one line on stderr,
``PROG: what is wrong: what to do``, and exit status 2, as ``python -m pysse dump`` does for
a missing file. Never a traceback, never argparse's usage block: a person reads one line
and fixes one setting (``PROG --help`` still lists them all).

Standard library only: ``build.py`` imports this before its virtual environment exists.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

__all__ = [
    "CONFIG_ERROR_STATUS",
    "OneLineParser",
    "exit_with",
    "header_name",
    "port_number",
    "positive_count",
    "positive_seconds",
    "seconds_or_zero",
]

CONFIG_ERROR_STATUS = 2  # argparse's own status for a bad command line


def exit_with(prog: str, message: str) -> NoReturn:
    """Print ``PROG: message`` as the one line on stderr and exit with status 2."""
    print(f"{prog}: {message}", file=sys.stderr, flush=True)
    raise SystemExit(CONFIG_ERROR_STATUS)


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors (an unknown choice, a missing option, a value that
    is not a number) are one line and exit status 2, naming the option as argparse does.
    Its subcommands' parsers are of this class too (argparse makes them with the parent's
    class)."""

    def error(self, message: str) -> NoReturn:
        exit_with(self.prog, f"{message} ({self.prog} --help lists the options)")


def _number(text: str, kind: type[int] | type[float], what: str) -> float:
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, not {text!r}") from None


def port_number(text: str) -> int:
    """``--port``: 1 to 65535 (0 would be a port the banner could not name)."""
    port = int(_number(text, int, "a port number from 1 to 65535"))
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number from 1 to 65535, not {text}")
    return port


def positive_count(text: str) -> int:
    """A count or a size in bytes: a whole number above 0 (0 or less would refuse
    everything, or nothing, without saying so)."""
    value = int(_number(text, int, "a whole number above 0"))
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number above 0, not {text}")
    return value


_TOKEN_CHARS = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz")


def header_name(text: str) -> str:
    """``--allow-header``: a header's name alone (an RFC 9110 token), lower-cased. A value or
    a colon in it would put a name no browser sends into the CORS answer: every preflight
    asking for the real one would fail, far from this typo."""
    name = text.strip().lower()
    if not name or not set(name) <= _TOKEN_CHARS:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a header name: give the name alone, e.g. x-user-id"
        )
    return name


def positive_seconds(text: str) -> float:
    """A timeout or a lifetime: a number of seconds above 0."""
    value = _number(text, float, "a number of seconds above 0")
    if not value > 0:  # also NaN
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, not {text}")
    return value


def seconds_or_zero(text: str) -> float:
    """An interval where 0 means never: 0 or more seconds."""
    value = _number(text, float, "a number of seconds, 0 for never")
    if not value >= 0:  # also NaN
        raise argparse.ArgumentTypeError(f"expected a number of seconds, 0 for never, not {text}")
    return value
