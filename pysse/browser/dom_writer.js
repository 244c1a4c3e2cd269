// DomWriter in JavaScript: applies pysse's streaming-markdown updates to a DOM element, for a
// page whose Python runs in a Web Worker (the worker posts each update: pysse.browser.remote).
// The same algorithm as pysse/render/dom.py, which documents it: settled HTML is appended
// and parsed once, never replaced; only the tails (the unsettled ends of the open containers)
// are replaced each frame.
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
  }

  apply(update) {
    const ops = update.ops || [];
    const tails = update.tails || [""];
    // Tails that change, and those of containers the ops touch, come off first.
    const touched = Math.min(tails.length - 1, ...ops.map((op) => op[0]));
    for (let k = this.boxes.length - 1; k >= 0; k--) {
      if (k >= touched || k >= tails.length || tails[k] !== this.tails[k]) {
        this.removeAfter(k, this.settled[k]);
        this.tails[k] = "";
      }
    }
    for (const [depth, html, opens, replaces] of ops) {
      if (replaces) this.removeAfter(depth, this.marks[depth + 1]);
      this.closeBelow(depth);
      const box = this.boxes[depth];
      const mark = box.childNodes.length;
      if (html) box.insertAdjacentHTML("beforeend", html);
      this.settled[depth] = box.childNodes.length;
      if (opens) { // its deepest last element is where its children go
        let el = box.lastElementChild;
        while (el.lastElementChild) el = el.lastElementChild;
        this.boxes.push(el);
        this.settled.push(el.childNodes.length);
        this.marks.push(mark);
        this.tails.push("");
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

  closeBelow(depth) {
    for (const stack of [this.boxes, this.settled, this.marks, this.tails]) {
      if (stack.length > depth + 1) stack.length = depth + 1;
    }
  }

  removeAfter(k, n) {
    const box = this.boxes[k];
    while (box.childNodes.length > n) box.lastChild.remove();
  }
}
