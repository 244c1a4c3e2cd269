"""Command line: look at a raw stream the way pysse sees it.

    python -m pysse dump [FILE|-] [--comments] [--chat] [--format F] [--timing]
    python -m pysse replay FILE [--chunk N] [--format F] [--all-sizes]

``dump`` prints one JSON line per SSE event (or, with ``--chat``, per normalized chat event)
as soon as it arrives, so ``curl -N ... | python -m pysse dump -`` shows a live stream.
``replay`` feeds a saved stream at a chosen chunk size and prints the chat events and a
summary; ``--all-sizes`` checks that whole, 1000, 60, 20 and 1-byte chunks agree.

Exit status: 0 done, 1 the stream itself is bad (``dump``: not an event stream; ``replay
--all-sizes``: the sizes disagree), 2 no stream to read (a missing, unreadable or empty file,
a directory; one line on stderr says which).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from typing import IO, Any

from .chat import ChatStream
from .errors import SSEProtocolError
from .events import event_to_dict
from .inspector import compare_chunk_sizes, cut
from .providers import FORMATS
from .sse import SSEParser


class InputProblem(Exception):
    """The file cannot be read as a stream: one line for stderr, and exit status 2."""


def _open(path: str) -> IO[bytes]:
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise InputProblem(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputProblem(f"{path} is a directory, not a saved stream") from None
    except PermissionError:
        raise InputProblem(f"{path} cannot be read: permission denied") from None
    except OSError as exc:
        raise InputProblem(f"{path} cannot be read: {exc.strerror or exc}") from None


def _chunks(path: str) -> Iterator[bytes]:
    """Yield bytes as they arrive (stdin is read with os.read, not a full buffered read).
    A file that cannot be read, or no bytes at all, is an ``InputProblem``."""
    name = "stdin" if path == "-" else path
    total = 0
    with contextlib.nullcontext(sys.stdin.buffer) if path == "-" else _open(path) as f:
        fd = f.fileno() if path == "-" else None
        while True:
            try:
                chunk = os.read(fd, 65536) if fd is not None else f.read(65536)
            except OSError as exc:
                raise InputProblem(
                    f"{name}: reading failed after {total} bytes: {exc.strerror or exc}"
                ) from None
            if not chunk:
                break
            total += len(chunk)
            yield chunk
    if total == 0:
        raise InputProblem(f"{name} is empty (0 bytes): no stream to read")


def _emit(out: IO[str], obj: dict[str, Any]) -> None:
    out.write(json.dumps(obj, ensure_ascii=False) + "\n")
    out.flush()


def summary(cs: ChatStream, seconds: float | None = None) -> dict[str, Any]:
    usage = cs.usage
    out: dict[str, Any] = {
        "type": "summary",
        "format": cs.detected_format,
        "outcome": str(cs.outcome),
        "finish_reason": cs.finish_reason,
        "detail": cs.finish_detail,
        "text_chars": len(cs.text),
        "bytes": cs.bytes_fed,
        "sse_events": cs.sse_events,
        "usage": None if usage is None else [usage.input_tokens, usage.output_tokens],
    }
    if cs.error is not None:
        out["error"] = {"kind": cs.error.kind, "message": cs.error.message}
    if seconds is not None:
        out["seconds"] = round(seconds, 4)
    return out


def cmd_dump(args: argparse.Namespace, out: IO[str]) -> int:
    t0 = time.perf_counter()

    def stamp(obj: dict[str, Any]) -> dict[str, Any]:
        if args.timing:
            obj["t"] = round(time.perf_counter() - t0, 4)
        return obj

    if args.chat:
        cs = ChatStream(args.format)
        for chunk in _chunks(args.file):
            for ev in cs.feed(chunk):
                _emit(out, stamp(event_to_dict(ev)))
        for ev in cs.close():
            _emit(out, stamp(event_to_dict(ev)))
        _emit(out, summary(cs, time.perf_counter() - t0 if args.timing else None))
        return 0
    comment_cb = (lambda c: _emit(out, stamp({"comment": c}))) if args.comments else None
    parser = SSEParser(on_comment=comment_cb)
    try:
        for chunk in _chunks(args.file):
            for sse in parser.feed(chunk):
                _emit(out, stamp(sse._asdict()))
        parser.close()
    except SSEProtocolError as exc:
        for sse in exc.events:
            _emit(out, stamp(sse._asdict()))
        print(f"pysse: {exc}", file=sys.stderr)
        return 1
    if parser.incomplete:
        print("pysse: the stream ended inside an event (discarded)", file=sys.stderr)
    return 0


def cmd_replay(args: argparse.Namespace, out: IO[str]) -> int:
    data = b"".join(_chunks(args.file))
    if args.all_sizes:
        rows = compare_chunk_sizes(data, fmt=args.format)
        for row in rows:
            _emit(out, row)
        return 0 if all(r["same"] for r in rows) else 1
    t0 = time.perf_counter()
    cs = ChatStream(args.format)
    for piece in cut(data, args.chunk):
        for e in cs.feed(piece):
            _emit(out, event_to_dict(e))
    for e in cs.close():
        _emit(out, event_to_dict(e))
    _emit(out, summary(cs, time.perf_counter() - t0))
    return 0


def main(argv: list[str] | None = None, out: IO[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pysse", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump", help="print each event of a raw stream as a JSON line")
    d.add_argument("file", nargs="?", default="-", help="a saved stream, or - for stdin")
    d.add_argument("--comments", action="store_true", help="also show : comment lines")
    d.add_argument("--chat", action="store_true", help="normalized chat events + summary")
    d.add_argument("--format", default="auto", choices=FORMATS)
    d.add_argument("--timing", action="store_true", help="add arrival time t (seconds)")
    r = sub.add_parser("replay", help="feed a saved stream at a chosen chunk size")
    r.add_argument("file")
    r.add_argument("--chunk", type=int, default=0, help="bytes per feed (0: whole file)")
    r.add_argument("--format", default="auto", choices=FORMATS)
    r.add_argument("--all-sizes", action="store_true", help="compare whole/1000/60/20/1")
    args = ap.parse_args(argv)
    stream = out or sys.stdout
    try:
        if args.cmd == "dump":
            return cmd_dump(args, stream)
        return cmd_replay(args, stream)
    except InputProblem as exc:
        print(f"pysse: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except BrokenPipeError:  # `... | head`: the reader left, which is fine
        sys.stderr.close()
        raise SystemExit(0) from None
