// Boot: the page is already painted and usable; load Pyodide and the wheels from this site
// (never a CDN), then hand over to Python (pysse.browser). Prompts sent before Python is
// ready are queued and go out as soon as it is.
import * as bridge from "./bridge.js";

window.pysseBridge = bridge;
const $ = (sel) => document.querySelector(sel);
const progress = $("[data-role=boot-progress]");
const bootText = $("[data-role=boot-text]");
const step = (value, text) => { progress.value = value; bootText.textContent = text; };

const early = [];
const prompt = $("[data-role=prompt]");
const earlySend = () => {
  const text = prompt.value.trim();
  if (!text) return;
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
  const site = await (await fetch("site.json", { cache: "no-cache" })).json();
  step(15, "Loading the Python runtime…");
  const base = new URL(site.pyodide, location.href).href;
  const { loadPyodide } = await import(new URL("pyodide.mjs", base).href);
  const py = await loadPyodide({ indexURL: base });
  step(60, "Loading packages…");
  // URLs, in dependency order: loadPackage() resolves no dependencies for wheel URLs.
  await py.loadPackage(site.wheels.map((u) => new URL(u, location.href).href), { messageCallback: () => {} });
  step(90, "Starting the app…");
  window.pysseRuntime = py; // for tools and benchmarks
  const browser = py.pyimport("pysse.browser");
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
  bootText.textContent = `Python failed to start: ${e.message}`;
  document.body.dataset.bootError = "1";
});
