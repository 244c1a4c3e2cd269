// The page's main thread: painted and usable at once, it starts the page's Python in a Web
// Worker (worker.js; or on this thread where a module worker cannot start, or with
// ?thread=main) and then only draws, scrolls and takes input (view.js applies what Python
// sends, once a frame). Prompts sent before Python is ready are queued and go out as soon as
// it is; progress never goes backwards. If boot fails, the page says which URL failed and how,
// keeps every typed message, and offers a reload that restores them. If the worker dies, the
// answers it was streaming keep their text, marked as ended, and a new worker starts.
import { View, enterSends } from "./view.js";

const $ = (sel) => document.querySelector(sel);
const progress = $("[data-role=boot-progress]");
const bootText = $("[data-role=boot-text]");
const DRAFT_KEY = "pysse.draft";
const SETTINGS_KEY = "pysse.settings.v1";
const QUEUED = " Your message goes out when it is ready.";

class BootError extends Error {}
// How Python starts: "auto" (the snapshot when a visit cached it, else plain), "snapshot",
// "plain" (?boot=...: for tests and tools).
const bootPath = new URLSearchParams(location.search).get("boot") || "auto";
class WorkerUnavailable extends Error {}

const early = [];
const prompt = $("[data-role=prompt]");
// What Enter does here (view.js: enterSends), on the keyboard's key and in the hint (before
// Python's copy of the page is taken: its model has them too)
prompt.enterKeyHint = enterSends() ? "send" : "enter";
if (!enterSends()) prompt.placeholder = prompt.placeholder.replace(/\s*\(Enter sends[^)]*\)/, "");
const NEXT_KEY = "pysse.next.v1"; // the request a next message makes (pysse.app.answers)
let earlyOut = null; // posts an early request to the worker, once it exists

// The first message sent while Python starts goes out at once: the page kept, last visit,
// the request a message sent next makes (only its text missing); on a first visit, site.json
// has the one a fresh page makes (pysse.app.next_request). The worker's JavaScript sends it
// before Python is up, and Python adopts it (the very same bytes) when it is.
let siteNow = null; // site.json, once fetched
let earlyWaiting = null; // a first visit's message sent before site.json came: sent when it does
const ORIGIN_MARKER = "\u0000pysse:origin\u0000"; // the page's origin in a first visit's URL
// The template, null for none, undefined while site.json is still on its way.
function keptTemplate() {
  try {
    const kept = localStorage.getItem(NEXT_KEY);
    if (kept !== null) return stillMeant(JSON.parse(kept || "null")); // "": none for now
    if (localStorage.getItem(SETTINGS_KEY) !== null) return null; // settings only Python reads
  } catch (e) { return null; }
  if (!siteNow) return undefined;
  const first = siteNow.first;
  const made = first && first.made_for;
  if (!made || made.relay !== (siteNow.relay || "") || made.format !== (siteNow.format || "")) return null;
  return { ...first, url: first.url.split(ORIGIN_MARKER).join(location.origin) };
}
// A kept template is used only for the relay it was made for (pysse.app.next_request
// made_for): the saved setting's, and site.json's while no setting overrides it. A relay
// changed since, in Settings or by a new deployment, never gets a request meant for another.
function stillMeant(kept) {
  const made = kept && kept.made_for;
  if (!made) return null; // (none, or kept by an older page that did not say)
  const saved = String((JSON.parse(localStorage.getItem(SETTINGS_KEY) || "{}") || {}).relay || "").trim();
  if (saved !== made.relay) return null;
  if (saved) return kept; // (the setting wins over site.json's relay)
  if (!siteNow) return undefined;
  return (siteNow.relay || "") === made.site ? kept : null;
}
function earlyRequest(text) {
  const template = keptTemplate();
  if (template === undefined) { earlyWaiting = text; return; }
  if (!template || !earlyOut) return;
  // The text as Python's json.dumps writes it (non-ASCII as \uXXXX): byte for byte.
  const escaped = JSON.stringify(text).slice(1, -1)
    .replace(/[\u0080-\uffff]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
  const parts = template.body.split(template.marker);
  if (parts.length !== 2) return; // the marker once, or the text would go in twice (or not at all)
  const body = parts.join(escaped);
  earlyOut({ url: template.url, headers: template.headers, body, timeouts: template.timeouts });
  performance.mark("pysse:early-request");
}
let bootFailed = null;
let label = bootText.textContent;
// The bar only moves forward; the label says what is happening now (and that queued
// messages wait for it).
const show = (value, text = label) => {
  const next = Math.max(progress.value, Math.round(value));
  if (next !== progress.value) progress.value = next;
  label = text;
  const shown = early.length ? text + QUEUED : text;
  if (bootText.textContent !== shown) bootText.textContent = shown;
};
const onProgress = ({ fraction, label: phase }) => {
  if (phase === undefined) show(5 + 75 * fraction);
  else show(phase.startsWith("Starting the app") ? 95 : 85, phase);
};
try {  // a reload after a failed boot brings back what was typed
  const draft = sessionStorage.getItem(DRAFT_KEY);
  if (draft && !prompt.value) prompt.value = draft;
  sessionStorage.removeItem(DRAFT_KEY);
} catch (e) { /* storage disabled */ }

const earlySend = () => {
  const text = prompt.value.trim();
  if (!text) return;
  if (bootFailed) {  // nothing can go out: keep the text where it was typed
    bootText.textContent = `${bootFailed} Your message is kept; press Reload.`;
    return;
  }
  prompt.value = "";
  if (!early.length) earlyRequest(text);
  early.push(text);
  const art = document.createElement("article");
  art.className = "msg user";
  art.dataset.role = "user";
  art.dataset.early = "1";
  art.textContent = text;
  $("[data-role=log]").appendChild(art);
  show(0);
};
const earlyKey = (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing && enterSends()) { e.preventDefault(); earlySend(); }
};
$("[data-role=send]").addEventListener("click", earlySend);
prompt.addEventListener("keydown", earlyKey);
document.body.dataset.booting = "1"; // sending works from here on, before Python is ready

