"""Coverage-guided fuzzing with atheris (libFuzzer), when it installs: the same three entry
points and the same rules as bench/fuzz.py, on inputs libFuzzer evolves.

    python build.py fuzz --minutes 10 --atheris
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    from pysse import ChatStream, SSEParser, SSEProtocolError
    from pysse.render import StreamingMarkdown, render


def chunks_of(data: bytes, sizes: list[int]) -> list[bytes]:
    out, i = [], 0
    for n in sizes:
        out.append(data[i : i + n])
        i += n
    out.append(data[i:])
    return out


def events(parts: list[bytes]) -> tuple[list[object], bool]:
    p = SSEParser(max_line_bytes=256)
    got: list[object] = []
    try:
        for c in parts:
            got += p.feed(c)
        p.close()
    except SSEProtocolError as exc:
        return got + exc.events, True
    return got, False


def test_one_input(raw: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(raw)
    sizes = [fdp.ConsumeIntInRange(0, 64) for _ in range(fdp.ConsumeIntInRange(0, 16))]
    data = fdp.ConsumeBytes(fdp.remaining_bytes())
    if events([data]) != events(chunks_of(data, sizes)):
        raise AssertionError("SSEParser depends on chunking")
    whole, cut = ChatStream(max_line_bytes=256), ChatStream(max_line_bytes=256)
    whole.feed(data)
    for c in chunks_of(data, sizes):
        cut.feed(c)
    whole.close()
    cut.close()
    if (whole.text, whole.outcome) != (cut.text, cut.outcome):
        raise AssertionError("ChatStream depends on chunking")
    text = data.decode("utf-8", "replace")
    md = StreamingMarkdown()
    for c in chunks_of(text.encode(), sizes):
        md.feed(c.decode("utf-8", "replace"))
    md.finish()
    if md.html != render(md.text):
        raise AssertionError("streaming markdown differs from one-shot")


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
