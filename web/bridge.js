// The network half of the bridge: fetch() + a ReadableStream read loop that hands every chunk
// to Python synchronously (sink.on_chunk), with first-byte, idle and no-content timeouts and
// Stop through an AbortController. Python (pysse.browser) owns everything else, including
// every message a person reads.
const ERROR_BODY_MAX = 8192;
const PROBE_MS = 5000;

// When fetch() fails with "TypeError: Failed to fetch" the browser says nothing about why
// (relay down, wrong host, CORS refused, a preflight that did not allow a header). A GET
// needs no preflight: if the relay answers it, the relay is up and the failure was CORS or
// the preflight; its JSON (pysse relays) lists the headers it allows. Returns a plain object.
export async function probe(url) {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(new DOMException("probe timeout", "TimeoutError")), PROBE_MS);
  try {
    const resp = await fetch(url, { method: "GET", cache: "no-store", signal: ctl.signal });
    const text = await readSome(resp, ERROR_BODY_MAX);
    return { reached: true, status: resp.status, relay: resp.headers.get("x-pysse-relay") || "", text };
  } catch (e) {
    return { reached: false, error: `${e.name}: ${e.message}` };
  } finally {
    clearTimeout(timer);
  }
}

// Up to `max` bytes of a response body as text (UTF-8, invalid bytes replaced); "" if the body
// cannot be read (aborted, network error). Never reads an endless body to its end.
async function readSome(resp, max) {
  if (!resp.body) return "";
  const reader = resp.body.getReader();
  const parts = [];
  let size = 0;
  try {
    while (size < max) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      size += value.length;
    }
  } catch (e) {
    /* unreadable or aborted: keep what arrived */
  } finally {
    reader.cancel().catch(() => {});
  }
  const all = new Uint8Array(Math.min(size, max));
  let at = 0;
  for (const p of parts) {
    const take = Math.min(p.length, all.length - at);
    all.set(p.subarray(0, take), at);
    at += take;
  }
  return new TextDecoder().decode(all);
}

export function start(url, headers, body, sink, firstByteMs, idleMs, contentMs) {
  const ctl = new AbortController();
  let timer = 0;
  let contentTimer = 0;
  let timedOut = null;
  const expire = (kind) => {
    timedOut = kind;
    // Never abort with a string reason: a Python coroutine awaiting the read would hang
    // (Pyodide 314 rejects the promise with a non-Error). Always a DOMException.
    ctl.abort(new DOMException(`${kind} timeout`, "TimeoutError"));
  };
  const arm = (ms, kind) => {
    clearTimeout(timer);
    timer = setTimeout(() => expire(kind), ms);
  };
  // Keep-alive comments prove the connection, not progress: this timer is re-armed only when
  // a chunk completed chat content (sink.on_chunk returns true).
  const armContent = () => {
    clearTimeout(contentTimer);
    if (contentMs > 0) contentTimer = setTimeout(() => expire("no-content"), contentMs);
  };
  const call = (name, ...args) => {
    try { return sink[name](...args); } catch (e) { console.error(`pysse: ${name} failed`, e); }
    return undefined;
  };
  const seconds = (kind) => ({ "first-byte": firstByteMs, "no-content": contentMs }[kind] ?? idleMs) / 1000;
  (async () => {
    try {
      arm(firstByteMs, "first-byte");
      let resp;
      try {
        resp = await fetch(url, { method: "POST", headers, body, signal: ctl.signal, cache: "no-store" });
      } catch (e) {
        if (timedOut) call("on_timeout", timedOut, firstByteMs / 1000);
        else if (e.name !== "AbortError") {
          const found = await probe(url);
          call("on_network_error", e.name, String(e.message), JSON.stringify(found));
        }
        return;
      }
      const ct = resp.headers.get("content-type") || "";
      call("on_open", resp.status, ct, resp.headers.get("x-pysse-format") || "", resp.headers.get("x-pysse-relay") || "");
      if (!resp.ok || !ct.toLowerCase().startsWith("text/event-stream")) {
        // A timer stays armed while the error body is read (at most ERROR_BODY_MAX bytes): a
        // body that stalls must not leave the answer "streaming" forever.
        arm(idleMs, "error-body");
        let text = await readSome(resp, ERROR_BODY_MAX);
        clearTimeout(timer);
        if (timedOut === "error-body") text += ` … (the error body stalled for ${idleMs / 1000} s)`;
        if (!resp.ok) call("on_http_error", resp.status, resp.headers.get("retry-after") || "", ct, text);
        else call("on_wrong_type", resp.status, ct, text);
        return;
      }
      const reader = resp.body.getReader();
      armContent();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          arm(idleMs, "idle");
          if (call("on_chunk", value)) armContent();
        }
        clearTimeout(timer);
        clearTimeout(contentTimer);
        call("on_end");
      } catch (e) {
        clearTimeout(timer);
        clearTimeout(contentTimer);
        if (timedOut) call("on_timeout", timedOut, seconds(timedOut));
        else call("on_read_error", e.name, String(e.message));
      }
    } finally {
      clearTimeout(timer);
      clearTimeout(contentTimer);
      try { sink.destroy(); } catch (e) { /* already gone */ }
    }
  })();
  return { abort: () => ctl.abort(new DOMException("Stopped by the user", "AbortError")) };
}
