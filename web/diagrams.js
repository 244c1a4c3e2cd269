// Diagrams (issue #44): a closed ```mermaid fence of a finished answer, drawn as an image.
// Python marks the blocks (pysse/render/diagrams.py: data-diagram, or a note on why a source is
// too big); view.js imports this module with the first such block, and this module fetches
// the vendored Mermaid bundle (build.py: the boot manifest's "diagrams") with the first
// block that scrolls into view. Nothing here runs while an answer streams: a block is drawn
// in idle time, one at a time, once body[data-streaming] is off.
//
// Safety: Mermaid runs with securityLevel "strict" (its labels are text, its clicks and links
// off, its output purified), its SVG is stripped again here (scripts, foreign objects, event
// handlers, links other than "#..."), and shown as an <img src="blob:...">: an SVG image can
// run no script and load nothing. Until it is drawn, or when it fails to parse, the block is
// the code block it was, and a failure says why under it.
const MAX_CHARS = 50000; // pysse/render/diagrams.py MAX_CHARS
const MAX_EDGES = 500; // pysse/render/diagrams.py MAX_EDGES
const DROP = "script, foreignObject, iframe, object, embed, audio, video, image, animate, set";

export const stats = { loadMs: null, renders: [] }; // (tests, docs/chat-page.md: the times)
const svgs = new WeakMap(); // a drawn block -> its SVG text (Download SVG)
const near = new Set(); // the blocks near the view (the IntersectionObserver's), not drawn yet
let io = null;
let pumping = false;
let loading = null;
let seq = 0;

// Watch `el`'s undrawn diagrams (`log`: the scrolling box they show in): each is drawn once it
// comes near the view (a restored chat's too).
export function watch(el, log) {
  if (!io) {
    io = new IntersectionObserver(seen, { root: log, rootMargin: "50% 0px" });
    watchTheme();
  }
  for (const block of el.querySelectorAll("[data-diagram]:not([data-drawn])")) io.observe(block);
}

function seen(entries) {
  for (const en of entries) {
    if (en.isIntersecting) near.add(en.target);
    else near.delete(en.target);
  }
  pump();
}

const idle = (fn) => (globalThis.requestIdleCallback ? requestIdleCallback(fn, { timeout: 1000 }) : setTimeout(fn, 50));

// One block at a time, in idle time, never while an answer streams; a block that left the
// view before its turn (a restored chat scrolled to its end) waits until it is back.
function pump() {
  if (pumping || !near.size) return;
  pumping = true;
  idle(async () => {
    if (document.body.dataset.streaming === "1") { pumping = false; setTimeout(pump, 250); return; }
    const [block] = near; // (none: they left the view since)
    if (!block) { pumping = false; return; }
    near.delete(block);
    io.unobserve(block);
    try { if (block.isConnected) await draw(block); } finally { pumping = false; pump(); }
  });
}

// The theme changed (Settings, or the system's): drawn diagrams are drawn again, in the new
// colours, as they come into view (observed again: the visible ones at once).
function watchTheme() {
  const again = () => {
    for (const block of document.querySelectorAll("[data-drawn=light], [data-drawn=dark]")) {
      if (block.dataset.drawn !== theme()) { io.unobserve(block); io.observe(block); }
    }
  };
  new MutationObserver(again).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", again);
}

