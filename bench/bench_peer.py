"""streamdown, the peer of pysse's page in ``build.py bench`` (issue #41, goal 5): the same
answer, pace and machine, measured by the same instrument.

``python build.py bench --only peer`` (the mixed answer, Chromium: pysse in worker mode and in
main-thread mode, and streamdown, interleaved; ``--only render`` includes the peer too, on
the mixed answer only). ``bench_render`` runs it all: this module only makes the peer's page.

**What the peer is.** ``bench/peer/entry.js``: a React page rendering the answer with
``<Streamdown>`` (its code, math and CJK plugins, ``isAnimating`` while the answer streams),
the text growing by each delta as it arrives, the way streamdown's README shows it with the
AI SDK; styled as its README says (Tailwind scanning streamdown's files, its design tokens,
``streamdown/styles.css`` and KaTeX's CSS: ``bench/peer/app.css``). It has the hooks the bench
reads on pysse's page (``body[data-ready]``, ``[data-role=prompt]``, ``[data-role=assistant]``
and its ``data-state``) and asks the same relay (``POST /relay``), which the same scripted
upstream answers with the same script (24 characters every 16 ms, one SSE event per chunk):
the same chunks at the same pace, paced by the same server.

**Installed at bench time, never shipped**: ``npm install`` of ``bench/peer/package.json``
(streamdown 2.x, its plugins, React, esbuild, Tailwind) into ``PYSSE_PEER_CACHE``
(``.cache/peer/``), bundled there by esbuild (minified, React's production build) into
``.cache/peer/site/``, which the bench serves with pysse's own app (so ``/relay`` is
same-origin, as for pysse's page). Nothing of it is in ``build/site`` or the package. When
npm cannot install it, ``prepare`` says so in one sentence and returns None: the bench goes
on without the peer.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

__all__ = ["PEER_FILES", "prepare", "ratio"]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PEER_FILES = ("package.json", "entry.js", "app.css")
INDEX = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>streamdown {version} (pysse bench peer)</title>
<link rel="stylesheet" href="app.css">
<link rel="stylesheet" href="entry.css">
</head>
<body class="bg-background text-foreground">
<div id="root"></div>
<script type="module" src="entry.js"></script>
</body>
</html>
"""


def ratio(ours: float, peer: float) -> float:
    """``ours / peer``; NaN when either is unknown (NaN) or the peer's is 0."""
    if ours != ours or peer != peer or peer == 0:
        return float("nan")
    return ours / peer


def _run(cmd: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def _reason(proc: subprocess.CompletedProcess[str]) -> str:
    """Why a step failed, in a line: npm's error code and message (``npm error code
    ECONNREFUSED``, ``npm error FetchError: ...``) when it gives them, else the last line."""
    lines = [ln.strip() for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
    said = [ln for ln in lines if ln.startswith("npm error code") or "Error:" in ln]
    return "; ".join(said[:2]) if said else lines[-1] if lines else f"exit {proc.returncode}"


def prepare(cache: Path | None = None) -> tuple[Path, str] | None:
    """The peer's site directory and streamdown's version, installed and bundled now; None
    (after one sentence on stdout saying why) when npm or the bundling fails."""
    cache = cache or Path(os.environ.get("PYSSE_PEER_CACHE", ROOT / ".cache" / "peer"))
    npm = shutil.which("npm")
    if npm is None:
        print("peer: no npm on PATH, so streamdown is not measured (its column is skipped).")
        return None
    cache.mkdir(parents=True, exist_ok=True)
    for name in PEER_FILES:
        shutil.copyfile(HERE / "peer" / name, cache / name)
    try:
        proc = _run(
            [npm, "install", "--no-audit", "--no-fund", "--prefer-online", "--loglevel=error"],
            cache,
            600,
        )
    except subprocess.TimeoutExpired:
        proc = subprocess.CompletedProcess([], 1, "", "npm install took over 600 s")
    if proc.returncode != 0:
        print(
            "peer: npm could not install streamdown from the registry "
            f"({_reason(proc)[:300]}), so its column is skipped."
        )
        return None
    version = json.loads((cache / "node_modules/streamdown/package.json").read_text())["version"]
    site = cache / "site"
    shutil.rmtree(site, ignore_errors=True)
    site.mkdir()
    bin_ = cache / "node_modules" / ".bin"
    steps = [
        [str(bin_ / "tailwindcss"), "-i", "app.css", "-o", str(site / "app.css"), "--minify"],
        [
            str(bin_ / "esbuild"),
            "entry.js",
            "--bundle",
            "--minify",
            "--format=esm",
            "--splitting",  # shiki's languages and themes load when asked, as in an app
            "--chunk-names=chunks/[name]-[hash]",
            "--asset-names=assets/[name]-[hash]",
            "--target=es2022",
            '--define:process.env.NODE_ENV="production"',
            "--loader:.woff=file",
            "--loader:.woff2=file",
            "--loader:.ttf=file",
            f"--outdir={site}",
            "--log-level=error",
        ],
    ]
    for step in steps:
        proc = _run(step, cache, 300)
        if proc.returncode != 0:
            name = Path(step[0]).name
            print(f"peer: {name} failed ({_reason(proc)[:300]}), so its column is skipped.")
            return None
    (site / "index.html").write_text(INDEX.format(version=version))
    (site / "site.json").write_text("{}\n")  # pysse's app serves a site with one
    return site, version


if __name__ == "__main__":
    got = prepare()
    print(got)
