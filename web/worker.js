// The page's Python, in a dedicated module Web Worker: Pyodide boots here (boot.js: the memory
// snapshot, or a plain start), with the network (bridge.js: fetch and the read loop) and the
// chat store (store.js: IndexedDB) beside it, so the page's main thread only draws, scrolls and
// takes input (web/app.js, web/view.js). Messages: see pysse/browser/host.py.
import { BootError, choosePath, startPython } from "./boot.js";
import * as bridge from "./bridge.js";
import "./store.js"; // globalThis.pysseStore
import "./tabs.js"; // globalThis.pysseTabs: the page's other tabs

globalThis.pysseBridge = bridge;
let host = null;
const waiting = []; // messages that came before Python was up

// A message sent while Python starts goes out at once (the request the page kept from its
// last visit, filled in: web/app.js). Its facts wait here; Python adopts the request when
// it sends the same bytes (pysse.browser.net), or drops it if it would send others.
class EarlySink {
  constructor() { this.calls = []; this.target = null; }
  adopt(target) {
    for (const [name, args] of this.calls.splice(0)) target[name](...args);
    this.target = target;
  }
}
for (const name of ["on_open", "on_chunk", "on_end", "on_http_error", "on_wrong_type", "on_network_error",
  "on_read_error", "on_drop", "on_resumed", "on_resume_failed", "on_timeout", "destroy"]) {
  EarlySink.prototype[name] = function (...args) {
    if (this.target) return this.target[name](...args);
    if (name === "destroy") return undefined;
    this.calls.push([name, name === "on_chunk" ? [args[0].slice()] : args]);
    if (name === "on_drop") return -1; // (no resuming before Python: it ends the answer)
    return name === "on_chunk" ? true : undefined;
  };
}
globalThis.pysseEarly = [];
function early({ url, headers, body, timeouts }) {
  const sink = new EarlySink();
  const handle = bridge.start(url, headers, body, sink, ...timeouts);
  globalThis.pysseEarly.push({ url, body, sink, handle, adopted: false, at: performance.now() });
}

self.onmessage = (e) => {
  const m = e.data;
  if (m.t === "boot") boot(m.manifest, m.path);
  else if (m.t === "early") early(m.request);
  else if (host) receive(m);
  else waiting.push(m);
};

// host.receive never raises (host.py reports what fails and goes on); this is the second
// line: an exception that still gets out is told to the page as an error, not a death. An
// uncaught one would reach the page as the worker's error event, which means "dead" there.
// Only Pyodide's own fatal error (on_fatal: the stack exhausted, out of memory) is a death.
let fatal = false;
function receive(m) {
  try {
    host.receive(m);
  } catch (e) {
    if (fatal) return; // (on_fatal has told the page already)
    const message = `${(e && e.name) || "Error"}: ${(e && e.message) || e}`;
    postMessage({ t: "error", message, seq: m.t === "frame" ? m.seq : 0 });
  }
}

async function boot(manifest, wanted) {
  let py;
  try {
    const chosen = await choosePath(manifest, wanted || "auto");
    const started = await startPython(chosen, (p) => postMessage({ t: "progress", ...p }));
    py = started.py;
    // A fatal error (the wasm stack exhausted, out of memory) kills this Python for good:
    // the page is told, keeps what it shows, and can start another worker.
    py._api.on_fatal = (err) => {
      fatal = true;
      postMessage({ t: "dead", message: String((err && err.message) || err) });
    };
    host = started.browser.page_host((msg, transfer) => postMessage(msg, transfer ? [...transfer] : []));
    postMessage({ t: "up", path: started.path, snapshotError: started.snapshotError });
  } catch (e) {
    postMessage({ t: "failed", boot: e instanceof BootError, message: e instanceof BootError ? e.message : `${e.name}: ${e.message}` });
    return;
  }
  for (const m of waiting.splice(0)) receive(m);
}