// The deployment's settings (relay, format): site.json, fetched while Python loads.
async function siteConfig() {
  const url = new URL("site.json", location.href).href;
  try {
    const resp = await fetch(url, { cache: "no-cache" });
    if (!resp.ok) throw new BootError(`could not load ${url} (HTTP ${resp.status})`);
    return await resp.json();
  } catch (e) {
    throw e instanceof BootError ? e : new BootError(`could not load ${url} (${e.name}: ${e.message})`);
  }
}

function manifest() {
  const el = document.getElementById("pysse-boot");
  if (!el) throw new BootError("this page has no boot manifest (build the site with python build.py site DIR)");
  return JSON.parse(el.textContent);
}

// The page's Python in a dedicated module worker. Resolves when Python is up; rejects with
// WorkerUnavailable if the worker itself cannot run (a CSP without worker-src, an engine
// without module workers, its module failing to load), with BootError if Python cannot start.
function inWorker(boot) {
  return new Promise((resolve, reject) => {
    let worker;
    try {
      worker = new Worker(new URL("worker.js", location.href), { type: "module" });
    } catch (e) {
      reject(new WorkerUnavailable(`${e.name}: ${e.message}`));
      return;
    }
    let up = false;
    let listener = () => {};
    earlyOut = (request) => worker.postMessage({ t: "early", request });
    worker.onmessage = (e) => {
      const m = e.data;
      if (up) { listener(m); return; }
      if (m.t === "progress") onProgress(m);
      else if (m.t === "failed") { // (ending it aborts an early request: its message is kept)
        worker.terminate();
        reject(m.boot ? new BootError(m.message) : new Error(m.message));
      }
      else if (m.t === "up") {
        up = true;
        resolve({
          mode: "worker", worker, path: m.path, snapshotError: m.snapshotError,
          post: (msg, transfer) => worker.postMessage(msg, transfer || []),
          onMessage: (fn) => { listener = fn; },
          stop: () => worker.terminate(),
        });
      }
    };
    worker.onerror = (e) => {
      if (e.preventDefault) e.preventDefault();
      const why = e.message || "its module did not load";
      if (!up) reject(new WorkerUnavailable(why));
      else listener({ t: "dead", message: why });
    };
    worker.postMessage({ t: "boot", manifest: boot, path: bootPath });
  });
}

// The page's Python on this thread (the fallback): the same messages, as direct calls.
async function onMainThread(boot) {
  const [{ startPython, choosePath, BootError: Failed }, bridge] = await Promise.all([import("./boot.js"), import("./bridge.js")]);
  await import("./store.js");
  await import("./tabs.js");
  globalThis.pysseBridge = bridge;
  // stream_chat into an element of this page writes with it (pysse.browser.js_writer): this
  // page's policy forbids pysse evaluating its own copy
  globalThis.pysseDomWriter = (await import("./dom_writer.js")).DomWriter;
  let started;
  try {
    started = await startPython(await choosePath(boot, bootPath), onProgress);
  } catch (e) {
    throw e instanceof Failed ? new BootError(e.message) : e;
  }
  let listener = () => {};
  const host = started.browser.page_host((msg) => queueMicrotask(() => listener(msg)));
  window.pysseRuntime = started.py; // for tools and benchmarks (main-thread mode only)
  return {
    mode: "main", path: started.path, snapshotError: started.snapshotError,
    post: (msg) => { // (as worker.js does: an exception that gets out is an error, not a death)
      try { host.receive(msg); } catch (e) {
        const seq = msg.t === "frame" ? msg.seq : 0;
        queueMicrotask(() => listener({ t: "error", message: `${e.name}: ${e.message}`, seq }));
      }
    },
    onMessage: (fn) => { listener = fn; },
    stop: () => {},
  };
}

