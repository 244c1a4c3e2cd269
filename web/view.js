// The page's view: the main thread's half of the chat page. The page's Python (pysse.app) runs
// in a Web Worker (or, as a fallback, on this thread) against a model of this DOM, and sends
// what changed as ops, at most one batch a frame (pysse/view/ops.py lists them). This applies
// them, and owns what needs the real DOM or the reader's gesture: scroll following (it needs
// layout), the composer and the keyboard shortcuts (preventDefault cannot wait for a worker),
// Copy (the clipboard needs the click's user activation), focus, downloads, confirm dialogs.
// Everything else the reader does goes to Python as event records, once a frame.
//
// Elements are named by handles that both sides number the same way: <html> is 1, then the
// body's elements in document order (a template's content as its children); every element
// Python creates, clones or parses later is numbered as it is made.
import { DomWriter, splitBlocks, swapIn } from "./dom_writer.js";

const THRESHOLD = 8; // px from the bottom that still counts as "at the bottom"
const HEIGHTS_KEPT_MS = 1000; // how long the Follower remembers the log's heights
const GESTURE_SLACK_MS = 50; // about three frames: the scroll was clamped to a frame already drawn
const UP_KEYS = new Set(["ArrowUp", "PageUp", "Home"]);
const DOWN_KEYS = new Set(["ArrowDown", "PageDown", "End", " "]);
const HIGHLIGHT = "pysse-search";
const TABS_MOVES = { ArrowRight: 1, ArrowLeft: -1 };
// The fewest ms between two renders of a streaming answer: 10 a second. A reader takes in
// text no faster at 60 (a render adds a few words); each render costs the main thread a
// style, layout and paint pass with a floor in the engine (about 2.5 ms at 1x), so the
// number of renders is the cost (docs/benchmarks.md: the cadence, measured: 15 a second
// rendered 1.26x as long). The reader's own events and an answer's end never wait for it.
const RENDER_GAP_MS = 100;

// Whether Enter in the composer sends. On a touch screen it starts a new line, as on the best
// mobile chat pages: a phone's keyboard has no Shift+Enter to reach for, and Send is a thumb
// away. With a mouse or a trackpad, Enter sends and Shift+Enter starts a new line.
// (docs/chat-page.md, "Enter")
export const enterSends = () => !matchMedia("(pointer: coarse)").matches;

// Follows the bottom only while the reader is there. Only the reader's own gestures release
// it: a wheel, a key or a touch drag upwards, the scrollbar dragged away from the bottom.
// A scroll event alone never does: the browser moves the view too (the content grew while
// the view was pinned, a clamp after it shrank, scroll anchoring), and such an event can
// arrive before the layout callback that re-pins (Chromium, with the mouse over the page,
// lays out for hover between frames: issue #41). Reaching the bottom, by any means, or
// Jump re-arms it. (The same rules as pysse.render.frames.ScrollFollower, which
// stream_chat uses.)
export class Follower {
  constructor() {
    this.following = true;
    this.showJump = false;
    this.held = false; // the reader's hand is on the view: a finger dragging, the scrollbar
    this.heightAtDown = null;
    this.heights = []; // [when, height], the last second's
  }
  // The log was `height` tall at `now`: kept for a second, so that a gesture is measured from
  // when it began, not from when its event arrived.
  seen(height, now) {
    this.heights.push([now, height]);
    while (this.heights.length > 2 && this.heights[0][0] < now - HEIGHTS_KEPT_MS) this.heights.shift();
  }
  // The least the log was tall from just before `when` until now (`height`). A wheel's event
  // is passive: the browser scrolls first, clamped to the bottom it had then, and the event
  // reaches the page later, after the text may have grown (#41: a wheel to the bottom that
  // never re-armed following, one time in three).
  heightSince(when, height) {
    let least = height;
    let before = null;
    for (const [at, seen] of this.heights) {
      if (at < when - GESTURE_SLACK_MS) before = seen;
      else least = Math.min(least, seen);
    }
    return before === null ? least : Math.min(least, before);
  }
  onScroll(top, height, client) {
    const gap = height - top - client;
    const grown = this.heightAtDown !== null ? height - this.heightAtDown : 0;
    if (gap <= THRESHOLD || (this.heightAtDown !== null && gap <= THRESHOLD + grown)) {
      this.follow();
    } else if (this.held) {
      this.following = false; // the reader moved it away from the bottom
    } // (else the browser moved it: the next layout pins it again)
  }
  follow() { this.following = true; this.showJump = false; this.heightAtDown = null; }
  hold(on) { this.held = on; }
  up() { this.following = false; this.heightAtDown = null; }
  down(height, since = null) {
    if (this.heightAtDown === null) this.heightAtDown = since === null ? height : this.heightSince(since, height);
  }
  target(height, client) {
    if (!this.following) { this.showJump = true; return null; }
    return Math.max(0, height - client);
  }
  jump(height, client) {
    this.follow();
    return Math.max(0, height - client);
  }
}

// Where the engine has no CSS scroll anchoring (WebKit: Safari, every iPhone browser), the
// view holds the reader's place itself: the element at the middle of the view, and where it
// was; after the content changes, scroll by as much as it moved.
class Hold {
  constructor(native) { this.native = native; this.anchor = null; this.corrections = 0; }
  active(following) { return !this.native && !following; }
  remember(node, top) { this.anchor = node ? { node, top } : null; }
  forget() { this.anchor = null; }
  correction(now) {
    if (!this.anchor || now === null) return 0;
    const shift = now - this.anchor.top;
    if (Math.abs(shift) < 0.5) return 0;
    this.corrections++;
    return shift;
  }
}

