// The page's Python, in a dedicated module Web Worker: Pyodide boots here (boot.js: the memory
// snapshot, or a plain start), with the network (bridge.js: fetch and the read loop) and the
// chat store (store.js: IndexedDB) beside it, so the page's main thread only draws, scrolls and
// takes input (web/app.js, web/view.js). Messages: see pysse/browser/host.py.
import { BootError, startPython } from "./boot.js";
import * as bridge from "./bridge.js";
import "./store.js"; // globalThis.pysseStore

globalThis.pysseBridge = bridge;
let host = null;
const waiting = []; // messages that came before Python was up

self.onmessage = (e) => {
  const m = e.data;
  if (m.t === "boot") boot(m.manifest);
  else if (host) host.receive(m);
  else waiting.push(m);
};

async function boot(manifest) {
  let py;
  try {
    const started = await startPython(manifest, (p) => postMessage({ t: "progress", ...p }));
    py = started.py;
    // A fatal error (the wasm stack exhausted, out of memory) kills this Python for good:
    // the page is told, keeps what it shows, and can start another worker.
    py._api.on_fatal = (err) => postMessage({ t: "dead", message: String((err && err.message) || err) });
    host = started.browser.page_host((msg, transfer) => postMessage(msg, transfer ? [...transfer] : []));
    postMessage({ t: "up", path: started.path, snapshotError: started.snapshotError });
  } catch (e) {
    postMessage({ t: "failed", boot: e instanceof BootError, message: e instanceof BootError ? e.message : `${e.name}: ${e.message}` });
    return;
  }
  for (const m of waiting.splice(0)) host.receive(m);
}
