// DomWriter in JavaScript: applies pysse's streaming-markdown updates to a DOM element, for a
// page whose Python runs in a Web Worker (the bundled page's view, web/view.js; or an
// embedder's worker that posts each update: pysse.browser.remote). The same algorithm as
// pysse/render/dom.py, which documents it: settled HTML is appended and parsed once, never
// replaced; only the tails (the unsettled ends of the open containers) change each frame, and
// here a tail is patched in place rather than replaced (morphTail: the browser then styles,
// lays out and paints the characters that came, not a new subtree; the resulting DOM is the
// same, so the final HTML still equals a one-shot render).
//
// An open code fence's lines go into blocks of 32 lines (`<span class="lines">`, display:
// block): appending text to one growing `<code>` made the browser lay out every line of the
// fence again each frame (its whole inline formatting context), a cost that grew with the
// fence (3.0 ms a frame at 1,500 lines against 0.39 ms in blocks, 0.33 ms at 200 lines). A fence that closes is replaced by its highlighted form (Python's op); one
// that never closes (the answer ended inside it) is joined back into one text node here, so
// the final HTML is still a one-shot render's.
//
// An update is {ops: [[depth, html, opens, replaces], ...], tails: [html, ...], final}.
//
//   import { DomWriter } from "./dom_writer.js";
//   const writer = new DomWriter(document.querySelector("#answer"));
//   worker.onmessage = (e) => writer.apply(e.data.update);
export class DomWriter {
  constructor(root) {
    this.boxes = [root]; // the open containers, outermost first
    this.settled = [0]; // per container: how many child nodes are settled
    this.marks = [0]; // per container: its parent's child count before the op that opened it
    this.tails = [""];
    this.lined = [false]; // per container: an open fence's <code> (its lines in blocks)
  }

  apply(update) {
    const ops = update.ops || [];
    const tails = update.tails || [""];
    // Tails of containers the ops touch come off first. A tail that only changed, in a
    // container nothing is appended to (most frames: a few more characters of the open
    // paragraph), is patched in place instead (morphTail): its elements stay, only what
    // differs changes, so a frame costs the browser the changed text, not a new subtree.
    const touched = Math.min(tails.length - 1, ...ops.map((op) => op[0]));
    for (let k = this.boxes.length - 1; k >= 0; k--) {
      if (k >= touched || k >= tails.length) {
        this.removeAfter(k, this.settled[k]);
        this.tails[k] = "";
      } else if (tails[k] !== this.tails[k]) {
        this.morphTail(k, tails[k]);
        this.tails[k] = tails[k];
      }
    }
    for (const [depth, html, opens, replaces] of ops) {
      if (replaces) this.removeAfter(depth, this.marks[depth + 1]);
      this.closeBelow(depth);
      const box = this.boxes[depth];
      const mark = box.childNodes.length;
      const swap = html && !opens && !this.lined[depth] ? splitBlocks(html) : null;
      if (swap) insertSwapping(box, swap);
      else if (html && this.lined[depth]) appendLines(box, html);
      else if (html) box.insertAdjacentHTML("beforeend", html);
      this.settled[depth] = box.childNodes.length;
      if (opens) { // its deepest last element is where its children go
        let el = box.lastElementChild;
        while (el.lastElementChild) el = el.lastElementChild;
        this.boxes.push(el);
        this.settled.push(el.childNodes.length);
        this.marks.push(mark);
        this.tails.push("");
        this.lined.push(el.tagName === "CODE" && el.parentElement?.tagName === "PRE" && !el.childNodes.length);
      }
    }
    this.closeBelow(tails.length - 1);
    tails.forEach((html, k) => {
      if (html !== this.tails[k]) { // removed above, or unchanged and left in place
        this.boxes[k].insertAdjacentHTML("beforeend", html);
        this.tails[k] = html;
      }
    });
  }

