// Starting Python for the page, from the assets build.py lists in index.html
// (<script type="application/json" id="pysse-boot">), without freezing the page.
//
// Snapshot path (the default): a memory snapshot made at build time, with the page's modules
// already imported, is restored instead of starting an interpreter and importing them (the
// old boot's 2-3 s main-thread freeze was mostly CPython compiling the stdlib). The snapshot
// is the wasm heap only, so the zips for later imports are written back where they were.
// Plain path (the fallback): a normal interpreter start from .pyc zips, whenever the
// snapshot is missing, fails to download or does not match this build.
//
// Every long synchronous step runs in a task of its own (a timer turn between them), so a
// key typed during boot is handled between steps. Progress is bytes received over the total,
// then one step per start-up phase, never backwards.
const turn = () => new Promise((resolve) => setTimeout(resolve, 0));
// Let input and painting in between: scheduler.yield() where there is one (Chromium 129+).
const yieldNow = () => (globalThis.scheduler?.yield ? scheduler.yield() : turn());
const SLICE_MS = 8;
const mark = (name) => performance.mark(`pysse:${name}`); // for the bench's task timeline
const abs = (url) => new URL(url, location.href).href;

export class BootError extends Error {}

// Bytes received against the total the manifest announces (decoded sizes).
class Bytes {
  constructor(total, onChange) { this.total = total; this.got = 0; this.onChange = onChange; }
  add(n) { this.got += n; this.onChange(Math.min(1, this.got / this.total)); }
}

// A response body read chunk by chunk into one preallocated buffer (no 31 MB copy in one
// task), counted as it arrives. `size` is what the build wrote; anything else is an error.
async function fetchInto(url, size, bytes) {
  let resp;
  try {
    resp = await fetch(url);
  } catch (e) {
    throw new BootError(`could not load ${url} (${e.name}: ${e.message})`);
  }
  if (!resp.ok) throw new BootError(`could not load ${url} (HTTP ${resp.status}${resp.statusText ? " " + resp.statusText : ""})`);
  const buf = new Uint8Array(size);
  const reader = resp.body.getReader();
  let off = 0;
  let slice = performance.now();
  for (;;) {
    // Chunks that arrived together resolve read() without leaving the task: yield now and
    // then, or a fast link turns the whole download into one long task.
    if (performance.now() - slice > SLICE_MS) { await yieldNow(); slice = performance.now(); }
    const { done, value } = await reader.read();
    if (done) break;
    if (off + value.length > size) throw new BootError(`${url} is larger than the ${size} bytes this build wrote`);
    buf.set(value, off);
    off += value.length;
    bytes.add(value.length);
  }
  if (off !== size) throw new BootError(`${url} has ${off} bytes, not the ${size} this build wrote`);
  return buf;
}

// The loader fetches the wasm and the stdlib itself: their bytes count when they have all
// arrived (Resource Timing). Reading a clone of its responses would count them as they come,
// but doubles the work and garbage on the main thread while the wasm compiles.
function countWhenLoaded(urls, bytes) {
  const left = new Map(urls);
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (left.has(entry.name)) { bytes.add(left.get(entry.name)); left.delete(entry.name); }
    }
    if (!left.size) observer.disconnect();
  });
  observer.observe({ type: "resource", buffered: true });
}

// Undo the build's delta (pyodide_assets.mjs): the snapshot's first heap bytes were stored
// XORed with the heap a fresh module has before any restore (the wasm's static data: ~99%
// equal, so ~1 MB less on the wire). Only `ranges` of 32-bit words are XORed: words that
// differ between fresh modules (stack canary, clock) were stored as they are. A checksum of
// this module's fresh words guards against a module that differs from the build's.
export async function undoDelta(snapshot, heap, delta) {
  const words = new Uint32Array(snapshot.buffer, snapshot.byteOffset + delta.offset, (snapshot.length - delta.offset) >> 2);
  // The snapshot's heap may be larger than a fresh one: the delta's ranges lie where both are.
  const fresh = new Uint32Array(heap.buffer, heap.byteOffset, Math.min(words.length, heap.length >> 2));
  let check = 0x811c9dc5;
  let done = 0;
  for (const [start, end] of delta.ranges) {
    for (let i = start; i < end; i++) {
      words[i] ^= fresh[i];
      check = Math.imul(check ^ fresh[i], 16777619) >>> 0;
    }
    done += end - start;
    if (done > (1 << 20)) { done = 0; await turn(); } // ~4 MB a task
  }
  if (check !== delta.check) throw new BootError("this browser's fresh Python heap differs from the build's: not using the snapshot");
  new Uint32Array(snapshot.buffer, snapshot.byteOffset, 1)[0] = delta.magic;
}

