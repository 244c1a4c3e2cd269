"""server/static.py: the site's files with their precompressed siblings chosen by
Accept-Encoding, the right type and cache headers, and 304s; on a real server (LiveServer)."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import brotli
import httpx
import pytest

from pysse.server.app import create_app
from pysse.server.static import cache_control, choose_encoding
from support import LiveServer

WASM = b"\0asm" + bytes(range(256)) * 64


@pytest.mark.parametrize(
    ("accept", "available", "want"),
    [
        ("gzip, deflate, br, zstd", ("br", "gzip"), "br"),  # Chromium on HTTPS / loopback
        ("gzip, deflate", ("br", "gzip"), "gzip"),  # Chromium on plain HTTP to a LAN host
        ("gzip, deflate, br", ("gzip",), "gzip"),  # no .br written
        ("br;q=0, gzip", ("br", "gzip"), "gzip"),  # refused
        ("br;q=0.5, gzip;q=0.9", ("br", "gzip"), "gzip"),  # the client's preference wins
        ("br;q=0.9, gzip;q=0.9", ("br", "gzip"), "br"),  # a tie: the smaller one
        ("*", ("br", "gzip"), "br"),
        ("*, br;q=0", ("br", "gzip"), "gzip"),
        ("x-gzip", ("br", "gzip"), "gzip"),
        ("identity", ("br", "gzip"), None),
        ("", ("br", "gzip"), None),
        ("br;q=nonsense, GZIP", ("br", "gzip"), "gzip"),
    ],
)
def test_choose_encoding(accept: str, available: tuple[str, ...], want: str | None) -> None:
    assert choose_encoding(accept, available) == want  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Path]]:
    site = tmp_path_factory.mktemp("site")
    (site / "index.html").write_text("<!doctype html><title>t</title>" + "x" * 2000)
    (site / "site.json").write_text("{}")
    (site / "app.js").write_text("console.log(1);\n" * 200)
    (site / "app.js.gz").write_bytes(gzip.compress((site / "app.js").read_bytes()))
    boot = site / "boot" / "0123456789ab"
    boot.mkdir(parents=True)
    (boot / "x.wasm").write_bytes(WASM)
    (boot / "x.wasm.br").write_bytes(brotli.compress(WASM))
    (boot / "x.wasm.gz").write_bytes(gzip.compress(WASM))
    with LiveServer(create_app(site)) as live:
        yield live, site


def get(url: str, accept: str, **headers: str) -> httpx.Response:
    # httpx decodes br and gzip bodies itself: the body checks below see the original bytes
    return httpx.get(url, headers={"accept-encoding": accept, **headers})


def test_brotli_when_offered_else_gzip_else_the_file(served: tuple[LiveServer, Path]) -> None:
    live, _ = served
    url = live.url + "/boot/0123456789ab/x.wasm"
    for accept, enc in (("gzip, deflate, br", "br"), ("gzip, deflate", "gzip"), ("identity", None)):
        r = get(url, accept)
        assert r.status_code == 200 and r.content == WASM, accept
        assert r.headers.get("content-encoding") == enc, accept
        assert r.headers["content-type"] == "application/wasm"
        assert r.headers["vary"] == "Accept-Encoding"
        assert r.headers["cache-control"] == "public, max-age=31536000, immutable"
    with httpx.stream("GET", url, headers={"accept-encoding": "br"}) as r:
        raw = b"".join(r.iter_raw())
    assert raw == brotli.compress(WASM) and int(r.headers["content-length"]) == len(raw)


def test_mutable_files_are_revalidated_and_304_per_encoding(
    served: tuple[LiveServer, Path],
) -> None:
    live, _ = served
    r = get(live.url + "/app.js", "gzip, br")  # only a .gz beside it
    assert r.headers["content-encoding"] == "gzip"
    assert r.headers["content-type"].startswith("text/javascript")
    assert r.headers["cache-control"] == "no-cache"
    again = get(live.url + "/app.js", "gzip, br", **{"if-none-match": r.headers["etag"]})
    assert again.status_code == 304
    plain = get(live.url + "/app.js", "identity", **{"if-none-match": r.headers["etag"]})
    assert plain.status_code == 200 and "content-encoding" not in plain.headers  # another etag
    index = get(live.url + "/", "br")
    assert index.headers["cache-control"] == "no-cache" and "<title>t</title>" in index.text
    assert "vary" not in index.headers  # nothing precompressed beside it
    assert get(live.url + "/boot/0123456789ab/nope.wasm", "br").status_code == 404


@pytest.mark.parametrize(
    ("path", "immutable"),
    [
        ("wheels/simple/pysse/0123456789ab/pysse-0.1.0-py3-none-any.whl", True),
        ("wheels/simple/pysse/0123456789ab/pysse-0.1.0-py3-none-any.whl.metadata", True),
        ("boot/0123456789ab/pysse-app.zip", True),
        ("pyodide/314.0.7/pyodide.asm.wasm", True),
        ("wheels/simple/pysse/", False),  # the index changes with every build: revalidated
        ("wheels/simple/pysse/index.html", False),
        ("wheels/wheels.json", False),
        ("wheels/install.js", False),
        ("index.html", False),
    ],
)
def test_only_content_addressed_files_are_immutable(path: str, immutable: bool) -> None:
    assert (cache_control(path) == "public, max-age=31536000, immutable") is immutable