export class View {
  // post(message, transfer): to the page's Python. ready(): called once Python listens for
  // sends (the composer is the view's from then on).
  // lost(why): the view and Python no longer agree on the page (a handle where none should
  // be): app.js restarts Python cleanly, as after a death.
  constructor({ post, onReady = () => {}, lost = () => {} }) {
    this.post = post;
    this.onReady = onReady;
    this.onLost = lost;
    this.nodes = new Map(); // handle -> element
    this.handles = new WeakMap(); // element -> handle
    this.writers = new Map(); // handle -> DomWriter (an answer's streaming markdown)
    this.texts = new Map(); // handle -> an answer's text, whole
    this.urls = new Map(); // handle -> an attached image's blob: URL
    this.listening = new Map(); // handle -> Set of "type/capture"
    this.keys = new Map(); // "handle/type/capture" -> the keys forwarded (null: all)
    this.queue = []; // event records for the next frame
    this.eventIds = new WeakMap();
    this.nextEvent = 1;
    this.scheduled = false;
    this.unacked = false; // ops applied, not acknowledged yet
    this.wanted = false; // Python asked for a frame
    this.sendH = 0; // the composer's handle once Python takes sends
    this.seq = 0; // frames posted
    this.eventSeq = 0; // the last frame that carried events
    this.doneSeq = 0; // the last frame whose events Python handled (its reply applied)
    this.waiters = [];
    this.lastTick = -Infinity; // when the last frame message went (rAF time)
    this.gap = RENDER_GAP_MS; // ms between renders: the cadence (measureFrame)
    this.cost = 0; // the rendering's cost a frame, a moving average (ms)
    this.stats = { batches: 0, ops: 0, applyMs: 0, longestApplyMs: 0, frames: 0, errors: 0 };
    const $ = (sel) => document.querySelector(sel);
    this.log = $("[data-role=log]");
    this.prompt = $("[data-role=prompt]");
    this.jumpBtn = $("[data-role=jump]");
    this.follower = new Follower();
    this.hold = new Hold(CSS.supports("overflow-anchor", "auto"));
    this.observed = new Set(); // the log's messages the ResizeObserver watches
    this.held = null; // scrollTop kept across a rebuild ("hold" ... "unhold")
    this.resize = new ResizeObserver(() => this.onResize());
    this.resizedIn = null; // the frame (document.timeline's time) the observer last acted in
    this.lateResize = 0; // a requestAnimationFrame for the rest of a frame's cascade
    this.resize.observe(this.log);
    this.seen = null; // the restorer's IntersectionObserver
    this.bindPage();
  }

  // -- handles ----------------------------------------------------------------------------

  bind(h, el) { this.nodes.set(h, el); this.handles.set(el, h); }

  // Number `el` and its descendants (a template's content as its children) from `next`;
  // returns the next free number.
  numberTree(el, next) {
    this.bind(next++, el);
    const kids = el.tagName === "TEMPLATE" ? el.content.children : el.children;
    for (const kid of kids) next = this.numberTree(kid, next);
    return next;
  }

  numberChildren(el, next, from = 0) {
    const kids = el.children;
    for (let i = from; i < kids.length; i++) next = this.numberTree(kids[i], next);
    return next;
  }

  // The page as Python models it: the body's HTML, numbered now (the moment of the copy).
  snapshot() {
    this.bind(1, document.documentElement);
    this.numberTree(document.body, 2);
    const htmlAttrs = {};
    for (const a of document.documentElement.attributes) htmlAttrs[a.name] = a.value;
    return { body: document.body.outerHTML, htmlAttrs };
  }

  handleNear(node) {
    for (let n = node; n; n = n.parentNode) {
      const h = this.handles.get(n);
      if (h !== undefined) return h;
    }
    return 0;
  }

  error(message) {
    this.stats.errors++;
    console.error(`pysse view: ${message}`);
    if (!document.body.dataset.viewError) document.body.dataset.viewError = message;
  }

  // A handle count or a handle that does not match Python's model: every later op could land
  // on the wrong element, so nothing more is applied and Python is restarted (app.js).
  expectCount(what, h, got, want) {
    if (got !== want) throw new Desync(`${what} on #${h} numbered ${got} elements, Python ${want}`);
  }

  node(h, what) {
    const el = this.nodes.get(h);
    if (!el) throw new Desync(`${what}: no element #${h}`);
    return el;
  }

  // -- messages from Python ---------------------------------------------------------------

  receive(msg) {
    if (this.closed) return; // (its Python is gone: a late message changes nothing)
    if (msg.t === "ops") {
      this.apply(msg.ops, msg.blobs || []);
      this.unacked = true;
      if (msg.want) this.wanted = true;
      if (msg.now) this.lastTick = -Infinity; // an answer ended: no cadence before the rest
      this.schedule();
    } else if (msg.t === "want") {
      this.wanted = true;
      this.schedule();
    }
    if (msg.seq > this.doneSeq) {
      this.doneSeq = msg.seq;
      this.waiters = this.waiters.filter(([seq, resolve]) => (seq <= this.doneSeq ? resolve() : true));
    }
  }

  // A message Python failed to handle (app.js: an error, not a death): frame `seq` counts
  // as handled (what waits on it goes on), and another frame goes, so neither side waits for
  // the other (Python waits for a frame before it sends more ops).
  lost(seq) {
    if (seq) this.receive({ t: "lost", seq });
    this.wanted = true;
    this.schedule();
  }

