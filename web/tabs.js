// The page's other tabs, for pysse.app.tabs: a BroadcastChannel that tells them what this tab
// changed in the chat store (and hears theirs), and Web Locks, so that one tab at a time
// writes a chat and one tab streams (or resumes) an answer. Loaded where the page's Python
// runs: its worker, or the main thread. Messages are JSON texts; Python reads and checks them.
const CHANNEL = "pysse-chats";
const hasLocks = typeof navigator !== "undefined" && !!navigator.locks;
const hasBroadcast = typeof BroadcastChannel !== "undefined";
const features = [...(hasBroadcast ? ["broadcast"] : []), ...(hasLocks ? ["locks"] : [])];
const listeners = [];
let channel = null;

function open() {
  if (!channel && hasBroadcast) {
    channel = new BroadcastChannel(CHANNEL);
    channel.onmessage = (e) => {
      if (typeof e.data !== "string") return; // (only this page's own messages)
      for (const fn of listeners) fn(e.data);
    };
  }
  return channel;
}

function post(text) { open()?.postMessage(String(text)); }

function listen(fn) { listeners.push(fn); open(); }

// Resolves with a release function once this tab holds the lock `name` (wait: true), or
// with null when another tab holds it (wait: false). Without Web Locks, a release at once:
// nothing is guarded, and the page says so.
function acquire(name, wait) {
  if (!hasLocks) return Promise.resolve(() => {});
  return new Promise((resolve, reject) => {
    navigator.locks.request(String(name), { ifAvailable: !wait }, (lock) => {
      if (!lock) { resolve(null); return undefined; }
      return new Promise((release) => resolve(() => release()));
    }).catch(reject);
  });
}

globalThis.pysseTabs = { features, post, listen, acquire };
