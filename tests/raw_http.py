"""A raw HTTP/1.1 client for the testing kit's own tests: it shows the HTTP chunks themselves
and whether the body was properly ended, which no ordinary client does."""

from __future__ import annotations

import socket


def send_raw(url: str, body: bytes = b"{}", extra: str = "") -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=30)
    sock.sendall(
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json"
        f"\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode()
        + body
    )
    return sock


def read_to_eof(sock: socket.socket) -> bytes:
    parts = []
    while data := sock.recv(65536):
        parts.append(data)
    sock.close()
    return b"".join(parts)


def parse(raw: bytes) -> tuple[str, dict[str, str], list[bytes], bool]:
    """Status line, headers, the body's HTTP chunks, and whether the terminating chunk came."""
    head, _, rest = raw.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    if "content-length" in headers:
        return status, headers, [rest], len(rest) == int(headers["content-length"])
    chunks = []
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return status, headers, chunks, rest == b"\r\n"
        chunks.append(rest[:size])
        if len(rest) < size + 2:
            break
        rest = rest[size + 2 :]
    return status, headers, chunks, False


def exchange(url: str) -> tuple[str, dict[str, str], list[bytes], bool]:
    return parse(read_to_eof(send_raw(url)))
