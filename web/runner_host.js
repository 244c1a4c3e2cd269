// Run for Python code blocks: the page's side (docs/chat-page.md "Run Python"). Loaded by the
// view on the first Run, never before. It owns the sandbox: an <iframe sandbox="allow-scripts">
// of runner.html (an opaque origin: none of the site's storage, cookies or DOM), made on the
// first Run and thrown away on Stop, on the time limit and when its Python dies. The sandbox
// fetches nothing: this side reads the Pyodide files (same origin, the HTTP or service
// worker's cache) from an allow-list and hands over their bytes. Output is text, never HTML.
//
// The page is not cross-origin isolated (no SharedArrayBuffer), so there is no interrupt:
// Stop and the time limit remove the iframe, which ends its worker and whatever it runs.

const FILES = ["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip"];
const LIMIT_MS = 30000; // a run's time limit
const MAX_OUTPUT = 101000; // characters shown a run (the sandbox bounds them first, at 100,000)
const RESTART = "the runner restarts for the next run";

function bootManifest() {
  return JSON.parse(document.getElementById("pysse-boot").textContent);
}

export class RunnerHost {
  // outputOf(block): the block's output box, made once (the view's: a restored run's is the same)
  constructor(outputOf) {
    this.outputOf = outputOf;
    this.frame = null;
    this.up = null; // a promise: the sandbox's Python is ready
    this.current = null; // the run under way: { id, btn, out, timer, started, shown }
    this.seq = 0;
    this.onMessage = this.onMessage.bind(this);
    window.addEventListener("message", this.onMessage);
  }

  // The Run button: run the block, or stop the run it started.
  toggle(btn, block) {
    if (this.current && this.current.btn === btn) { this.stop(`Stopped: ${RESTART}.`); return; }
    if (this.current) { this.outputOf(block).status.textContent = "Another block is running: stop it first."; return; }
    const pre = block.querySelector("pre");
    if (!pre) return;
    this.start(btn, block, pre.textContent);
  }

  async start(btn, block, code) {
    const out = this.outputOf(block);
    out.text.textContent = "";
    out.text.hidden = true;
    const run = { id: ++this.seq, btn, block, out, shown: 0, started: performance.now() };
    this.current = run;
    btn.textContent = "Stop";
    btn.setAttribute("aria-label", "Stop the run");
    btn.dataset.running = "1";
    out.status.textContent = this.frame ? "Running…" : "Starting Python for the run…";
    try {
      await this.ensureUp();
    } catch (e) {
      if (this.current === run) this.finish(`The runner could not start: ${e.message || e}`);
      return;
    }
    if (this.current !== run) return;
    out.status.textContent = "Running…";
    run.started = performance.now();
    // The limit counts the run, not the sandbox's start (Stop ends either).
    const limit = typeof globalThis.pysseRunLimitMs === "number" ? globalThis.pysseRunLimitMs : LIMIT_MS;
    run.timer = setTimeout(() => this.stop(`Time limit (${limit / 1000} s): stopped; ${RESTART}.`), limit);
    this.frame.contentWindow.postMessage({ t: "run", id: run.id, code }, "*");
  }

  ensureUp() {
    if (this.up) return this.up;
    const frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts");
    frame.setAttribute("aria-hidden", "true");
    frame.tabIndex = -1;
    frame.title = "Python run sandbox";
    frame.className = "run-sandbox";
    frame.src = "runner.html";
    this.frame = frame;
    this.up = new Promise((resolve, reject) => { this.waiting = { resolve, reject }; });
    this.up.catch(() => {}); // (told by start; an unheeded rejection is no page error)
    document.body.append(frame);
    return this.up;
  }

  // Messages from the sandbox only: its window, an opaque origin, known kinds and fields.
  onMessage(e) {
    if (!this.frame || e.source !== this.frame.contentWindow || e.origin !== "null") return;
    const m = e.data;
    if (!m || typeof m !== "object" || typeof m.t !== "string") return;
    if (m.t === "ready") this.sendFiles();
    else if (m.t === "up") { if (this.waiting) this.waiting.resolve(); this.waiting = null; }
    else if (m.t === "dead") this.died(typeof m.message === "string" ? m.message.slice(0, 500) : "");
    else if (m.t === "out" && this.current && m.id === this.current.id && typeof m.text === "string"
      && (m.stream === "stdout" || m.stream === "stderr")) this.show(m.stream, m.text);
    else if (m.t === "done" && this.current && m.id === this.current.id) {
      const s = ((performance.now() - this.current.started) / 1000).toFixed(1);
      this.finish(m.ok === true ? `Done in ${s} s.` : `Failed after ${s} s.`);
    }
  }

  async sendFiles() {
    const frame = this.frame;
    try {
      const manifest = bootManifest();
      const base = new URL(manifest.pyodide, document.baseURI);
      const files = {};
      await Promise.all(FILES.map(async (name) => {
        const resp = await fetch(new URL(name, base));
        if (!resp.ok) throw new Error(`${name}: HTTP ${resp.status}`);
        files[name] = await resp.arrayBuffer();
      }));
      if (frame !== this.frame) return;
      frame.contentWindow.postMessage({ t: "boot", files, lockInfo: manifest.lockInfo }, "*", Object.values(files));
    } catch (e) {
      if (this.waiting) this.waiting.reject(e);
      this.drop();
    }
  }

  show(stream, text) {
    const run = this.current;
    const room = MAX_OUTPUT - run.shown;
    if (room <= 0) return;
    const part = text.slice(0, room);
    run.shown += part.length;
    const span = document.createElement("span");
    span.className = stream === "stderr" ? "run-stderr" : "run-stdout";
    span.textContent = part; // text, never HTML
    run.out.text.append(span);
    run.out.text.hidden = false;
  }

  finish(message) {
    const run = this.current;
    if (!run) return;
    clearTimeout(run.timer);
    this.current = null;
    run.out.status.textContent = message;
    if (this.onEnd) this.onEnd(run.block, message, run.out.text.textContent); // kept (the view)
    run.btn.textContent = "Run";
    run.btn.setAttribute("aria-label", "Run code");
    delete run.btn.dataset.running;
  }

  // The sandbox goes (its worker and all it runs end with it); the next Run makes another.
  drop() {
    if (this.frame) this.frame.remove();
    this.frame = null;
    this.up = null;
    if (this.waiting) this.waiting.reject(new Error("stopped"));
    this.waiting = null;
  }

  stop(message) {
    this.drop();
    this.finish(message);
  }

  died(message) {
    if (this.waiting) this.waiting.reject(new Error(message || "the runner stopped"));
    this.waiting = null;
    this.drop();
    this.finish(`The runner's Python stopped (${message || "no reason given"}); ${RESTART}.`);
  }
}
