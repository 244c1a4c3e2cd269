// The page's service worker: repeat visits take the runtime (Pyodide, the snapshot, the zips,
// the lazy bundles) from its cache, with no network, and the page opens offline with its
// stored chats. Never a stale page after a deploy: the runtime's files are content-addressed
// (a new build's are new URLs), and the page's own files come from the network first, from
// the cache only when the network fails. A new build's service worker waits until the page
// says to take over ("A new version is ready": web/app.js).
//
// build.py writes the three lists below (this build's files); everything else (the relay,
// other origins, POSTs) passes through untouched.
const BUILD = "dev"; // build.py: a hash of this build
const SHELL = []; // build.py: the page's own files ("./" is index.html)
const RUNTIME = []; // build.py: what the page boots from: the plain start's, the snapshot's
const KEEP = []; // build.py: every content-addressed file of this build (lazy ones too)
const HASHES = {}; // build.py: each of KEEP's sha256, hex
const IMMUTABLE = ["boot/", "pyodide/"]; // content-addressed: never change

const SHELL_CACHE = `pysse-shell-${BUILD}`;
const RUNTIME_CACHE = "pysse-runtime";
const scope = new URL(self.registration.scope);
const local = (url) => url.origin === scope.origin && url.pathname.startsWith(scope.pathname);
const rel = (url) => url.pathname.slice(scope.pathname.length);

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const shell = await caches.open(SHELL_CACHE);
    await shell.addAll(SHELL.map((p) => new Request(p, { cache: "no-cache" })));
    // The runtime is in the HTTP cache after the visit that installs this: no new download.
    const runtime = await caches.open(RUNTIME_CACHE);
    const have = new Set((await runtime.keys()).map((r) => r.url));
    await Promise.all(RUNTIME.filter((p) => !have.has(new URL(p, scope).href)).map(async (p) => {
      const resp = await fetch(p);
      if (await genuine(p, resp)) await runtime.put(p, resp);
    }));
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith("pysse-shell-") && name !== SHELL_CACHE) await caches.delete(name);
    }
    // Older builds' files (content-addressed paths this build does not list) go.
    const keep = new Set(KEEP.map((p) => new URL(p, scope).href));
    const runtime = await caches.open(RUNTIME_CACHE);
    for (const req of await runtime.keys()) {
      if (!keep.has(req.url)) await runtime.delete(req);
    }
    await self.clients.claim();
  })());
});

self.addEventListener("message", (event) => {
  if (event.data && event.data.t === "take-over") self.skipWaiting();
});

// Kept for good, so kept only if it is this build's: a plain 200 from this origin (not
// redirected, not opaque) whose bytes are the ones build.py hashed for this path. A proxy's
// error page, a captive portal's redirect or a truncated body is served once, never kept.
async function genuine(path, resp) {
  const want = HASHES[path];
  if (!want || resp.status !== 200 || resp.type !== "basic" || resp.redirected) return false;
  const digest = await crypto.subtle.digest("SHA-256", await resp.clone().arrayBuffer());
  const got = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return got === want;
}

// Content-addressed files: the cache, else the network (and kept, if genuine).
async function immutable(request) {
  const cache = await caches.open(RUNTIME_CACHE);
  const hit = await cache.match(request, { ignoreVary: true });
  if (hit) return hit;
  const resp = await fetch(request);
  if (await genuine(rel(new URL(request.url)), resp)) await cache.put(request, resp.clone());
  return resp;
}

// The page's own files: the network (and kept), else the cache (offline).
async function shell(request) {
  const cache = await caches.open(SHELL_CACHE);
  try {
    // (a fresh request for the URL: a navigation's own cannot take options)
    const resp = await fetch(request.url, { cache: "no-cache", credentials: "same-origin" });
    if (resp.ok && resp.type === "basic" && !resp.redirected) await cache.put(request.url, resp.clone());
    return resp;
  } catch (e) {
    const options = { ignoreSearch: true, ignoreVary: true };
    const hit = (await cache.match(request, options))
      || (request.mode === "navigate" && await cache.match(new URL("./", scope).href, options));
    if (hit) return hit;
    throw e;
  }
}

self.addEventListener("fetch", (event) => {
  const req = event.request;
  if (req.method !== "GET") return;
  const url = new URL(req.url);
  if (!local(url)) return;
  const path = rel(url);
  if (IMMUTABLE.some((p) => path.startsWith(p))) event.respondWith(immutable(req));
  else if (SHELL.includes(path || "./")) event.respondWith(shell(req));
});