  // The nodes after container k's settled ones become those of `html`, keeping every node
  // of the same shape (tag and attribute names) and changing only what differs.
  morphTail(k, html) {
    const tpl = document.createElement("template");
    tpl.innerHTML = html;
    morphList(this.boxes[k], [...this.boxes[k].childNodes].slice(this.settled[k]), tpl.content);
  }

  closeBelow(depth) {
    for (let k = this.boxes.length - 1; k > depth; k--) {
      if (this.lined[k] && this.boxes[k].isConnected) joinLines(this.boxes[k]);
    }
    for (const stack of [this.boxes, this.settled, this.marks, this.tails, this.lined]) {
      if (stack.length > depth + 1) stack.length = depth + 1;
    }
  }

  removeAfter(k, n) {
    const box = this.boxes[k];
    while (box.childNodes.length > n) box.lastChild.remove();
  }
}

// An open fence's settled lines (escaped text), appended to its last block of lines until
// that holds LINES_PER_BLOCK, then to a new one. A block's last line feed is left to its end
// (kept in `pysseText`, for joinLines), so text selected across blocks copies as it was.
const LINES_PER_BLOCK = 32;
function appendLines(code, html) {
  const tpl = document.createElement("template");
  tpl.innerHTML = html;
  const parts = tpl.content.textContent.split("\n");
  const lines = parts.slice(0, -1).map((line) => line + "\n"); // each with its line feed
  if (parts.at(-1)) lines.push(parts.at(-1));
  let block = code.lastChild;
  while (lines.length) {
    if (!block || block.pysseLines === undefined || (block.pysseLines >= LINES_PER_BLOCK && !block.pysseBlankEnd)) {
      block = document.createElement("span");
      block.className = "lines";
      block.style.display = "block"; // (here, not in a stylesheet: an embedder's page has none)
      block.pysseText = "";
      block.pysseLines = 0;
      code.append(block);
    }
    // A block never ends on a blank line: its last line feed is left to the block's end,
    // and a blank line there would show as no line at all.
    let n = Math.max(1, LINES_PER_BLOCK - block.pysseLines);
    while (n < lines.length && !lines[n - 1].trim()) n++;
    const taken = lines.splice(0, n);
    const text = taken.join("");
    block.pysseBlankEnd = !taken[taken.length - 1].trim(); // (so it takes the next line too)
    const before = block.pysseText.endsWith("\n") ? "\n" : "";
    block.append(before + (text.endsWith("\n") ? text.slice(0, -1) : text));
    block.pysseText += text;
    block.pysseLines += text.split("\n").length - 1 + (text.endsWith("\n") ? 0 : 1);
  }
}

// A long fence's highlighted form comes in blocks of lines (pysse.render.highlight.in_blocks:
// `<span class="lines">`, each with its own line feeds). Put in at once, a 420-line fence
// restyled ~5,000 elements and laid out ~12,700 objects in one task (~44 ms at 1x, ~170 on a
// phone). So the fence goes in with its lines as plain text in those blocks (cheap: text), and
// each block is swapped for its highlighted form a frame at a time (a hidden page: at once);
// the final DOM is the one-shot render's. (The view does the same for a restored answer.)
const BLOCK_OPEN = '<span class="lines">';
const SWAPS = []; // {plain: [span], blocks: [html], i}: the fences still swapping, oldest first
let swapQueued = false;

// The HTML with each long fence's blocks taken out (a marker element in their place), and
// the blocks of each; null when there is no such fence.
export function splitBlocks(html) {
  if (html.indexOf(BLOCK_OPEN) < 0) return null;
  const fences = [];
  let shell = "";
  let at = 0;
  for (let open = html.indexOf(BLOCK_OPEN); open >= 0; open = html.indexOf(BLOCK_OPEN, at)) {
    const close = html.indexOf("</code>", open);
    if (close < 0) return null;
    fences.push(html.slice(open, close).split(BLOCK_OPEN).slice(1));
    shell += `${html.slice(at, open)}<i data-pysse-swap=""></i>`;
    at = close;
  }
  return { shell: shell + html.slice(at), fences };
}