async function startRuntime(boot) {
  const wanted = new URLSearchParams(location.search).get("thread");
  if (wanted !== "main" && typeof Worker !== "undefined") {
    try {
      return { runtime: await inWorker(boot), notice: "" };
    } catch (e) {
      if (!(e instanceof WorkerUnavailable)) throw e;
      console.warn(`pysse: no worker (${e.message}): Python runs on the page's main thread`);
      return {
        runtime: await onMainThread(boot),
        notice: `This browser could not start the page's Python in a Web Worker (${e.message}), so it ` +
          "runs on the page's main thread: typing and scrolling may stutter while an answer streams.",
      };
    }
  }
  return { runtime: await onMainThread(boot), notice: "" };
}

// Debugging and tests: Python code run in the page's namespace (app, host), its value as JSON.
const replies = new Map();
let nextEval = 1;
function evalIn(runtime, code) {
  const id = nextEval++;
  return new Promise((resolve, reject) => {
    replies.set(id, { resolve, reject });
    runtime.post({ t: "eval", id, code });
  });
}

function settingsText() {
  try { return localStorage.getItem(SETTINGS_KEY); } catch (e) { return null; }
}

// Hand the page over to Python: the DOM as it is now (numbered by the view), what was typed.
let swStarted = false;
function start(runtime, config, extra = {}) {
  let view;
  const onReady = () => {
    $("[data-role=send]").removeEventListener("click", earlySend);
    prompt.removeEventListener("keydown", earlyKey);
    window.pysseReadyAt = performance.now();
    for (const text of early.splice(0)) view.sendText(text); // typed since the start message
    for (const el of document.querySelectorAll("[data-early='1']")) el.remove();
    show(100, "Ready");
    if (!swStarted) { swStarted = true; serviceWorker(); }
  };
  // (a view that no longer agrees with its Python stops applying ops: a clean restart)
  const lost = (why) => died(runtime, view, config, `the page and its Python disagreed (${why})`);
  view = new View({ post: runtime.post, onReady, lost });
  runtime.onMessage((m) => {
    if (m.t === "ops" || m.t === "want" || m.t === "ack") view.receive(m);
    else if (m.t === "reply") {
      const r = replies.get(m.id);
      replies.delete(m.id);
      if (r && m.error) r.reject(new Error(m.error)); else if (r) r.resolve(m.value === undefined ? null : JSON.parse(m.value));
    } else if (m.t === "error") pythonError(view, m);
    else if (m.t === "dead") died(runtime, view, config, m.message);
  });
  for (const el of document.querySelectorAll("[data-early='1']")) el.remove();
  const page = {
    ...view.snapshot(),
    settings: settingsText(),
    location: { href: location.href, origin: location.origin, search: location.search },
    site: config,
    lazy: manifest().lazy || null, // the site's lazy bundles (lexers, math)
    base: new URL(".", location.href).href, // what their URLs are relative to
    early: early.splice(0),
    hidden: document.visibilityState === "hidden",
    ...extra,
  };
  runtime.post({ t: "start", page });
  const py = (code) => evalIn(runtime, code);
  window.pysse = {
    mode: runtime.mode, boot: { path: runtime.path, snapshotError: runtime.snapshotError }, view, py,
    stats: () => py("app.stats()"), // (JSON text)
    settled: () => view.settled(),
    rawHex: (i) => py(`app.raw_hex(${Number(i)})`),
  };
  window.pysseBoot = window.pysse.boot;
  return view;
}

// An exception that got out of the page's Python while it handled a message (host.py
// reports and survives its own; worker.js catches the rest): counted and logged, never a
// death: the worker and every answer it streams go on (issue #40).
function pythonError(view, { message, seq }) {
  view.stats.pythonErrors = (view.stats.pythonErrors || 0) + 1;
  console.error(`pysse: the page's Python failed to handle a message (it goes on): ${message}`);
  view.lost(seq);
}