  // Resolves once Python has handled every event so far and its reply is applied (tests:
  // a click's or a send's immediate effects are on screen).
  settled() {
    if (this.queue.length) this.schedule();
    const target = this.queue.length ? this.seq + 1 : this.eventSeq;
    if (target <= this.doneSeq) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push([target, resolve]));
  }

  apply(text, blobs) {
    if (this.closed) return; // (a late batch from a Python that is gone)
    const t0 = performance.now();
    const ops = JSON.parse(text);
    let logChanged = false;
    for (const op of ops) {
      const fn = OPS[op[0]];
      if (!fn) { this.error(`unknown op ${op[0]}`); continue; }
      try {
        if (fn.call(this, op, blobs)) logChanged = true;
      } catch (e) {
        if (e instanceof Desync) { this.desync(e.message); return; }
        this.error(`op ${JSON.stringify(op).slice(0, 200)} failed: ${e}`);
      }
    }
    if (logChanged) this.watchMessages();
    const ms = performance.now() - t0;
    this.stats.batches++;
    this.stats.ops += ops.length;
    this.stats.applyMs += ms;
    this.stats.longestApplyMs = Math.max(this.stats.longestApplyMs, ms);
  }

  desync(why) {
    this.stats.desyncs = (this.stats.desyncs || 0) + 1;
    console.error(`pysse view: the page and its Python disagree (${why}): no more ops applied; Python restarts`);
    this.close();
    this.onLost(why);
  }

  // -- frames -------------------------------------------------------------------------------

  schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    if (document.visibilityState === "hidden") setTimeout(() => this.tick(performance.now()), 0);
    else requestAnimationFrame((now) => this.tick(now));
  }

  // One frame: the events since the last one, the acknowledgement of the last ops, and the
  // tick that lets Python render, in one message. Renders go at the cadence the device
  // affords (see measureFrame); the reader's events never wait for it.
  tick(now) {
    this.scheduled = false;
    if (!this.queue.length && !this.wanted && !this.unacked) return;
    if (!this.queue.length && now - this.lastTick < this.gap - 4) { this.schedule(); return; }
    if (this.unacked) this.measureFrame(now);
    // the display frames this render stands for: its update takes that many frames' text
    // (bounded by Python's FrameLoop, MAX_SPAN: Infinity after an answer's end is fine)
    const span = (now - this.lastTick) / (1000 / 60);
    this.lastTick = now;
    this.stats.frames++;
    const events = this.queue;
    this.queue = [];
    this.wanted = false;
    this.unacked = false;
    this.seq++;
    if (events.length) this.eventSeq = this.seq;
    this.post({ t: "frame", seq: this.seq, events, span, hidden: document.visibilityState === "hidden" });
  }

  // What the browser's rendering of the last ops cost: from this frame's callbacks to the
  // first task after them (style, layout and paint run in between). 15 renders a second
  // (RENDER_GAP_MS); 6.7 while rendering takes over 12 ms (a slow phone's frames). The final
  // state never waits: Python sends it at once.
  measureFrame(start) {
    if (!this.probe) {
      this.probe = new MessageChannel();
      this.probe.port1.onmessage = () => {
        const took = performance.now() - this.probeStart;
        this.cost = this.cost * 0.8 + took * 0.2;
        this.gap = this.cost > 12 ? 150 : RENDER_GAP_MS;
        this.stats.renderCost = Math.round(this.cost * 100) / 100;
        this.stats.gap = this.gap;
      };
    }
    this.probeStart = start;
    this.probe.port2.postMessage(0);
  }

  push(record) {
    if (this.closed) return;
    if (record.type === "input") { // only the last value matters
      const i = this.queue.findIndex((r) => r.type === "input" && r.t === record.t && r.h === record.h);
      if (i >= 0) this.queue.splice(i, 1);
    }
    this.queue.push(record);
    this.schedule();
  }

  // -- events to Python ---------------------------------------------------------------------

  listen(h, type, capture, options) {
    const el = this.nodes.get(h);
    if (!el) return;
    const key = `${type}/${capture}`;
    const known = this.listening.get(h) || new Set();
    this.listening.set(h, known);
    if (type === "send") { // the composer: Enter and Send go to Python from now on
      this.sendH = h;
      this.onReady();
      return;
    }
    if (type === "seen") { this.watchSeen(h, el); return; }
    if (type === "ran") { this.ranH = h; return; } // a Python block's run ended (ran())
    this.keys.set(`${h}/${key}`, options && options.keys ? new Set(options.keys) : null);
    if (known.has(key)) return; // (a new key filter: read by the listener below)
    known.add(key);
    el.addEventListener(type, (e) => {
      if (this.closed) return;
      const keys = this.keys.get(`${h}/${key}`);
      if (keys && !keys.has(e.key)) return;
      this.push(this.record(e, h, capture));
    }, capture);
  }

  record(e, h, capture) {
    let id = this.eventIds.get(e);
    if (!id) { id = this.nextEvent++; this.eventIds.set(e, id); }
    const target = e.target;
    const r = { type: e.type, h, t: this.handleNear(target), e: id, cap: !!capture, prevented: e.defaultPrevented };
    if (e.key !== undefined) { r.key = e.key; r.shift = e.shiftKey; r.composing = e.isComposing; }
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT")) {
      if (target.type === "file") {
        r.files = [...(target.files || [])];
        target.value = ""; // the same file can be chosen again
      } else {
        r.value = target.value;
      }
    }
    if (e.type === "toggle") r.open = !!target.open;
    const tool = e.type === "click" && target?.closest ? target.closest(".table-tools > button") : null;
    // A table's tool in an answer (not in its reasoning): which, of which of the answer's
    // tables (Python does not model an answer's content; pysse/app/takeout.py).
    if (tool && !tool.closest(".reasoning-text")) {
      const scope = tool.closest(".content") || this.nodes.get(r.t);
      const boxes = scope ? [...scope.querySelectorAll(".tablebox")] : [];
      r.detail = [tool.dataset.role || "", boxes.indexOf(tool.closest(".tablebox"))];
    }
    if (e.type === "drop" && e.dataTransfer) r.files = [...e.dataTransfer.files];
    if (e.type === "paste" && e.clipboardData) r.files = [...e.clipboardData.files];
    return r;
  }

  // The composer's text, to Python (or false before Python takes sends: app.js queues it).
  sendText(text) {
    if (!this.sendH) return false;
    this.push({ type: "send", h: this.sendH, t: this.sendH, e: this.nextEvent++, detail: text });
    return true;
  }

  sendFromPrompt() {
    const text = this.prompt.value.trim();
    const files = !!document.querySelector(".composer:is([data-files]:not([data-files='']), [data-reading='1'])");
    if ((!text && !files) || !this.sendH) return; // (files alone: a message too)
    this.prompt.value = "";
    this.grow();
    this.sendText(text);
  }

  reply(id, value) { this.push({ type: "reply", id, value }); }

  watchSeen(h, log) {
    if (this.seen) return;
    this.seen = new IntersectionObserver((entries) => {
      const detail = entries.map((en) => [this.handleNear(en.target), en.isIntersecting]);
      this.push({ type: "seen", h, t: h, e: this.nextEvent++, detail });
    }, { root: log, rootMargin: "100% 0px 100% 0px" });
  }

  // -- the page's own behaviour --------------------------------------------------------------

  bindPage() {
    const passive = { passive: true };
    // (every listener ends with the view: a new worker gets a new view)
    const on = (target, type, fn, options) => target.addEventListener(type, (e) => { if (!this.closed) fn(e); }, options);
    on(document, "keydown", (e) => this.onKey(e), true);
    on(document, "click", (e) => this.onClick(e), true);
    on(this.prompt, "input", () => this.grow());
    on(this.log, "scroll", () => this.onScroll(), passive);
    on(this.log, "wheel", (e) => this.onWheel(e), passive);
    on(this.log, "touchmove", () => this.follower.hold(true), passive);
    on(this.log, "pointerdown", (e) => this.onPointerDown(e), passive);
    for (const type of ["touchend", "touchcancel"]) on(window, type, () => this.follower.hold(false), passive);
    for (const type of ["pointerup", "pointercancel"]) { // (a finger's pan cancels its pointer)
      on(window, type, (e) => { if (e.pointerType !== "touch") this.follower.hold(false); }, passive);
    }
    on(this.jumpBtn, "click", () => this.jump());
    on(this.jumpBtn, "wheel", (e) => { // it floats over the log: scroll the log
      e.preventDefault();
      this.onWheel(e);
      this.log.scrollTop += e.deltaY;
    });
    for (const type of ["dragover", "drop"]) {
      on(document, type, (e) => { if (e.target.closest?.("[data-role=replay-drop]") || attachDrop(e)) e.preventDefault(); });
    }
    // An image pasted into the prompt is attached (Python hears the paste with its files),
    // never pasted as its file name.
    on(this.prompt, "paste", (e) => { if (e.clipboardData?.files.length) e.preventDefault(); });
    on(document, "visibilitychange", () => this.schedule());
    if (window.visualViewport) { // the on-screen keyboard opening or closing
      for (const type of ["resize", "scroll"]) on(visualViewport, type, () => this.onViewport());
    }
    on(window, "pageshow", (e) => {
      if (e.persisted) this.push({ type: "pageshow", h: 0, e: this.nextEvent++ });
    });
  }

  // This view's Python is gone (a dead worker): its listeners and observers stop.
  close() {
    this.closed = true;
    this.resize.disconnect();
    if (this.seen) this.seen.disconnect();
  }

  grow() {
    const el = this.prompt;
    el.style.height = "auto";
    if (el.value) el.style.height = `${el.scrollHeight + 2}px`; // (an empty box measures its placeholder)
  }

  press(root, selector) {
    const btn = root && root.querySelector(selector);
    if (btn) btn.click();
    return !!btn;
  }

  // Keys: the page's shortcuts act here and now (only here can they preventDefault); what
  // they mean for the chat reaches Python as clicks on the page's own buttons, or a send.
  onKey(e) {
    const t = e.target;
    const role = t.getAttribute ? t.getAttribute("data-role") : null;
    const plainEnter = e.key === "Enter" && !e.shiftKey && !e.isComposing;
    if (role === "prompt" && plainEnter) {
      if (this.sendH && enterSends()) { e.preventDefault(); this.sendFromPrompt(); }
      return;
    }
    if (role === "edit-text" && (plainEnter || e.key === "Escape")) {
      e.preventDefault(); // (and the page's Escape does not act as well)
      this.press(t.closest("article"), plainEnter ? "[data-role=edit-send]" : "[data-role=edit-cancel]");
      return;
    }
    if (role === "chat-title" && (e.key === "Enter" || e.key === "Escape")) {
      e.preventDefault(); // (Python hears these two keys: it renames, or gives the list back)
      return;
    }
    if (role === "search" && this.searchKey(e, t)) return;
    if (role === "search-result" && this.resultKey(e, t)) return;
    if (t.closest && t.closest("[role=tablist]") && this.tabKey(e, t)) return;
    if (this.log.contains(t)) {
      if (UP_KEYS.has(e.key) || (e.key === " " && e.shiftKey)) this.follower.up(); // (Shift+Space: a page up)
      else if (DOWN_KEYS.has(e.key)) this.follower.down(this.log.scrollHeight, e.timeStamp);
    }
    if (e.key === "Escape" && !e.defaultPrevented && this.escape()) e.preventDefault();
  }

  // Escape closes what is open (the chat drawer, the inspector, an edit), else stops the
  // answer streaming in the open chat: by pressing that thing's own button.
  escape() {
    const body = document.body;
    if (body.dataset.chatsOpen === "1") return this.press(document, "[data-role=chats-close]");
    if (body.dataset.inspecting === "1") return this.press(document, "[data-role=insp-close]");
    if (this.press(this.log, ".edit-box [data-role=edit-cancel]")) return true;
    const stop = document.querySelector("[data-role=stop]");
    if (body.dataset.streaming === "1" && stop && !stop.disabled) { stop.click(); return true; }
    return false;
  }

  results() { return [...document.querySelectorAll("[data-role=search-results] [data-role=search-result]")]; }

  clearSearch(field) {
    field.value = "";
    field.dispatchEvent(new Event("input", { bubbles: true }));
  }

  // (true: the key was the search field's; false: the page's, e.g. Escape in an empty field)
  searchKey(e, field) {
    const results = this.results();
    if (e.key === "Escape" && field.value) this.clearSearch(field);
    else if (e.key === "ArrowDown" && results.length) results[0].focus();
    else if (e.key === "Enter" && results.length) results[0].click();
    else return false;
    e.preventDefault();
    return true;
  }

  resultKey(e, btn) {
    const results = this.results();
    const i = results.indexOf(btn);
    const field = document.querySelector("[data-role=search]");
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      const next = i + (e.key === "ArrowDown" ? 1 : -1);
      if (next >= 0 && next < results.length) results[next].focus();
      else if (next < 0) field.focus();
    } else if (e.key === "Escape") {
      this.clearSearch(field);
      field.focus();
    } else {
      return false;
    }
    e.preventDefault();
    return true;
  }

  // The inspector's tabs (ARIA tabs): arrows, Home and End move to a tab and select it.
  tabKey(e, t) {
    const tabs = [...t.closest("[role=tablist]").querySelectorAll("[role=tab]")];
    const i = tabs.indexOf(t.closest("[role=tab]"));
    let next;
    if (e.key in TABS_MOVES) next = (i + TABS_MOVES[e.key] + tabs.length) % tabs.length;
    else if (e.key === "Home") next = 0;
    else if (e.key === "End") next = tabs.length - 1;
    else return false;
    e.preventDefault();
    tabs[next].focus();
    tabs[next].click();
    return true;
  }

  onClick(e) {
    const btn = e.target.closest ? e.target.closest("button") : null;
    if (!btn) return;
    if (btn.dataset.role === "send") { this.sendFromPrompt(); return; }
    if (btn.dataset.role === "attach") { document.querySelector("[data-role=attach-input]")?.click(); return; }
    const code = btn.closest(".codeblock");
    if (code && this.drawer?.click(btn, code, (name, text, mime) => this.download(name, text, mime))) return;
    if (code && btn.classList.contains("run")) { this.runCode(btn, code); return; }
    if (code && (btn.classList.contains("copy") || btn.classList.contains("save"))) {
      const pre = code.querySelector("pre");
      if (!pre) return;
      if (btn.classList.contains("copy")) this.copy(btn, pre.textContent);
      else this.download(btn.dataset.file || "code.txt", pre.textContent, "text/plain;charset=utf-8");
    } else if (btn.dataset.role === "table-md" || btn.dataset.role === "table-tsv") {
      this.copyLater(btn); // the text: Python's "copy" op (pysse/app/takeout.py)
    } else if (btn.dataset.role === "copy-answer") {
      const art = btn.closest("article");
      this.copy(btn, art.dataset.text || this.texts.get(this.handles.get(art)) || "");
    }
  }

  // Run of a Python block: web/runner_host.js, loaded on the first Run (docs/chat-page.md).
  runCode(btn, block) {
    this.runner ||= import("./runner_host.js").then((m) => {
      const host = new m.RunnerHost(runOutput);
      host.onEnd = (block, status, text) => this.ran(block, status, text);
      return host;
    });
    this.runner.then((r) => r.toggle(btn, block), (e) => { this.runner = null; console.warn("Run:", e); });
  }

  // A run ended: Python keeps its output with the answer (pysse/chats/runs.py), by the
  // block's index among the answer's code blocks.
  ran(block, status, text) {
    const art = block.closest("article");
    const h = art && this.handles.get(art);
    const blocks = art ? [...(art.querySelector(".settled")?.querySelectorAll(".codeblock") || [])] : [];
    const i = blocks.indexOf(block);
    if (!this.ranH || !h || i < 0) return;
    this.push({ type: "ran", h: this.ranH, t: h, e: this.nextEvent++, detail: [i, String(status), String(text).slice(0, 20100)] });
  }

  // A copy whose text comes later (from Python): the clipboard is asked now, in the click
  // (its user activation), for a text it receives when the "copy" op brings it.
  copyLater(btn) {
    if (this.pendingCopy) this.pendingCopy(null);
    const text = new Promise((resolve) => { this.pendingCopy = resolve; });
    const wanted = text.then((t) => {
      if (typeof t !== "string") throw new Error("nothing to copy");
      return t;
    });
    let done;
    if (window.ClipboardItem && navigator.clipboard && navigator.clipboard.write) {
      const blob = wanted.then((t) => new Blob([t], { type: "text/plain" }));
      try {
        done = navigator.clipboard.write([new ClipboardItem({ "text/plain": blob })]);
      } catch (e) { done = Promise.reject(e); }
    } else {
      done = wanted.then((t) => navigator.clipboard.writeText(t));
    }
    this.copy(btn, null, done);
  }

  async copy(btn, text, writing) {
    let label = "Copied";
    try { await (writing || navigator.clipboard.writeText(text)); } catch (e) { label = "Copy failed"; }
    const original = btn.dataset.label || btn.textContent;
    btn.dataset.label = original;
    btn.textContent = label;
    setTimeout(() => { btn.textContent = btn.dataset.label || original; }, 1500);
  }

  // -- scroll following ----------------------------------------------------------------------

  // The observer acts once a frame. Scrolling in its callback can resize the messages again
  // (one scrolled into view is laid out at its real size, not content-visibility's guess),
  // and a second round that scrolls once more ends the browser's loop with "ResizeObserver
  // loop completed with undelivered notifications", an error on the window. So a second
  // round in the same frame leaves the scroll alone and the next frame finishes it.
  onResize() {
    const frame = document.timeline ? document.timeline.currentTime : null;
    if (frame === null || frame !== this.resizedIn) {
      this.resizedIn = frame;
      this.afterLayout();
    } else if (!this.lateResize) {
      this.lateResize = requestAnimationFrame(() => { this.lateResize = 0; this.afterLayout(); });
    }
  }

  // After the browser laid the page out (ResizeObserver: the sizes are known, nothing is
  // forced): keep the bottom in view while following; elsewhere, hold the reader's place.
  afterLayout() {
    const log = this.log;
    if (this.hold.active(this.follower.following) && this.hold.anchor) {
      const node = this.hold.anchor.node;
      const shift = this.hold.correction(node.isConnected ? this.topInLog(node) : null);
      if (shift) log.scrollTop += shift;
    }
    this.follower.seen(log.scrollHeight, performance.now());
    const target = this.follower.target(log.scrollHeight, log.clientHeight);
    if (target !== null && Math.abs(log.scrollTop - target) >= 1) log.scrollTop = target;
    this.jumpBtn.hidden = !this.follower.showJump;
    this.rememberAnchor();
  }

  rememberAnchor() {
    if (!this.hold.active(this.follower.following)) { this.hold.forget(); return; }
    const box = this.log.getBoundingClientRect();
    const el = document.elementFromPoint(box.left + box.width / 2, box.top + this.log.clientHeight / 2);
    if (!el || el === this.log || !this.log.contains(el)) this.hold.forget();
    else this.hold.remember(el, this.topInLog(el));
  }

  topInLog(el) { return el.getBoundingClientRect().top - this.log.getBoundingClientRect().top; }

  onScroll() {
    const log = this.log;
    this.follower.seen(log.scrollHeight, performance.now());
    this.follower.onScroll(log.scrollTop, log.scrollHeight, log.clientHeight);
    if (this.follower.following) this.jumpBtn.hidden = true;
    this.rememberAnchor();
  }

  // A press on the log's scrollbar (outside its client box), or the middle button's
  // autoscroll: what scrolls while it is held is the reader's doing. (A click on the text or
  // a button is not: it never scrolls the log, and the stream must not be read as if it did.)
  onPointerDown(e) {
    if (e.pointerType === "touch") return; // (a finger counts once it drags: touchmove)
    const log = this.log;
    const onBar = e.target === log && (e.offsetX >= log.clientWidth || e.offsetY >= log.clientHeight);
    if (onBar || e.button === 1) this.follower.hold(true);
  }

  onWheel(e) {
    if (e.deltaY < 0) this.follower.up();
    else if (e.deltaY > 0) this.follower.down(this.log.scrollHeight, e.timeStamp);
  }

  jump() {
    this.log.scrollTop = this.follower.jump(this.log.scrollHeight, this.log.clientHeight);
    this.jumpBtn.hidden = true;
  }

  // The on-screen keyboard shrinks the visual viewport, not the layout one (Safari; Chrome
  // unless the page asks otherwise): the page would go on under the keyboard, the composer
  // and the answer's end with it. So the page is fitted to what is visible, and the log,
  // while following, pinned to its bottom again. (A pinch zoom is the reader's: left alone.)
  onViewport() {
    const vv = window.visualViewport;
    const body = document.body;
    const covered = vv.scale < 1.01 && vv.height < window.innerHeight - 1;
    const height = covered ? `${vv.height}px` : "";
    // (where the visible part is; a transform also keeps Jump, position: fixed, above it)
    const transform = covered ? `translateY(${vv.offsetTop}px)` : "";
    if (body.style.height === height && body.style.transform === transform) return; // (a desktop's)
    body.style.height = height;
    body.style.transform = transform;
    if (this.follower.following) this.soon();
  }

  // Read-only, for tests and tools: whether the view follows the bottom, and whether Jump
  // shows (the follower is replaced on a chat switch: read it through here).
  get followState() { return { following: this.follower.following, jump: !this.jumpBtn.hidden }; }

  // The log's messages, watched for size changes (a growing answer, a restored one rendered,
  // an image loaded); a removed one is let go.
  watchMessages() {
    for (const el of this.log.children) {
      if (!this.observed.has(el)) { this.observed.add(el); this.resize.observe(el); }
    }
    for (const el of this.observed) {
      if (el.parentNode !== this.log) { this.observed.delete(el); this.resize.unobserve(el); }
    }
  }

  // An explicit follow (a message sent) scrolls even if no size changes.
  soon() { requestAnimationFrame(() => this.afterLayout()); }

  // A finished or restored answer's diagrams (Python marks them: pysse/render/diagrams.py)
  // are web/diagrams.js's, imported with the first: drawn as they come into view.
  diagrams(el) {
    if (!el.querySelector("[data-diagram]:not([data-drawn])")) return;
    import("./diagrams.js").then((m) => {
      this.drawer = m;
      this.stats.diagrams = m.stats;
      if (!this.closed) m.watch(el, this.log);
    }, (e) => this.error(`diagrams: ${e}`));
  }

  // -- what Python asks of the page -------------------------------------------------------

  texts_of(h, max) {
    if (!(globalThis.CSS && CSS.highlights)) return null;
    const el = this.nodes.get(h);
    if (!el) return [];
    const walker = document.createTreeWalker(el.querySelector(".content") || el, NodeFilter.SHOW_TEXT);
    const nodes = [];
    for (let n = walker.nextNode(); n && nodes.length < max; n = walker.nextNode()) nodes.push(n);
    return nodes;
  }

  call(id, name, args) {
    if (name === "confirm") {
      setTimeout(() => this.reply(id, confirm(args[0])), 0); // not inside the frame's work
    } else if (name === "styles") { // the page's own CSS, for a chat exported as a web page
      this.reply(id, [...document.styleSheets].map((sheet) => {
        try { return [...sheet.cssRules].map((r) => r.cssText).join("\n"); } catch (e) { return ""; }
      }).join("\n"));
    } else if (name === "texts") {
      const nodes = this.texts_of(args[0], args[1]);
      this.reply(id, nodes === null ? null : nodes.map((n) => n.data));
    } else {
      this.error(`unknown call ${name}`);
      this.reply(id, null);
    }
  }

  download(name, data, mime, blobs) {
    const part = data && typeof data === "object" && "$blob" in data ? blobs[data.$blob] : data;
    const url = URL.createObjectURL(new Blob([part], { type: mime }));
    const a = document.createElement("a");
    a.href = url;
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  // Replacing an element's content that holds the focus: focus the same item in the new
  // content (same data-role and data-chat), else what controls this element.
  keepFocus(el, change) {
    const active = document.activeElement;
    if (!active || active === el || !el.contains(active)) { change(); return; }
    const role = active.getAttribute("data-role");
    const chat = active.getAttribute("data-chat");
    change();
    const same = [...el.querySelectorAll(`[data-role="${CSS.escape(role || "")}"]`)]
      .find((n) => n.getAttribute("data-chat") === chat);
    const fallback = el.id ? document.querySelector(`[aria-controls="${CSS.escape(el.id)}"]`) : null;
    (same || fallback)?.focus();
  }
}

