// Build-time assets made by Pyodide itself, in Node (called by build.py; never by the page).
//
//   node pyodide_assets.mjs trace    PYODIDE_DIR OUT.json LANGUAGES LEXERS WHEEL...
//       which modules the page imports at boot and may import later, and what each lazy
//       resource adds (trace_imports.py); LANGUAGES and LEXERS are JSON lists.
//   node pyodide_assets.mjs layout   PYODIDE_DIR TRACE.json OUT_DIR OPTIONS WHEEL...
//       the boot zips (stdlib, third-party, pysse) and the lazy bundles (layout.py).
//   node pyodide_assets.mjs snapshot PYODIDE_DIR STDLIB.zip STAMP OUT_DIR LANGUAGES FS_PATH=ZIP...
//       OUT_DIR/app.snap: a memory snapshot with the page's modules imported
//       (snapshot_prepare.py), and beside it the "lazy" zips (each without the modules the
//       snapshot holds); checked by restoring it here the way the page does (web/boot.js).
//
// Prints one JSON line of facts (sizes, timings). Exits non-zero with the reason on failure:
// build.py then ships the site without a snapshot (the page boots without one).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
// What a browser page gets (Emscripten's default argv[0]); Node's own path must not be baked
// into the snapshot.
const SYS_EXECUTABLE = "./this.program";

const [cmd, pyodideDir, ...rest] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
const { default: createPyodideModule } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.asm.mjs")).href);
// The page's own boot code: the snapshot is checked with the very function that restores it.
const { fitHeap, undoDelta } = await import(pathToFileURL(path.join(HERE, "..", "web", "boot.js")).href);
const indexURL = path.resolve(pyodideDir) + "/";
const quiet = { stdout: () => {}, stderr: (s) => process.stderr.write(s + "\n") };
const t0 = performance.now();
const ms = () => Math.round(performance.now() - t0);

// Which modules the page can import at boot, and what each lazy resource adds
// (trace_imports.py, run in the namespace of snapshot_prepare.py: the boot set is exactly
// what the snapshot's preparation imports). The wheels go on sys.path as they are (sources).
async function trace(out, languages, lexers, wheels) {
  const py = await loadPyodide({ indexURL, _sysExecutable: SYS_EXECUTABLE, ...quiet });
  py.FS.mkdirTree("/tmp/in");
  const zips = wheels.map((src, i) => {
    const p = `/tmp/in/${i}.zip`;
    py.FS.writeFile(p, fs.readFileSync(src));
    return p;
  });
  const ns = py.runPython("{}");
  for (const file of ["snapshot_prepare.py", "trace_imports.py"]) {
    py.runPython(fs.readFileSync(path.join(HERE, file), "utf8"), { globals: ns, filename: file });
  }
  const run = ns.get("run");
  const facts = run(py.toPy(zips), "/lib/python314.zip", py.toPy(languages), py.toPy(lexers), ns.get("boot"));
  fs.writeFileSync(out, facts);
  const parsed = JSON.parse(facts);
  return { out, boot: parsed.boot_run.length, margin: parsed.boot_read.length, ms: ms() };
}

// The boot zips and the lazy bundles (layout.py) from the trace's facts: the same archives,
// in the same order, at the same paths as trace() had them.
async function layout(factsFile, outDir, options, wheels) {
  const py = await loadPyodide({ indexURL, ...quiet });
  py.FS.mkdirTree("/tmp/in");
  py.FS.mkdirTree("/tmp/out");
  const zips = wheels.map((src, i) => {
    const p = `/tmp/in/${i}.zip`;
    py.FS.writeFile(p, fs.readFileSync(src));
    return p;
  });
  const ns = py.runPython("{}");
  py.runPython(fs.readFileSync(path.join(HERE, "layout.py"), "utf8"), { globals: ns, filename: "layout.py" });
  const facts = JSON.parse(ns.get("layout")(
    fs.readFileSync(factsFile, "utf8"), py.toPy([...zips, "/lib/python314.zip"]), zips.length - 1,
    "/tmp/out", py.toPy(options.fs_paths), py.toPy(options.forms)));
  const copy = (dir) => {
    fs.mkdirSync(path.join(outDir, dir), { recursive: true });
    for (const name of py.FS.readdir(`/tmp/out/${dir}`)) {
      if (name.startsWith(".")) continue;
      const p = `/tmp/out/${dir}/${name}`;
      if (py.FS.isDir(py.FS.stat(p).mode)) copy(`${dir}/${name}`);
      else fs.writeFileSync(path.join(outDir, dir, name), py.FS.readFile(p));
    }
  };
  copy(".");
  return { ...facts, ms: ms() };
}

