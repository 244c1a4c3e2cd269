// The page before Python: it is painted and usable at once. Prompts sent before Python is
// ready are queued and go out as soon as it is; boot.js starts Python from this site (never a
// CDN) and this module shows its progress, never backwards. If boot fails, the page says
// which URL failed and how, keeps every typed message, and offers a reload that restores them.
import * as bridge from "./bridge.js";
import { BootError, startPython } from "./boot.js";

window.pysseBridge = bridge;
const $ = (sel) => document.querySelector(sel);
const progress = $("[data-role=boot-progress]");
const bootText = $("[data-role=boot-text]");
const DRAFT_KEY = "pysse.draft";
const QUEUED = " Your message goes out when it is ready.";

const early = [];
const prompt = $("[data-role=prompt]");
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
  early.push(text);
  const art = document.createElement("article");
  art.className = "msg user";
  art.dataset.role = "user";
  art.dataset.early = "1";
  art.textContent = text;
  $("[data-role=log]").appendChild(art);
  show(0);
};
const earlyKey = (e) => { if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); earlySend(); } };
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

async function boot() {
  const t0 = performance.now();
  const site = siteConfig();
  site.catch(() => {});
  show(5, "Loading Python…");
  const { py, browser, path, snapshotError } = await startPython(manifest(), ({ fraction, label: phase }) => {
    if (phase === undefined) show(5 + 75 * fraction);
    else show(phase.startsWith("Starting the app") ? 95 : 85, phase);
  });
  window.pysseRuntime = py; // for tools and benchmarks
  window.pysseBoot = { path, snapshotError };
  const config = await site;
  $("[data-role=send]").removeEventListener("click", earlySend);
  prompt.removeEventListener("keydown", earlyKey);
  for (const el of document.querySelectorAll("[data-early='1']")) el.remove();
  performance.mark("pysse:start-app");
  browser.start(JSON.stringify(config), early);
  window.pysseBootMs = performance.now() - t0;
  window.pysseReadyAt = performance.now();
  early.length = 0;
  show(100, "Ready");
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
