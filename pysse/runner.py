"""What runs a Python code block when its Run button is pressed, inside the Run sandbox.

The sandbox (``web/runner.html``) is a disposable Pyodide in a worker of an opaque-origin
iframe, never the page's Python; it has no pysse. ``build.py`` copies this module's source
into runner.html, and the sandbox's worker imports it from there. So it imports only the
standard library, and everything it decides is testable here in CPython:

- the block runs as ``__main__`` in a fresh namespace, top-level ``await`` allowed;
- stdout and stderr reach ``send(stream, text)`` batched (one message per ~50 ms, not one per
  ``print``: a loop that prints a million lines must not send a million messages) and bounded
  (``MAX_OUTPUT`` characters a run, then one note that the rest was cut);
- a failure is its traceback trimmed to the user's code: the runner's own frames are dropped,
  and the block's lines are shown (``linecache``), as a reader expects from a terminal.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import io
import linecache
import sys
import time
import traceback
from collections.abc import Callable

__all__ = ["CELL", "MAX_OUTPUT", "Output", "run", "trimmed_traceback"]

CELL = "<block>"  # the block's file name in tracebacks
MAX_OUTPUT = 100_000  # characters of stdout and stderr a run (the page bounds them again)
FLUSH_SECONDS = 0.05
FLUSH_CHARS = 8192

Send = Callable[[str, str], object]


class Output:
    """One run's stdout and stderr: batched, in order, at most ``limit`` characters."""

    def __init__(
        self, send: Send, limit: int = MAX_OUTPUT, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.send, self.limit, self.clock = send, limit, clock
        self.used = 0
        self.cut = False
        self.pending: list[list[str]] = []  # [stream, text] in order, neighbours merged
        self.pending_chars = 0
        self.last = clock()

    def write(self, stream: str, text: str) -> None:
        if self.cut or not text:
            return
        room = self.limit - self.used
        if len(text) > room:
            text, self.cut = text[:room], True
        self.used += len(text)
        self._add(stream, text)
        if self.cut:
            self._add("stderr", f"\n[output cut: more than {self.limit:,} characters]\n")
            self.flush()
        elif self.pending_chars >= FLUSH_CHARS or self.clock() - self.last >= FLUSH_SECONDS:
            self.flush()

    def _add(self, stream: str, text: str) -> None:
        if self.pending and self.pending[-1][0] == stream:
            self.pending[-1][1] += text
        else:
            self.pending.append([stream, text])
        self.pending_chars += len(text)

    def flush(self) -> None:
        items, self.pending, self.pending_chars = self.pending, [], 0
        self.last = self.clock()
        for stream, text in items:
            if text:
                self.send(stream, text)


class Stream(io.TextIOBase):
    """``sys.stdout`` or ``sys.stderr`` during a run: text into the run's ``Output``."""

    def __init__(self, name: str, out: Output) -> None:
        self.name_, self.out = name, out

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        self.out.write(self.name_, str(s))
        return len(s)

    def flush(self) -> None:
        self.out.flush()


def trimmed_traceback(exc: BaseException) -> str:
    """``exc``'s traceback from the block's first frame on: the frames of the runner that
    called the block are not the reader's code. A syntax error (no frame of the block) is
    its message and the line, caret included."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != CELL:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))


async def run(code: str, send: Send, limit: int = MAX_OUTPUT) -> bool:
    """Run ``code`` as a fresh ``__main__``; its output goes to ``send``. True if it ended
    without an exception."""
    out = Output(send, limit)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Stream("stdout", out), Stream("stderr", out)
    linecache.cache[CELL] = (len(code), None, code.splitlines(True), CELL)
    ns: dict[str, object] = {"__name__": "__main__", "__builtins__": builtins}
    ok = True
    try:
        flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        compiled = compile(code, CELL, "exec", flags=flags, dont_inherit=True)
        result = eval(compiled, ns)  # (a coroutine if the block awaits at its top level)
        if inspect.iscoroutine(result):
            await result
    except BaseException as e:  # the block's own exception, SystemExit included: reported
        ok = False
        sys.stderr.write(trimmed_traceback(e))
    finally:
        out.flush()
        sys.stdout, sys.stderr = saved
    return ok
