"""server/static.py: the site's files with their precompressed siblings chosen by
Accept-Encoding, the right type and cache headers, and 304s; on a real server (LiveServer)."""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


def test_a_sibling_swapped_for_a_link_while_serving_is_sent_whole(
    served: tuple[LiveServer, Path], tmp_path: Path
) -> None:
    # build.py serve swaps brotli-9 siblings for links to brotli-11 files while it serves
    # (buildtools/compress.upgrade): the length sent is always the target's.
    live, site = served
    sibling = site / "boot" / "0123456789ab" / "x.wasm.br"
    url = live.url + "/boot/0123456789ab/x.wasm"
    for quality in (1, 11):
        target = tmp_path / f"q{quality}.br"
        target.write_bytes(brotli.compress(WASM, quality=quality))
        link = sibling.with_name("swap")
        link.symlink_to(target)
        link.replace(sibling)
        with httpx.stream("GET", url, headers={"accept-encoding": "br"}) as r:
            raw = b"".join(r.iter_raw())
        assert raw == target.read_bytes() and int(r.headers["content-length"]) == len(raw)
        assert brotli.decompress(raw) == WASM


def test_serve_upgrades_brotli_9_to_11_in_place(tmp_path: Path) -> None:
    from buildtools import compress

    site, cache = tmp_path / "site", tmp_path / "cache"
    (site / "boot").mkdir(parents=True)
    big = bytes(range(256)) * 8192 + b"pysse " * 300_000  # over 1 MB: brotli 9 when not best
    (site / "boot" / "big.bin").write_bytes(big)
    (site / "small.js").write_text("let x = 1;\n" * 200)  # small: brotli 11 at once
    compress.compress_site(site, cache, best=False, log=lambda m: None)
    q9 = (site / "boot" / "big.bin.br").read_bytes()
    logged: list[str] = []
    assert compress.upgrade(site, cache, logged.append) == 1
    sibling = site / "boot" / "big.bin.br"
    assert sibling.is_symlink() and brotli.decompress(sibling.read_bytes()) == big
    assert len(sibling.read_bytes()) < len(q9) and "brotli 11 now served for 1 files" in logged[0]
    assert compress.upgrade(site, cache, logged.append) == 0  # done once


def test_a_swap_between_stat_and_open_still_sends_one_whole_file(
    served: tuple[LiveServer, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    live, site = served
    sibling = site / "boot" / "0123456789ab" / "x.wasm.br"
    old, new = tmp_path / "old.br", tmp_path / "new.br"
    old.write_bytes(brotli.compress(WASM, quality=1))
    new.write_bytes(brotli.compress(WASM, quality=11))
    assert len(old.read_bytes()) != len(new.read_bytes())
    link = sibling.with_name("swap")
    link.symlink_to(old)
    link.replace(sibling)
    real_stat = os.stat
    seen: list[str] = []

    def stat_then_swap(path: Any, *args: Any, **kw: Any) -> os.stat_result:
        result = real_stat(path, *args, **kw)
        if str(path) in (str(sibling), str(old)):
            seen.append(str(path))
            if len(seen) == 2:  # the size for the response is read (the first: isfile)
                link.symlink_to(new)
                link.replace(sibling)
        return result

    monkeypatch.setattr(os, "stat", stat_then_swap)  # what the server thread calls too
    with httpx.stream(
        "GET", live.url + "/boot/0123456789ab/x.wasm", headers={"accept-encoding": "br"}
    ) as r:
        raw = b"".join(r.iter_raw())
    monkeypatch.undo()
    assert len(seen) >= 2 and int(r.headers["content-length"]) == len(raw)
    assert raw == old.read_bytes() and brotli.decompress(raw) == WASM