// Pyodide restores a snapshot into the memory a fresh module starts with, without growing
// it: a heap that grew past that at build time (the page's modules and their data) needs the
// memory grown to its size first, as it was when the snapshot was taken.
export function fitHeap(module, snapshot) {
  const offset = new Uint32Array(snapshot.buffer, snapshot.byteOffset, 4)[1];
  const need = snapshot.length - offset;
  if (module.HEAPU8.length < need && !module.growMemory(need)) {
    throw new BootError(`could not grow Python's memory to the snapshot's ${need} bytes`);
  }
}

// One loadPyodide: `zips` and `snapshot` are promises of bytes, started by the caller.
async function load(manifest, stdlib, zips, snapshot, bytes, phase) {
  const base = abs(manifest.pyodide);
  const [{ loadPyodide }, { default: createPyodideModule }] = await Promise.all([
    import(base + "pyodide.mjs"), import(base + "pyodide.asm.mjs")]);
  countWhenLoaded([[base + "pyodide.asm.wasm", manifest.wasmBytes], [abs(stdlib.url), stdlib.bytes]], bytes);
  let zipError = null;
  const config = {
    indexURL: base,
    stdLibURL: abs(stdlib.url),
    lockFileContents: { info: manifest.lockInfo, packages: {} }, // no packages to load: no lock fetch
    // Emscripten's preRun: the turn ends the task that finished compiling and instantiating
    // the wasm; then the zips go where the snapshot (or sys.path) expects them.
    fsInit: async (FS) => {
      mark("wasm-instantiated");
      await turn();
      phase("Starting Python…");
      try {
        (await zips).forEach((data, i) => FS.writeFile(manifest.zipPaths[i], data));
      } catch (e) {
        zipError = e; // thrown once loadPyodide is done (a throw here would go nowhere)
      }
    },
    // The wasm's compile finishes in the task its last bytes arrive in (on a fast link, all of
    // its streaming bookkeeping at once): the module's own start-up (~260 small wasm
    // compiles, preRun) gets a task of its own. Then the restore (or interpreter start) runs
    // synchronously right after the module exists: it gets one too.
    createPyodideModule: async (settings) => {
      const instantiate = settings.instantiateWasm;
      if (instantiate) {
        settings.instantiateWasm = (imports, success) => instantiate(imports, (instance, module) => {
          mark("wasm-compiled");
          turn().then(() => success(instance, module));
        });
      }
      const module = await createPyodideModule(settings);
      mark("module-created");
      await turn();
      if (snapshot) fitHeap(module, await snapshot);
      if (snapshot && manifest.snapshot.delta) await undoDelta(await snapshot, module.HEAPU8, manifest.snapshot.delta);
      mark(snapshot ? "restore" : "interpreter-start");
      return module;
    },
  };
  if (snapshot) config._loadSnapshot = snapshot;
  const py = await loadPyodide(config);
  mark("python-ready");
  if (zipError) throw zipError;
  return py;
}

async function firstFailing(urls) {
  for (const url of urls) {
    try {
      const resp = await fetch(url, { method: "HEAD", cache: "no-store" });
      if (!resp.ok) return `${url} (HTTP ${resp.status}${resp.statusText ? " " + resp.statusText : ""})`;
    } catch (e) {
      return `${url} (${e.name}: ${e.message})`;
    }
  }
  return null;
}

const handled = (promise) => { promise.catch(() => {}); return promise; };

async function fromSnapshot(manifest, bytes, phase) {
  const snap = manifest.snapshot;
  const snapshot = handled(fetchInto(abs(snap.url), snap.bytes, bytes));
  const zips = handled(Promise.all(snap.zips.map((z) => fetchInto(abs(z.url), z.bytes, bytes))));
  const py = await load(manifest, snap.stdlib, zips, snapshot, bytes, phase);
  await turn();
  const stamp = py.runPython("import sys; getattr(sys, '_pysse_snapshot_stamp', '')");
  if (stamp !== snap.stamp) throw new BootError("the snapshot belongs to another build");
  // Every visitor restores the same heap: draw this page's own random state.
  py.runPython("import random; random.seed()");
  return py;
}