// The worker's Python died (a fatal error: its stack exhausted, out of memory). What it was
// streaming keeps its text, marked as ended by the failure; the chats are in storage; a new
// worker starts and shows them again, told which answers ended this way.
let deaths = 0;
async function died(runtime, view, config, message) {
  if (runtime.dead) return; // (a fatal error is told twice: Pyodide's message, the error event)
  runtime.dead = true;
  runtime.stop();
  view.close();
  deaths++;
  console.error(`pysse: the page's Python stopped: ${message}`);
  const rescued = [];
  for (const art of document.querySelectorAll("[data-role=log] [data-role=assistant][data-state=streaming]")) {
    const text = art.dataset.text || view.texts.get(view.handles.get(art)) || "";
    art.dataset.state = "error";
    art.removeAttribute("aria-busy");
    art.dataset.text = text;
    const status = art.querySelector(".status");
    if (status) status.textContent = "Ended: the page's Python stopped.";
    if (art.dataset.id) rescued.push([art.dataset.id, text]);
  }
  document.body.dataset.ready = "";
  document.body.dataset.streaming = "";
  $("[data-role=send]").addEventListener("click", earlySend); // typing goes on meanwhile
  prompt.addEventListener("keydown", earlyKey);
  progress.hidden = false;
  progress.value = 5;
  show(5, "Restarting Python…");
  const notice = `The page's Python stopped (${message}). Your chats are saved; ` +
    (deaths > 2 ? "it stopped again: reload the page." : "it was started again.");
  if (deaths > 2) { bootText.textContent = notice; return; }
  try {
    const next = await startRuntime(manifest());
    $("[data-role=log]").replaceChildren(); // the new Python shows the open chat again
    start(next.runtime, config, { rescued, notice });
  } catch (e) {
    bootText.textContent = `${notice} It could not start again (${e.message}): reload the page.`;
  }
}

// Offline: the page works from its cache (sw.js) with the stored chats; sending needs the
// network, and the page says so while it is offline.
const offline = $("[data-role=offline]");
const onlineNow = () => { offline.hidden = navigator.onLine !== false; };
window.addEventListener("online", onlineNow);
window.addEventListener("offline", onlineNow);
onlineNow();

// The service worker (sw.js): registered once the page is ready (it must not compete with the
// first visit's downloads). A new build's worker waits; the page offers to take it (reload).
function serviceWorker() {
  if (!("serviceWorker" in navigator) || new URLSearchParams(location.search).get("sw") === "0") return;
  const note = $("[data-role=update]");
  let taking = false;
  const offer = (waiting) => {
    note.hidden = false;
    $("[data-role=update-reload]").onclick = () => { taking = true; waiting.postMessage({ t: "take-over" }); };
  };
  navigator.serviceWorker.addEventListener("controllerchange", () => { if (taking) location.reload(); });
  navigator.serviceWorker.register("sw.js").then((reg) => {
    if (!reg) return; // (registration refused: the page works, without its cache)
    if (reg.waiting && navigator.serviceWorker.controller) offer(reg.waiting);
    reg.addEventListener("updatefound", () => {
      const next = reg.installing;
      next.addEventListener("statechange", () => {
        if (next.state === "installed" && navigator.serviceWorker.controller) offer(next);
      });
    });
    let checked = performance.now();
    document.addEventListener("visibilitychange", () => { // back to the page: a deploy since?
      if (document.visibilityState === "visible" && performance.now() - checked > 600_000) {
        checked = performance.now();
        reg.update().catch(() => {});
      }
    });
  }).catch((e) => console.warn(`pysse: no service worker (${e.message}): the page needs the network`));
}

async function boot() {
  const t0 = performance.now();
  const site = siteConfig();
  // (before boot's own wait for it: a waiting early request reaches the worker before the
  // page's start does, so Python finds it to adopt)
  site.then((c) => {
    siteNow = c;
    const text = earlyWaiting;
    earlyWaiting = null;
    if (text !== null && !bootFailed) earlyRequest(text);
  }, () => { earlyWaiting = null; });
  show(5, "Loading Python…");
  const { runtime, notice } = await startRuntime(manifest());
  const config = await site;
  performance.mark("pysse:start-app");
  show(95, "Starting the app…");
  start(runtime, config, notice ? { notice } : {});
  window.pysseBootMs = performance.now() - t0;
}

boot().catch((e) => {
  console.error(e);
  const why = e instanceof BootError ? e.message : `${e.name}: ${e.message}`;
  bootFailed = `Python failed to start: ${why}. Reload the page; if it keeps failing, ` +
    "rebuild the site (python build.py site DIR) and upload all of it.";
  progress.hidden = true;
  bootText.textContent = bootFailed;
  document.body.dataset.bootError = "1";
  // Messages sent while booting go back to the composer: nothing was lost, nothing went out.
  const kept = [...early, prompt.value.trim()].filter(Boolean).join("\n");
  prompt.value = kept;
  for (const el of document.querySelectorAll("[data-early='1']")) el.remove();
  const reload = $("[data-role=reload]");
  reload.hidden = false;
  reload.addEventListener("click", () => {
    try { sessionStorage.setItem(DRAFT_KEY, prompt.value); } catch (err) { /* storage disabled */ }
    location.reload();
  });
});
