// Storage half of the page: IndexedDB as a few promises (globalThis.pysseStore), for pysse.app's
// chat store. Python decides what is stored; this file only moves values in and out. Writes
// resolve when their transaction commits, so a full disk (QuotaExceededError) is an error here,
// not a silent loss.
const DB = "pysse";
// 2: "html", each finished answer's rendered HTML (a cache); 3: "search", each chat's searched
// messages (written with its body and row: putIfStamp)
const VERSION = 3;
const STORES = ["chats", "bodies", "recordings", "meta", "html", "search"];
let db = null;

export function open() {
  if (db) return Promise.resolve(true);
  return new Promise((resolve, reject) => {
    let req;
    if (typeof indexedDB === "undefined" || !indexedDB) {
      reject(new DOMException("no IndexedDB in this context", "InvalidStateError"));
      return;
    }
    try {
      req = indexedDB.open(DB, VERSION);
    } catch (e) {  // no indexedDB at all, or refused (some private modes)
      reject(e);
      return;
    }
    req.onupgradeneeded = () => {
      for (const name of STORES) {
        if (!req.result.objectStoreNames.contains(name)) req.result.createObjectStore(name);
      }
    };
    req.onsuccess = () => {
      db = req.result;
      db.onversionchange = () => { db.close(); db = null; };
      resolve(true);
    };
    req.onerror = () => reject(req.error);
    req.onblocked = () => reject(new DOMException("the chat store is held by an older tab", "InvalidStateError"));
  });
}

function run(stores, mode, body) {
  return new Promise((resolve, reject) => {
    if (!db) { reject(new DOMException("the chat store is not open", "InvalidStateError")); return; }
    let t;
    try { t = db.transaction(stores, mode); } catch (e) { reject(e); return; }
    let result;
    t.oncomplete = () => resolve(result);
    t.onerror = () => reject(t.error);
    t.onabort = () => reject(t.error || new DOMException("the write was aborted", "AbortError"));
    try {
      const req = body(t);
      if (req) req.onsuccess = () => { result = req.result; };
    } catch (e) {
      try { t.abort(); } catch (_) { /* already finished */ }
      reject(e);
    }
  });
}

export const get = (store, key) => run(store, "readonly", (t) => t.objectStore(store).get(key));
export const put = (store, key, value) => run(store, "readwrite", (t) => t.objectStore(store).put(value, key));
// A chat's row, body and record written in one transaction, but only if its row's stamp (the
// `w` of its JSON: which tab's write it is) is still `expected` (null: no row), read in that
// same transaction: a compare-and-set, so that tabs never overwrite each other's writes.
// Resolves with [written, the stamp found]; Python merges and tries again when not written.
const stampOf = (row) => {
  if (row === undefined || row === null) return null;
  try { const w = JSON.parse(row).w; return typeof w === "string" ? w.slice(0, 64) : ""; } catch (_) { return ""; }
};
export function putIfStamp(id, expected, entries) {
  const want = expected ?? null;
  const stores = [...new Set(["chats", ...entries.map((e) => e[0])])];
  let seen = null;
  let failed = null;  // a put's own error (a full disk), not the abort it causes
  return run(stores, "readwrite", (t) => {
    t.objectStore("chats").get(id).onsuccess = (e) => {
      seen = stampOf(e.target.result);
      if (seen !== want) return;
      try {
        for (const [store, key, value] of entries) t.objectStore(store).put(value, key);
      } catch (err) {
        failed = err;
        t.abort();
      }
    };
  }).then(() => [seen === want, seen], (err) => { throw failed || err; });
}
export const del = (store, key) => run(store, "readwrite", (t) => t.objectStore(store).delete(key));
export const all = (store) => run(store, "readonly", (t) => t.objectStore(store).getAll());
export const keys = (store) => run(store, "readonly", (t) => t.objectStore(store).getAllKeys());
// Delete a key range (a chat's recordings: "chat/" … "chat/\uffff") in one transaction.
export const delPrefix = (store, prefix) => run(store, "readwrite",
  (t) => t.objectStore(store).delete(IDBKeyRange.bound(prefix, prefix + "\uffff")));
export const getPrefix = (store, prefix) => run(store, "readonly",
  (t) => t.objectStore(store).getAll(IDBKeyRange.bound(prefix, prefix + "\uffff")));
export const keysPrefix = (store, prefix) => run(store, "readonly",
  (t) => t.objectStore(store).getAllKeys(IDBKeyRange.bound(prefix, prefix + "\uffff")));
// Several keys' values in one transaction (undefined where there is none), in their order.
export function getMany(store, keys) {
  const values = new Array(keys.length);
  return run(store, "readonly", (t) => {
    const os = t.objectStore(store);
    keys.forEach((k, i) => { os.get(k).onsuccess = (e) => { values[i] = e.target.result; }; });
  }).then(() => values);
}
export const clear = () => run(STORES, "readwrite", (t) => { for (const s of STORES) t.objectStore(s).clear(); });

globalThis.pysseStore = { open, get, put, putIfStamp, del, all, keys, delPrefix, getPrefix, keysPrefix, getMany, clear };