// The ops (pysse/view/ops.py), by name. A handler returns true when it changed the log's
// list of messages (the ResizeObserver then watches the new ones).
const OPS = {
  new([, h, tag]) {
    if (!TAGS.has(tag)) { this.error(`refused: new <${tag}>`); return; }
    this.bind(h, document.createElement(tag));
  },
  clone([, h, src, n]) {
    const copy = this.node(src, "clone").cloneNode(true);
    this.expectCount("clone", src, this.numberTree(copy, h) - h, n);
  },
  attr([, h, name, value]) {
    const el = this.nodes.get(h);
    if (value === null) { el.removeAttribute(name); return; }
    const why = attrRefused(el, String(name), String(value));
    if (why) { this.error(`refused: ${why}`); return; }
    el.setAttribute(name, value);
  },
  prop([, h, name, value]) {
    const el = this.nodes.get(h);
    if (name !== "value" || !VALUED.has(el.tagName)) { this.error(`refused: property ${name} on <${el.tagName.toLowerCase()}>`); return; }
    el[name] = value;
    if (el === this.prompt) this.grow();
  },
  style([, h, prop, value]) {
    if (!STYLES.has(prop)) { this.error(`refused: style ${prop}`); return; }
    this.nodes.get(h).style[prop] = value;
  },
  text([, h, text]) {
    const el = this.nodes.get(h);
    this.writers.delete(h);
    el.textContent = text;
    return el === this.log;
  },
  html([, h, html, base, n]) {
    const el = this.nodes.get(h);
    if (outsideBody(el)) { this.error(`refused: HTML into <${el.tagName.toLowerCase()}>`); return; }
    this.writers.delete(h);
    // (a restored answer's long fences: their lines plain at once, highlighted a block a frame)
    const swap = n ? null : splitBlocks(html);
    this.keepFocus(el, () => { el.innerHTML = swap ? swap.shell : html; });
    if (swap) swapIn([...el.childNodes], swap.fences);
    this.diagrams(el);
    if (n) this.expectCount("html", h, this.numberChildren(el, base) - base, n);
  },
  adj([, h, html, base, n]) {
    const el = this.nodes.get(h);
    if (outsideBody(el)) { this.error(`refused: HTML into <${el.tagName.toLowerCase()}>`); return; }
    const from = el.children.length;
    el.insertAdjacentHTML("beforeend", html);
    this.diagrams(el);
    if (n) this.expectCount("adj", h, this.numberChildren(el, base, from) - base, n);
  },
  insert([, parent, h, ref]) {
    const p = this.node(parent, "insert into");
    const before = ref === null ? null : ref === 0 ? p.firstChild : this.node(ref, "insert before");
    p.insertBefore(this.node(h, "insert"), before);
    return p === this.log;
  },
  replace([, old, h]) {
    const el = this.node(old, "replace");
    const inside = el.parentNode === this.log;
    el.replaceWith(this.node(h, "replace with"));
    return inside;
  },
  remove([, h]) {
    const el = this.nodes.get(h);
    const inside = el.parentNode === this.log;
    el.remove();
    return inside;
  },
  drop([, handles]) {
    for (const h of handles) {
      this.nodes.delete(h);
      this.writers.delete(h);
      this.texts.delete(h);
      this.listening.delete(h);
      if (this.urls.has(h)) { URL.revokeObjectURL(this.urls.get(h)); this.urls.delete(h); }
    }
  },
  listen([, h, type, capture, options]) { this.listen(h, type, capture, options); },
  update([, h, ops, tails, final]) {
    let writer = this.writers.get(h);
    if (!writer) { writer = new DomWriter(this.nodes.get(h)); this.writers.set(h, writer); }
    writer.apply({ ops, tails, final });
    if (final) this.diagrams(this.nodes.get(h));
  },
  answer([, h, text, reset]) { this.texts.set(h, (reset ? "" : this.texts.get(h) || "") + text); },
  focus([, h, options]) {
    const el = this.nodes.get(h);
    if (!el) return;
    if (options && options.ifShown && !el.checkVisibility?.()) return;
    el.focus();
    if (options && options.select) el.select();
  },
  scroll([, what, h]) {
    const f = this.follower;
    if (what === "follow") { f.follow(); this.soon(); }
    else if (what === "reset") { this.follower = new Follower(); this.hold.forget(); this.jumpBtn.hidden = true; }
    else if (what === "release") f.up();
    else if (what === "center") { f.up(); this.nodes.get(h)?.scrollIntoView({ block: "center" }); }
    else if (what === "hold") this.held = this.log.scrollTop;
    else if (what === "unhold" && this.held !== null) { this.log.scrollTop = this.held; this.held = null; }
  },
  observe([, h, on]) {
    const el = this.nodes.get(h);
    if (!this.seen || !el) return;
    if (on) this.seen.observe(el); else this.seen.unobserve(el);
  },
  call([, id, name, args]) { this.call(id, name, args); },
  mark([, h, [i, lo, j, hi]]) {
    const nodes = this.texts_of(h, Math.max(i, j) + 1);
    if (!nodes || !nodes[j]) return;
    CSS.highlights.delete(HIGHLIGHT);
    const range = document.createRange();
    range.setStart(nodes[i], lo);
    range.setEnd(nodes[j], hi);
    CSS.highlights.set(HIGHLIGHT, new Highlight(range));
  },
  // An answer's numbered source marks (pysse/app/cite_marks.py): after the words each
  // needle names, found in order in the answer's text (never in code), a link to the source.
  cite([, h, marks]) {
    const el = this.node(h, "cite");
    if (!el || !Array.isArray(marks)) return;
    const old = el.querySelectorAll(".cite-mark");
    if (old.length) { old.forEach((m) => m.remove()); el.normalize(); }
    const skip = (n) => n.parentElement.closest("pre, code, math, .cite-mark");
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT,
      { acceptNode: (n) => (skip(n) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT) });
    const nodes = [], starts = [];
    let all = "";
    for (let n = walker.nextNode(); n; n = walker.nextNode()) { nodes.push(n); starts.push(all.length); all += n.data; }
    const places = [];
    let from = 0;
    for (const [needles, refs] of marks.slice(0, 200)) {
      for (const needle of needles) {
        const at = typeof needle === "string" && needle ? all.indexOf(needle, from) : -1;
        if (at >= 0) { places.push([at + needle.length, refs]); from = at; break; }
      }
    }
    for (const [end, refs] of places.reverse()) { // from the last: earlier offsets stay true
      let i = starts.length - 1;
      while (i > 0 && starts[i] >= end) i--;
      const node = nodes[i];
      const after = node.splitText(end - starts[i]);
      const sup = document.createElement("sup");
      sup.className = "cite-mark";
      for (const [n, url, label] of refs) {
        if (!/^https?:\/\//i.test(url)) continue;
        const a = document.createElement("a");
        a.href = url;
        a.target = "_blank";
        a.rel = "noopener noreferrer nofollow";
        a.textContent = String(n);
        a.setAttribute("aria-label", String(label));
        a.title = String(label);
        sup.appendChild(a);
      }
      if (sup.firstChild) after.parentNode.insertBefore(sup, after);
    }
  },
  // A restored answer's kept runs (pysse/chats/runs.py): each under its Python block, as
  // web/runner_host.js shows a run (which reuses the box on the next Run). Text only.
  runs([, h, items]) {
    const el = this.node(h, "runs");
    if (!el || !Array.isArray(items)) return;
    const blocks = el.querySelectorAll(".codeblock");
    for (const [i, status, text] of items.slice(0, 20)) {
      const block = blocks[i];
      if (!block || !block.querySelector(".run") || block.querySelector(":scope > .run-output")) continue;
      const out = runOutput(block);
      out.status.textContent = String(status);
      out.text.textContent = String(text);
      out.text.hidden = !text;
    }
  },
  download([, name, data, mime], blobs) { this.download(name, data, mime, blobs); },
  // An attached image's thumbnail: its bytes as a blob: URL (freed when Python drops the
  // element), only on an <img> and only an image type.
  src([, h, data, mime], blobs) {
    const el = this.node(h, "src");
    if (el.tagName !== "IMG" || !IMAGE_TYPES.has(mime) || !data || !("$blob" in data)) { this.error(`refused: src ${mime}`); return; }
    const url = URL.createObjectURL(new Blob([blobs[data.$blob]], { type: mime }));
    if (this.urls.has(h)) URL.revokeObjectURL(this.urls.get(h));
    this.urls.set(h, url);
    el.src = url;
  },
  copy([, text]) {
    const resolve = this.pendingCopy;
    this.pendingCopy = null;
    if (resolve) resolve(typeof text === "string" ? text : null);
  },
  store([, key, value]) {
    if (!/^pysse\.[\w.-]+$/.test(key)) { this.error(`refused: store ${key}`); return; }
    try { localStorage.setItem(key, value); } catch (e) { // storage disabled or full: this page only
      if (key === "pysse.next.v1") try { localStorage.removeItem(key); } catch (_) { /* disabled */ } // (never a stale one)
    }
  },
};