async function plain(manifest, bytes, phase) {
  const run = manifest.plain;
  const zips = handled(Promise.all(run.zips.map((z) => fetchInto(abs(z.url), z.bytes, bytes))));
  let py;
  try {
    py = await load(manifest, run.stdlib, zips, null, bytes, phase);
  } catch (e) {
    if (e instanceof BootError) throw e; // a zip that failed to load names itself
    const base = abs(manifest.pyodide);
    const bad = await firstFailing([base + "pyodide.mjs", base + "pyodide.asm.mjs", base + "pyodide.asm.wasm", abs(run.stdlib.url)]);
    throw new BootError(bad ? `could not load ${bad}` : `the Python runtime did not start (${e.message})`);
  }
  await turn();
  py.runPython(`import sys; sys.path[0:0] = ${JSON.stringify(manifest.zipPaths)}`);
  return py;
}

// Which way to start: the snapshot is ~3.5 MB more to download on a first visit than the plain
// start (docs/boot.md, "Snapshot or not"), and a restore instead of an interpreter's start on
// later visits. So by default ("auto") a visit restores the snapshot only when it is here
// already (the service worker fetched it, idle, after an earlier visit: sw.js), and starts
// plain otherwise. "snapshot" and "plain" (?boot=...) choose.
export async function choosePath(manifest, wanted = "auto") {
  if (!manifest.snapshot || wanted === "snapshot") return manifest;
  const plainOnly = { ...manifest, snapshot: null };
  if (wanted === "plain") return plainOnly;
  try {
    const cache = await caches.open("pysse-runtime"); // (web/sw.js's)
    const here = await Promise.all([manifest.snapshot, manifest.snapshot.stdlib, ...manifest.snapshot.zips]
      .map((f) => cachedWhole(cache, f)));
    if (here.every(Boolean)) return manifest;
  } catch (e) { /* no Cache API here (an insecure origin): start plain */ }
  return plainOnly;
}

// A file of the service worker's cache, there with the size this build wrote; one with
// another size is dropped (the network has it), never booted from.
async function cachedWhole(cache, file) {
  const hit = await cache.match(abs(file.url));
  if (!hit) return false;
  if ((await hit.blob()).size === file.bytes) return true;
  await cache.delete(abs(file.url));
  return false;
}

// Python with pysse.browser imported. onProgress(fraction 0..1 of the downloads, or a phase
// label) is called as boot goes; the returned object says which path was taken and why.
export async function startPython(manifest, onProgress) {
  const run = manifest.snapshot || manifest.plain;
  const total = manifest.wasmBytes + run.stdlib.bytes + run.zips.reduce((n, z) => n + z.bytes, 0) + (run.bytes || 0);
  const bytes = new Bytes(total, (fraction) => onProgress({ fraction }));
  const phase = (label) => onProgress({ label });
  let py, snapshotError = null;
  if (manifest.snapshot) {
    try {
      py = await fromSnapshot(manifest, bytes, phase);
    } catch (e) {
      snapshotError = String(e.message || e);
      console.warn(`pysse: starting Python without the snapshot (${snapshotError})`);
      phase("Starting Python (without the snapshot)…");
    }
  }
  if (!py) py = await plain(manifest, snapshotError ? new Bytes(Infinity, () => {}) : bytes, phase);
  phase("Starting the app…");
  await turn();
  mark("import-app");
  let browser;
  try {
    browser = py.pyimport("pysse.browser"); // already imported in a snapshot: instant
  } catch (e) {
    throw new BootError(`pysse did not load (${String(e.message).split("\n").filter(Boolean).pop()})`);
  }
  // What boot imported lives as long as the page: out of the collector's sight (gc.freeze),
  // or a full collection walks all of it again (150-420 ms in one task on this machine, 4x
  // that on a slow phone) and the old generation's increments keep rescanning it. The
  // snapshot was collected before it was taken, so nothing collectable is frozen there.
  py.runPython("import gc; gc.freeze()");
  await turn();
  return { py, browser, path: manifest.snapshot && !snapshotError ? "snapshot" : "plain", snapshotError };
}