export function theme() {
  const set = document.documentElement.dataset.theme;
  if (set === "light" || set === "dark") return set;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

function load() {
  if (loading) return loading;
  const t0 = performance.now();
  loading = new Promise((resolve, reject) => {
    let entry = null;
    try { entry = JSON.parse(document.getElementById("pysse-boot").textContent).diagrams; } catch (e) { /* none */ }
    if (!entry) { reject(new Error("this site has no diagram library.")); return; }
    const script = document.createElement("script");
    script.src = new URL(entry.url, document.baseURI).href;
    script.onload = () => {
      stats.loadMs = Math.round(performance.now() - t0);
      if (globalThis.mermaid) resolve(globalThis.mermaid);
      else reject(new Error("the diagram library did not start."));
    };
    script.onerror = () => { loading = null; reject(new Error("the diagram library could not be loaded.")); };
    document.head.appendChild(script);
    addStyle();
  });
  return loading;
}

// Draw `block` (a code block marked data-diagram) in the page's theme.
export async function draw(block) {
  const pre = block.querySelector(":scope > pre");
  const want = theme();
  if (!pre || block.dataset.drawn === want) return;
  const source = pre.textContent;
  let mermaid;
  try { mermaid = await load(); } catch (e) { fail(block, e.message); return; }
  if (document.body.dataset.streaming === "1") { io?.observe(block); return; } // (sent while it loaded: later)
  mermaid.initialize({
    startOnLoad: false,
    securityLevel: "strict",
    theme: want === "dark" ? "dark" : "default",
    htmlLabels: false,
    flowchart: { htmlLabels: false },
    maxTextSize: MAX_CHARS,
    maxEdges: MAX_EDGES,
    suppressErrorRendering: true,
  });
  const id = `pysse-diagram-${++seq}`;
  const box = document.createElement("div"); // off-screen: Mermaid measures its text in it
  box.setAttribute("aria-hidden", "true");
  box.style.cssText = "position:fixed;left:-20000px;top:0;width:1200px;visibility:hidden";
  document.body.appendChild(box);
  const t0 = performance.now();
  let out;
  try {
    out = await mermaid.render(id, source, box);
  } catch (e) {
    fail(block, String((e && e.message) || e).slice(0, 600));
    return;
  } finally {
    box.remove();
    document.getElementById(id)?.remove();
    document.getElementById(`d${id}`)?.remove();
  }
  stats.renders.push(Math.round((performance.now() - t0) * 10) / 10);
  const clean = sanitize(out.svg);
  if (!clean) { fail(block, "the drawing was not an SVG."); return; }
  show(block, pre, clean, source, want);
}

// The SVG as text, without anything that could act or load, sized by its viewBox (an <img>
// needs an intrinsic size), with its accessible title and description; or null.
export function sanitize(text) {
  const doc = new DOMParser().parseFromString(text, "image/svg+xml");
  const svg = doc.documentElement;
  if (!svg || svg.localName !== "svg" || doc.querySelector("parsererror")) return null;
  for (const el of svg.querySelectorAll(DROP)) el.remove();
  for (const el of [svg, ...svg.querySelectorAll("*")]) {
    for (const a of [...el.attributes]) {
      const name = a.name.toLowerCase();
      const link = name === "href" || name.endsWith(":href") || name === "src";
      if (name.startsWith("on") || (link && !a.value.trim().startsWith("#"))) el.removeAttributeNode(a);
    }
  }
  for (const style of svg.querySelectorAll("style")) style.textContent = style.textContent.replace(/@import[^;]*;?/gi, "");
  const box = (svg.getAttribute("viewBox") || "").trim().split(/[\s,]+/).map(Number);
  const [w, h] = box.length === 4 && box[2] > 0 && box[3] > 0 ? [box[2], box[3]] : [600, 400];
  svg.setAttribute("width", String(Math.ceil(w)));
  svg.setAttribute("height", String(Math.ceil(h)));
  svg.style.removeProperty("max-width");
  const title = svg.querySelector(":scope > title")?.textContent.trim() || "";
  const desc = svg.querySelector(":scope > desc")?.textContent.trim() || "";
  const kind = svg.getAttribute("aria-roledescription") || "";
  return { text: new XMLSerializer().serializeToString(svg), w: Math.ceil(w), h: Math.ceil(h), title, desc, kind };
}

function altText(svg, source) {
  const said = [svg.title, svg.desc].filter(Boolean).join(". ");
  if (said) return `Diagram: ${said}`;
  const kind = svg.kind || source.trim().split(/\s/, 1)[0] || "mermaid";
  const lines = source.replace(/\n$/, "").split("\n").length;
  return `Diagram: ${kind}, ${lines} line${lines === 1 ? "" : "s"} of source`;
}

function show(block, pre, svg, source, want) {
  let fig = block.querySelector(":scope > figure.diagram");
  if (!fig) {
    fig = document.createElement("figure");
    fig.className = "diagram";
    block.insertBefore(fig, pre);
    addTools(block);
  }
  const img = document.createElement("img");
  img.alt = altText(svg, source);
  img.width = svg.w;
  img.height = svg.h;
  img.src = URL.createObjectURL(new Blob([svg.text], { type: "image/svg+xml" }));
  const old = fig.querySelector("img");
  if (old) URL.revokeObjectURL(old.src);
  fig.replaceChildren(img);
  pre.hidden = true;
  block.querySelector(":scope > .diagram-error")?.remove();
  svgs.set(block, svg.text);
  block.dataset.drawn = want;
}

function addTools(block) {
  const tools = block.querySelector(".code-tools");
  if (!tools) return;
  const copy = tools.querySelector("button.copy");
  if (copy) { copy.textContent = "Copy source"; copy.setAttribute("aria-label", "Copy diagram source"); }
  const button = (cls, label, extra = {}) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = cls;
    b.textContent = label;
    for (const [k, v] of Object.entries(extra)) b.setAttribute(k, v);
    tools.appendChild(b);
  };
  button("svg", "Download SVG");
  button("source", "Show source", { "aria-expanded": "false" });
}

function fail(block, why) {
  let note = block.querySelector(":scope > .diagram-error");
  if (!note) {
    note = document.createElement("p");
    note.className = "diagram-error";
    note.setAttribute("role", "note");
    block.appendChild(note);
  }
  note.textContent = `Not drawn: ${why}`;
  block.dataset.drawn = "failed";
}

// A drawn block's SVG, as its image shows it (tests: the page's CSP lets no fetch read a blob:).
export const svgOf = (block) => svgs.get(block) ?? null;

// A click on a drawn diagram's own buttons (view.js's click handler asks first); true if it
// was one. `download(name, text, mime)`: the view's.
export function click(btn, block, download) {
  if (btn.classList.contains("svg") && svgs.has(block)) {
    download("diagram.svg", svgs.get(block), "image/svg+xml");
    return true;
  }
  if (btn.classList.contains("source")) {
    const pre = block.querySelector(":scope > pre");
    const open = btn.getAttribute("aria-expanded") !== "true";
    if (pre) pre.hidden = !open;
    btn.setAttribute("aria-expanded", String(open));
    btn.textContent = open ? "Hide source" : "Show source";
    return true;
  }
  return false;
}

// The figure's look, with the module (the first visit's style.css is not made bigger).
function addStyle() {
  const style = document.createElement("style");
  style.textContent = `.codeblock > figure.diagram { margin: 0; padding: .75rem; overflow: auto; text-align: center; }
.codeblock > figure.diagram img { max-width: 100%; height: auto; }
.codeblock > .diagram-error { margin: 0; padding: .5rem .75rem; white-space: pre-wrap; font: .85em ui-monospace, monospace; }`;
  document.head.appendChild(style);
}