const ENTITIES = { "&lt;": "<", "&gt;": ">", "&amp;": "&", "&quot;": '"', "&#39;": "'", "&#x27;": "'" };
const textOf = (html) => html.replace(/<[^>]*>/g, "").replace(/&(?:lt|gt|amp|quot|#39|#x27);/g, (e) => ENTITIES[e]);

// The fences' markers among `nodes` (the nodes just put in) become their lines as plain text
// in blocks, each swapped for its highlighted form a frame at a time.
export function swapIn(nodes, fences) {
  const spots = [];
  for (const node of nodes) {
    if (node.nodeType === 1) spots.push(...node.querySelectorAll("[data-pysse-swap]"));
  }
  spots.forEach((spot, k) => {
    const blocks = fences[k];
    const plain = blocks.map((b) => {
      const span = document.createElement("span");
      span.className = "lines";
      span.style.display = "block";
      span.textContent = textOf(b);
      return span;
    });
    spot.replaceWith(...plain);
    SWAPS.push({ plain, blocks, i: 0 });
  });
  queueSwaps();
}

function insertSwapping(box, { shell, fences }) {
  const mark = box.childNodes.length;
  box.insertAdjacentHTML("beforeend", shell);
  swapIn([...box.childNodes].slice(mark), fences);
}

function queueSwaps() {
  if (swapQueued || !SWAPS.length) return;
  swapQueued = true;
  const run = () => {
    swapQueued = false;
    if (document.visibilityState === "hidden") while (SWAPS.length) swapOne();
    else swapOne();
    queueSwaps();
  };
  if (document.visibilityState === "hidden") setTimeout(run, 0);
  else requestAnimationFrame(run);
}

// The next block of the oldest fence still swapping (one taken out of the page is let go).
function swapOne() {
  while (SWAPS.length) {
    const s = SWAPS[0];
    const old = s.plain[s.i];
    if (!old.isConnected) { SWAPS.shift(); continue; }
    const tpl = document.createElement("template");
    tpl.innerHTML = BLOCK_OPEN + s.blocks[s.i];
    old.replaceWith(tpl.content);
    if (++s.i >= s.blocks.length) SWAPS.shift();
    return;
  }
}

// How many fences are still being swapped in (tests wait for none).
export const swapsPending = () => SWAPS.length;
globalThis.pysseSwapsPending = swapsPending;

// A fence that ended open: its blocks become the one text node a one-shot render has.
function joinLines(code) {
  let text = "";
  for (const node of code.childNodes) text += node.pysseText ?? node.textContent;
  code.replaceChildren(text);
}

const sameNames = (a, b) => {
  if (a.attributes.length !== b.attributes.length) return false;
  for (let i = 0; i < a.attributes.length; i++) {
    if (a.attributes[i].name !== b.attributes[i].name) return false;
  }
  return true;
};

// Make `old` (the nodes `parent` has, in order, from where they start) into `next`'s child
// nodes: a node of the same shape is patched, any other replaced by the new one.
function morphList(parent, old, next) {
  const nodes = [...next.childNodes];
  nodes.forEach((b, i) => {
    const a = old[i];
    if (!a) parent.appendChild(b);
    else if (a.nodeType !== b.nodeType || (a.nodeType === 1 && (a.tagName !== b.tagName || !sameNames(a, b)))) {
      parent.replaceChild(b, a);
    } else if (a.nodeType === 1) {
      for (const { name, value } of b.attributes) if (a.getAttribute(name) !== value) a.setAttribute(name, value);
      morphList(a, [...a.childNodes], b);
    } else if (a.data !== b.data) {
      a.data = b.data;
    }
  });
  for (let i = nodes.length; i < old.length; i++) old[i].remove();
}