async function snapshot(stdlibZip, stamp, outDir, languages, zipArgs) {
  // zipArgs: "FS_PATH=FILE" for each zip the page puts on sys.path, in sys.path order
  const zips = zipArgs.map((a) => { const i = a.indexOf("="); return [a.slice(0, i), fs.readFileSync(a.slice(i + 1))]; });
  const py = await loadPyodide({
    indexURL, stdLibURL: path.resolve(stdlibZip), _makeSnapshot: true,
    _sysExecutable: SYS_EXECUTABLE, ...quiet,
    fsInit: async (FS) => { for (const [p, data] of zips) FS.writeFile(p, data); },
  });
  const booted = ms();
  py.FS.mkdirTree("/tmp/lazy");
  // Its own namespace, dropped afterwards: __main__ stays as a page would find it.
  const ns = py.runPython("{}");
  py.runPython(fs.readFileSync(path.join(HERE, "snapshot_prepare.py"), "utf8"), { globals: ns, filename: "snapshot_prepare.py" });
  const prepare = ns.get("prepare");
  const facts = JSON.parse(prepare(py.toPy(zips.map(([p]) => p)), stamp, "/tmp/lazy", py.toPy(languages)));
  prepare.destroy();
  ns.destroy();
  py.runPython("import gc; gc.collect()");
  const stdlibPath = facts.stdlib_fs_path;
  const lazy = {};
  for (const name of py.FS.readdir("/tmp/lazy")) {
    if (name.startsWith(".")) continue;
    lazy[name] = py.FS.readFile(`/tmp/lazy/${name}`);
  }
  const prepared = ms();
  const snap = new Uint8Array(py.makeMemorySnapshot()); // a copy of its own, 4-byte aligned
  const lazyStdlib = path.join(outDir, path.basename(stdlibPath));
  fs.mkdirSync(outDir, { recursive: true });
  for (const [name, data] of Object.entries(lazy)) fs.writeFileSync(path.join(outDir, name), data);
  const lazyZips = zips.map(([p]) => [p, lazy[path.basename(p)]]);
  // Fresh heaps differ where Python's start-up is random (hash seeds shape some tables), and
  // a word that takes one of a few values can agree in a few captures by chance: the delta
  // would then count on it and a page's check fail (a plain boot, slower). So many captures,
  // and more if the check below still finds one.
  const fresh = { ref: null, unstable: null, count: 0 };
  let file, delta, check;
  for (let attempt = 1; ; attempt++) {
    for (let i = 0; i < FRESH_ROUNDS; i++) {
      for (const variant of FRESH_VARIANTS) addFresh(fresh, await freshHeap(snap, lazyStdlib, variant));
    }
    ({ file, delta } = makeDelta(snap, fresh));
    try {
      // Check it, restored the way the page does it, with the lazy zips, before it is written.
      check = await verify(file.slice(), delta, lazyStdlib, lazyZips, stamp);
      break;
    } catch (e) {
      if (attempt >= 3 || !String(e.message).includes("fresh Python heap differs")) throw e;
    }
  }
  check.fresh_heaps = fresh.count;
  fs.writeFileSync(path.join(outDir, "app.snap"), file);
  return {
    bytes: snap.length, ...facts, delta,
    boot_ms: booted, prepare_ms: prepared - booted, ...check, ms: ms(),
  };
}

// A fresh module writes its argv[0] and environment into the heap, and a browser's differ
// from Node's (LANG follows navigator.language): fresh heaps are captured with different
// ones, so that what depends on them is left out of the delta like what is random.
const FRESH_ROUNDS = 4; // captures of each variant (see snapshot())
const FRESH_VARIANTS = [
  { _sysExecutable: SYS_EXECUTABLE },
  { _sysExecutable: "/a/longer/path/to/another.program", env: { LANG: "de_DE.UTF-8" } },
  // more variables than a browser sets: the pointer array's tail is left out too
  { _sysExecutable: "p", env: Object.fromEntries([["LANG", "C"], ...[...Array(12).keys()].map((i) => [`V${i}`, "x"])]) },
];

// The heap of a fresh module, as the page's module is when the snapshot is about to be
// restored (the same loader settings), captured before any restore.
async function freshHeap(snap, stdlibZip, variant) {
  let heap = null;
  const captured = new Error("captured");
  try {
    await loadPyodide({
      indexURL, stdLibURL: path.resolve(stdlibZip), _loadSnapshot: snap.slice(), ...quiet, ...variant,
      createPyodideModule: async (settings) => {
        heap = (await createPyodideModule(settings)).HEAPU8.slice();
        throw captured;
      },
    });
  } catch (e) {
    if (e !== captured) throw e;
  }
  return heap;
}

// Fresh heaps, summed up without keeping them (each is tens of MB): the first one, and which
// of its words another one differed in.
function addFresh(fresh, heap) {
  const words = new Uint32Array(heap.buffer, heap.byteOffset, heap.length >> 2);
  fresh.count++;
  if (fresh.ref === null) {
    fresh.ref = words;
    fresh.unstable = new Uint8Array(words.length);
    return;
  }
  const n = Math.min(words.length, fresh.ref.length);
  for (let i = 0; i < n; i++) if (words[i] !== fresh.ref[i]) fresh.unstable[i] = 1;
}

