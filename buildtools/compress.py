"""Precompressed siblings for a static site: ``FILE.br`` and ``FILE.gz`` beside each file.

A server that negotiates ``Accept-Encoding`` (``pysse.server``; nginx ``gzip_static`` /
``brotli_static``; most static hosts) sends them instead of the file. The boot assets are
big and compress well: the wasm 9.6 MB -> 2.8 MB (brotli), the snapshot 31 MB -> ~3.7 MB.

Brotli at quality 11 is the smallest but slow (~40 s of CPU for the snapshot, ~30 s for the
wasm); quality 9 is 15% bigger and ten times faster. So ``best=True`` (``build.py site`` and
``bench``: what is deployed and measured) compresses at 11, and ``best=False`` (``serve``,
``test``: rebuilt after every change) at 9 unless a quality-11 result is already cached.
Results are cached in ``.cache/compressed`` by content hash: an unchanged file is never
compressed twice.

``build.py serve`` starts serving the quality-9 site at once and then calls ``upgrade`` in a
background thread (brotli's encoder releases the GIL): each ``.br`` at quality 9 is
compressed again at 11 into the cache and swapped in as a symbolic link to that cache file,
with an atomic rename. The server resolves a sibling's link before it reads its size and
opens it (``pysse.server.static``), and cache files never change once written, so a
response never mixes the two (a deployed site, with real files, is never swapped).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

MIN_BYTES = 1024  # smaller files gain nothing worth a second request path
SKIP_SUFFIXES = (".br", ".gz", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".woff2", ".whl")

try:
    import brotli
except ImportError:  # pragma: no cover - brotli is installed with build.py's extras
    brotli = None


def _brotli(data: bytes, quality: int) -> bytes:
    assert brotli is not None
    return bytes(brotli.compress(data, quality=quality, lgwin=24))


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, 9, mtime=0)


def link_or_copy(src: str | Path, dest: str | Path) -> None:
    """A hard link when the cache and the site share a file system (cheap for 30 MB files),
    else a copy. Nothing ever writes into these files in place."""
    Path(dest).unlink(missing_ok=True)
    try:
        os.link(src, dest)
    except OSError:
        shutil.copyfile(src, dest)


def compress_site(site: Path, cache: Path, best: bool, log: Callable[[str], None]) -> None:
    """Write FILE.br and FILE.gz beside every compressible file of ``site``."""
    store = cache / "compressed"
    store.mkdir(parents=True, exist_ok=True)
    files = [
        p
        for p in sorted(site.rglob("*"))
        if p.is_file() and not p.name.endswith(SKIP_SUFFIXES) and p.stat().st_size >= MIN_BYTES
    ]
    for path in files:
        data = path.read_bytes()
        key = hashlib.sha256(data).hexdigest()[:32]
        encoders: list[tuple[str, Path, Callable[[bytes], bytes]]] = []
        if brotli is not None:
            best_br = store / f"{key}.q11.br"
            if best or best_br.exists() or len(data) < (1 << 20):
                encoders.append((".br", best_br, lambda b: _brotli(b, 11)))
            else:
                encoders.append((".br", store / f"{key}.q9.br", lambda b: _brotli(b, 9)))
        encoders.append((".gz", store / f"{key}.gz", _gzip))
        for ext, cached, encode in encoders:
            if not cached.exists():
                if len(data) > (4 << 20):
                    log(f"compressing {path.relative_to(site)} ({ext}, {len(data):,} bytes)")
                tmp = cached.with_name(f"{cached.name}.tmp{os.getpid()}")
                tmp.write_bytes(encode(data))
                tmp.replace(cached)
            link_or_copy(cached, path.with_name(path.name + ext))


def upgrade(site: Path, cache: Path, log: Callable[[str], None]) -> int:
    """Every ``.br`` of ``site`` not at quality 11 made so, in place (module docstring);
    returns how many were swapped."""
    if brotli is None:  # pragma: no cover - brotli is installed with build.py's extras
        return 0
    store = cache / "compressed"
    swapped, saved = 0, 0
    for br in sorted(site.rglob("*.br")):
        source = br.with_suffix("")
        if not source.is_file():
            continue
        data = source.read_bytes()
        best = store / f"{hashlib.sha256(data).hexdigest()[:32]}.q11.br"
        if best.exists() and os.path.samefile(br, best):  # (follows a link made before)
            continue
        if not best.exists():
            tmp = best.with_name(f"{best.name}.tmp{os.getpid()}")
            tmp.write_bytes(_brotli(data, 11))
            tmp.replace(best)
        before = br.stat().st_size
        link = br.with_name(f"{br.name}.swap{os.getpid()}")
        link.unlink(missing_ok=True)
        link.symlink_to(best.resolve())
        link.replace(br)  # atomic: a request sees the old file or the new one
        swapped += 1
        saved += before - best.stat().st_size
    if swapped:
        log(f"brotli 11 now served for {swapped} files ({saved / 1e6:.2f} MB less on the wire)")
    return swapped
