"""Python code in real Pyodide under Node, for the tests and the benchmarks (one runner, where
there were two copies: ``tests/test_pyodide.py`` and ``bench/bench_markdown.py``).

    run_with_wheels(code, payload, pyodide_dir, wheels)   the wheels loaded as packages
    run_as_page(code, payload, site, "plain" | "snapshot")  booted the way the page boots
    run_as_page(..., lazy=True)   and with every lazy bundle installed (as if all arrived)
    run_as_page(..., files={FS_PATH: HOST_PATH})   those files written into Pyodide's FS

``code`` sees ``INPUT`` (the payload, a string) and leaves a string as its value (the last
expression): what the call returns. Page code may ``await`` at its top level (it runs with
``runPythonAsync``; ``js.fetch`` is Node's). Code and payload travel in files, not on the command
line (a payload of fixtures is larger than one argument may be). A failure is a
``PyodideRunError`` with the end of Node's stderr.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

__all__ = ["PyodideRunError", "run_as_page", "run_with_wheels"]

# argv: the Pyodide directory, the wheels (JSON), the code's file, the payload's file.
_WITH_WHEELS = r"""
const fs = require("fs");
const { pathToFileURL } = require("url");
(async () => {
  const [dir, wheelsJson, codePath, inputPath] = process.argv.slice(2);
  const { loadPyodide } = await import(pathToFileURL(dir + "/pyodide.mjs").href);
  const py = await loadPyodide({ indexURL: dir + "/" });
  await py.loadPackage(JSON.parse(wheelsJson), { messageCallback: () => {} });
  py.globals.set("INPUT", fs.readFileSync(inputPath, "utf8"));
  process.stdout.write(py.runPython(fs.readFileSync(codePath, "utf8")));
})().catch((e) => { console.error(e); process.exit(1); });
"""

# The page's boot (web/boot.js), in Node: the site's manifest (index.html), its zips written
# where the page writes them, and for the snapshot the page's own fitHeap and undoDelta.
# argv: the site, "plain" or "snapshot", "lazy" or "", files to write (JSON), the code's file,
# the payload's file.
_AS_PAGE = r"""
const fs = require("fs");
const path = require("path");
const { pathToFileURL } = require("url");
(async () => {
  const [site, how, lazy, filesJson, codePath, inputPath] = process.argv.slice(2);
  const html = fs.readFileSync(path.join(site, "index.html"), "utf8");
  const m = JSON.parse(html.match(/id="pysse-boot">(.*?)<\/script>/)[1].replaceAll("<\\/", "</"));
  const run = how === "snapshot" ? m.snapshot : m.plain;
  const dir = path.join(site, m.pyodide);
  const { loadPyodide } = await import(pathToFileURL(path.join(dir, "pyodide.mjs")).href);
  const { default: factory } = await import(pathToFileURL(path.join(dir, "pyodide.asm.mjs")).href);
  const { undoDelta, fitHeap } = await import(pathToFileURL(path.join(site, "boot.js")).href);
  const read = (url) => new Uint8Array(fs.readFileSync(path.join(site, url)));
  const config = {
    indexURL: dir + "/", stdLibURL: path.join(site, run.stdlib.url),
    fsInit: async (FS) => run.zips.forEach((z, i) => FS.writeFile(m.zipPaths[i], read(z.url))),
  };
  if (how === "snapshot") {
    const snap = read(run.url);
    config._loadSnapshot = snap;
    config.createPyodideModule = async (settings) => {
      const module = await factory(settings);
      fitHeap(module, snap); // the heap grown to the snapshot's size first, as the page does
      await undoDelta(snap, module.HEAPU8, run.delta);
      return module;
    };
  }
  const py = await loadPyodide(config);
  if (how === "snapshot") {
    const stamp = py.runPython("import sys; sys._pysse_snapshot_stamp");
    if (stamp !== run.stamp) throw new Error("stamp");
  } else {
    py.runPython(`import sys; sys.path[0:0] = ${JSON.stringify(m.zipPaths)}`);
  }
  if (lazy) {  // every bundle installed the page's way (pysse.browser.lazy_assets.install)
    const bundles = Object.values(m.lazy.resources).flatMap((r, i) => r.files.map((f, j) => {
      const where = `/tmp/lazy-${i}-${j}.zip`;
      py.FS.writeFile(where, read(f.url));
      return [where, r.packages];
    }));
    py.globals.set("BUNDLES", py.toPy(bundles));
    py.globals.set("LAZY_ROOT", m.lazy.root);
    py.runPython(`from pysse.browser.lazy_assets import install
for where, packages in BUNDLES:
    install(LAZY_ROOT, open(where, "rb").read(), packages)`);
  }
  for (const [where, from] of Object.entries(JSON.parse(filesJson))) {
    py.FS.mkdirTree(path.dirname(where));
    py.FS.writeFile(where, new Uint8Array(fs.readFileSync(from)));
  }
  py.globals.set("INPUT", fs.readFileSync(inputPath, "utf8"));
  process.stdout.write(await py.runPythonAsync(fs.readFileSync(codePath, "utf8")));
})().catch((e) => { console.error(e); process.exit(1); });
"""


class PyodideRunError(RuntimeError):
    """Node or Pyodide failed (or Node is missing); the message ends with Node's stderr."""


def run_with_wheels(
    code: str, payload: str, pyodide_dir: Path, wheels: Sequence[str], timeout: float = 600
) -> str:
    """``code`` in Pyodide (``pyodide_dir``: the npm package) with ``wheels`` loaded."""
    return _run(_WITH_WHEELS, [str(pyodide_dir), json.dumps(list(wheels))], code, payload, timeout)


def run_as_page(
    code: str,
    payload: str,
    site: Path,
    how: Literal["plain", "snapshot"],
    timeout: float = 600,
    lazy: bool = False,
    files: Mapping[str, Path] | None = None,
) -> str:
    """``code`` in Pyodide booted as the built ``site`` boots it: from its .pyc zips
    (``plain``) or restored from its memory snapshot (``snapshot``); with ``lazy``, every
    lazy bundle is installed first, as if each had arrived; ``files`` (Pyodide path -> a
    file here) are written into its file system."""
    written = json.dumps({k: str(v) for k, v in (files or {}).items()})
    args = [str(site), how, "lazy" if lazy else "", written]
    return _run(_AS_PAGE, args, code, payload, timeout)


def _run(script: str, args: list[str], code: str, payload: str, timeout: float) -> str:
    node = shutil.which("node")
    if node is None:
        raise PyodideRunError("Node.js is needed to run Pyodide (python build.py test installs it)")
    with tempfile.TemporaryDirectory(prefix="pysse-pyodide-") as tmp:
        files = [Path(tmp) / name for name in ("run.js", "code.py", "input.txt")]
        for path, text in zip(files, (script, code, payload), strict=True):
            path.write_text(text, encoding="utf-8")
        proc = subprocess.run(
            [node, str(files[0]), *args, str(files[1]), str(files[2])],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    if proc.returncode != 0:
        raise PyodideRunError(f"Pyodide under Node failed:\n{proc.stderr[-3000:]}")
    return proc.stdout