// The snapshot with its heap XORed with the fresh heap where that is the same in every fresh
// module (words that differ, e.g. the stack canary, are kept as they are), and the facts
// web/boot.js's undoDelta needs. The header's magic is zeroed: a loader that got the delta
// without it undone refuses it ("invalid magic") rather than restoring garbage.
function makeDelta(snap, fresh) {
  const GAP = 64; // zero words tolerated inside a range: fewer, longer ranges
  const offset = new Uint32Array(snap.buffer, snap.byteOffset, 4)[1];
  const n = (snap.length - offset) >> 2;
  const ref = fresh.ref, unstable = fresh.unstable;
  // A heap that grew past a fresh module's (more modules imported than its initial memory
  // holds) is XORed where the two overlap; its tail is stored as it is.
  const m = Math.min(n, ref.length);
  const file = snap.slice();
  const words = new Uint32Array(file.buffer, offset, n);
  const ranges = [];
  let start = -1, last = -1;
  const close = () => { if (start >= 0) ranges.push([start, last + 1]); start = -1; };
  for (let i = 0; i < m; i++) {
    const v = ref[i];
    const stable = !unstable[i];
    if (stable && v !== 0) {
      if (start < 0) start = i;
      last = i;
    } else if (!stable || (start >= 0 && i - last > GAP)) {
      close();
    }
  }
  close();
  let check = 0x811c9dc5, xored = 0;
  for (const [a, b] of ranges) {
    for (let i = a; i < b; i++) {
      words[i] ^= ref[i];
      check = Math.imul(check ^ ref[i], 16777619) >>> 0;
    }
    xored += b - a;
  }
  const header = new Uint32Array(file.buffer, 0, 1);
  const magic = header[0];
  header[0] = 0;
  return { file, delta: { offset, ranges, check, magic, xored_bytes: xored * 4 } };
}

// Restore the snapshot as the page does and use it: the modules are there, markdown renders
// without importing anything, and stdlib modules that were *not* imported before the
// snapshot (the read pass's margin: _strptime is imported from C by time.strptime) load from
// the lazy zips written back at the same paths.
async function verify(snap, delta, stdlibZip, zips, stamp) {
  const t = performance.now();
  const py = await loadPyodide({
    indexURL, stdLibURL: path.resolve(stdlibZip), _loadSnapshot: snap, ...quiet,
    _sysExecutable: "/yet/another.program", env: { LANG: "fr_FR.UTF-8" }, // not a variant above
    fsInit: async (FS) => { for (const [p, data] of zips) FS.writeFile(p, data); },
    createPyodideModule: async (settings) => {
      const module = await createPyodideModule(settings);
      fitHeap(module, snap);
      await undoDelta(snap, module.HEAPU8, delta);
      return module;
    },
  });
  const restoreMs = Math.round(performance.now() - t);
  py.globals.set("STAMP", stamp);
  const got = py.runPython(`
import sys
from pysse.render.markdown import MarkdownPolicy, make_markdown
from pysse.render.streaming import StreamingMarkdown
assert sys._pysse_snapshot_stamp == STAMP, "stamp"
before = set(sys.modules)
md = StreamingMarkdown(md=make_markdown(MarkdownPolicy()))
md.feed("# t\\n\\n| a |\\n|---|\\n| 1 |\\n\\n\`\`\`text\\nx = 1\\n\`\`\`\\n")
md.finish()
assert "<table" in md.html and "<code" in md.html, md.html
assert set(sys.modules) == before, sorted(set(sys.modules) - before)
import time
time.strptime("2026-12-02", "%Y-%m-%d")
import _strptime, calendar
"ok"`);
  if (got !== "ok") throw new Error(`restored snapshot check failed: ${got}`);
  return { restore_ms: restoreMs };
}

try {
  let facts;
  if (cmd === "trace") facts = await trace(rest[0], JSON.parse(rest[1]), JSON.parse(rest[2]), rest.slice(3));
  else if (cmd === "layout") facts = await layout(rest[0], rest[1], JSON.parse(rest[2]), rest.slice(3));
  else if (cmd === "snapshot") facts = await snapshot(rest[0], rest[1], rest[2], JSON.parse(rest[3]), rest.slice(4));
  else throw new Error(`unknown command ${cmd}: expected trace, layout or snapshot`);
  process.stdout.write(JSON.stringify(facts) + "\n");
  process.exit(0);
} catch (e) {
  process.stderr.write(`pyodide_assets.mjs ${cmd}: ${e && e.stack || e}\n`);
  process.exit(1);
}
