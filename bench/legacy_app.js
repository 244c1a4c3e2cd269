// The page boot as it was before issue #14 (web/app.js at 67e91bb), kept verbatim so that
// `python build.py bench --only boot` measures the new boot side by side with it.
// Boot: the page is already painted and usable; load Pyodide and the wheels from this site
// (never a CDN), then hand over to Python (pysse.browser). Prompts sent before Python is
// ready are queued and go out as soon as it is. If boot fails, the page says which URL
// failed and how, keeps every typed message, and offers a reload that restores them.
import * as bridge from "./bridge.js";

window.pysseBridge = bridge;
const $ = (sel) => document.querySelector(sel);
const progress = $("[data-role=boot-progress]");
const bootText = $("[data-role=boot-text]");
const step = (value, text) => { progress.value = value; bootText.textContent = text; };
const DRAFT_KEY = "pysse.draft";

const early = [];
const prompt = $("[data-role=prompt]");
let bootFailed = null;
try {  // a reload after a failed boot brings back what was typed
  const draft = sessionStorage.getItem(DRAFT_KEY);
  if (draft && !prompt.value) prompt.value = draft;
  sessionStorage.removeItem(DRAFT_KEY);
} catch (e) { /* storage disabled */ }

class BootError extends Error {}

// Which of these URLs fails, and how ("HTTP 404 Not Found", "network error"); null if all load.
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

const earlySend = () => {
  const text = prompt.value.trim();
  if (!text) return;
  if (bootFailed) {  // nothing can go out: keep the text where it was typed
    bootText.textContent = `${bootFailed} Your message is kept; press Reload.`;
    return;
  }
  prompt.value = "";
  early.push(text);
  const art = document.createElement("article");
  art.className = "msg user";
  art.dataset.role = "user";
  art.dataset.early = "1";
  art.textContent = text;
  $("[data-role=log]").appendChild(art);
  step(progress.value, "Starting Python… your message goes out when it is ready");
};
const earlyKey = (e) => { if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); earlySend(); } };
$("[data-role=send]").addEventListener("click", earlySend);
prompt.addEventListener("keydown", earlyKey);
document.body.dataset.booting = "1"; // sending works from here on, before Python is ready

async function boot() {
  const t0 = performance.now();
  const siteURL = new URL("site.json", location.href).href;
  let site;
  try {
    const resp = await fetch(siteURL, { cache: "no-cache" });
    if (!resp.ok) throw new BootError(`could not load ${siteURL} (HTTP ${resp.status})`);
    site = await resp.json();
  } catch (e) {
    throw e instanceof BootError ? e : new BootError(`could not load ${siteURL} (${e.name}: ${e.message})`);
  }
  step(15, "Loading the Python runtime…");
  const base = new URL(site.pyodide, location.href).href;
  const runtime = ["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip"].map((f) => new URL(f, base).href);
  let py;
  try {
    const { loadPyodide } = await import(runtime[0]);
    py = await loadPyodide({ indexURL: base });
  } catch (e) {
    const bad = await firstFailing(runtime);
    throw new BootError(bad ? `could not load ${bad}` : `the Python runtime did not start (${e.message})`);
  }
  step(60, "Loading packages…");
  // URLs, in dependency order: loadPackage() resolves no dependencies for wheel URLs. A wheel
  // that fails to load does not throw (it is logged): errors are collected and checked.
  const wheels = site.wheels.map((u) => new URL(u, location.href).href);
  const problems = [];
  let browser;
  try {
    await py.loadPackage(wheels, { messageCallback: () => {}, errorCallback: (m) => problems.push(m) });
    step(90, "Starting the app…");
    window.pysseRuntime = py; // for tools and benchmarks
    if (problems.length) throw new Error(problems.join("; "));
    browser = py.pyimport("pysse.browser");
  } catch (e) {
    const bad = await firstFailing(wheels);
    throw new BootError(bad ? `could not load ${bad}` : `pysse did not load (${String(e.message).split("\n").filter(Boolean).pop()})`);
  }
  $("[data-role=send]").removeEventListener("click", earlySend);
  prompt.removeEventListener("keydown", earlyKey);
  for (const el of document.querySelectorAll("[data-early='1']")) el.remove();
  browser.start(JSON.stringify(site), early);
  window.pysseBootMs = performance.now() - t0;
  window.pysseReadyAt = performance.now();
  step(100, "Ready");
}

boot().catch((e) => {
  console.error(e);
  bootFailed = `Python failed to start: ${e.message}. Reload the page; if it keeps failing, ` +
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