// -- the boundary: what the ops may do (docs/security.md, "The boundary") --------------------
// Python, in its worker, is outside the page's meta CSP, so the view applies only the ops'
// vocabulary: what pysse/app, pysse/call, pysse/view and pysse/render set today, and a little
// room around it. A refused op is reported (error(): body[data-view-error]) and skipped.
class Desync extends Error {}
const TAGS = new Set(["a", "article", "aside", "b", "br", "button", "code", "dd", "del", "details",
  "div", "dl", "dt", "em", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "i", "img",
  "input", "kbd", "label", "li", "nav", "ol", "option", "p", "pre", "s", "section", "select", "small",
  "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "textarea", "th", "thead", "tr",
  "ul"]); // (never script, iframe, object, embed, base, meta, link, style, form...)
const ATTRS = new Set(["class", "id", "hidden", "disabled", "title", "role", "tabindex", "lang", "dir",
  "open", "value", "placeholder", "type", "name", "for", "checked", "selected", "colspan", "rowspan",
  "start", "alt", "width", "height", "rel", "target", "download"]);
const STYLES = new Set(["minHeight", "containIntrinsicBlockSize"]); // (pysse/app/restore.py)
const VALUED = new Set(["INPUT", "TEXTAREA", "SELECT"]);
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

// A drag of files over the composer or the conversation: the page takes the drop (attached),
// the browser does not open the file.
// A Python block's output box under it, made once: a run's (web/runner_host.js, which is
// given this) and a restored run's (the runs op) are the same box. Text only.
function runOutput(block) {
  let box = block.querySelector(":scope > .run-output");
  if (!box) {
    box = document.createElement("div");
    box.className = "run-output";
    const status = document.createElement("p");
    status.className = "run-status";
    status.setAttribute("role", "status");
    const text = document.createElement("pre");
    text.className = "run-text";
    text.tabIndex = 0;
    box.append(status, text);
    block.append(box);
  }
  return { box, status: box.querySelector(".run-status"), text: box.querySelector(".run-text") };
}

function attachDrop(e) {
  return !!e.dataTransfer?.types?.includes("Files") && !!e.target.closest?.(".composer, [data-role=log]");
}
const SCHEMES = { A: ["http:", "https:", "mailto:"], IMG: ["http:", "https:"] };

function safeUrl(value, schemes) {
  try { return schemes.includes(new URL(value, location.href).protocol); } catch (e) { return false; }
}

// Why an attribute is refused, or "" (data-* and aria-* by name; href on a link and src on an
// image with a safe scheme; never an event handler or a style).
function attrRefused(el, name, value) {
  const tag = el.tagName;
  if (/^(data|aria)-[a-z0-9_.-]+$/.test(name) || ATTRS.has(name)) return "";
  if ((name === "href" && tag === "A") || (name === "src" && tag === "IMG")) {
    return safeUrl(value, SCHEMES[tag]) ? "" : `${name} ${value.slice(0, 80)}`;
  }
  return `attribute ${name} on <${tag.toLowerCase()}>`;
}

// <html> (handle 1) and <head>: never given HTML (a <base>, a <meta http-equiv> would be).
function outsideBody(el) {
  return el === document.documentElement || el === document.head || !!el.closest?.("head");
}
