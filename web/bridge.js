// The network half of the bridge: fetch() + a ReadableStream read loop that hands every chunk
// to Python synchronously (sink.on_chunk), with first-byte and idle timeouts and Stop through
// an AbortController. Python (pysse.browser) owns everything else.
const ERROR_BODY_MAX = 8192;

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

export function start(url, headers, body, sink, firstByteMs, idleMs) {
  const ctl = new AbortController();
  let timer = 0;
  let timedOut = null;
  const arm = (ms, kind) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = kind;
      // Never abort with a string reason: a Python coroutine awaiting the read would hang
      // (Pyodide 314 rejects the promise with a non-Error). Always a DOMException.
      ctl.abort(new DOMException(`${kind} timeout`, "TimeoutError"));
    }, ms);
  };
  const call = (name, ...args) => {
    try { sink[name](...args); } catch (e) { console.error(`pysse: ${name} failed`, e); }
  };
  (async () => {
    try {
      arm(firstByteMs, "first-byte");
      let resp;
      try {
        resp = await fetch(url, { method: "POST", headers, body, signal: ctl.signal, cache: "no-store" });
      } catch (e) {
        if (timedOut) call("on_timeout", timedOut, firstByteMs / 1000);
        else if (e.name !== "AbortError") call("on_network_error", e.name, String(e.message));
        return;
      }
      const ct = resp.headers.get("content-type") || "";
      if (!resp.ok || !ct.toLowerCase().startsWith("text/event-stream")) {
        // A timer stays armed while the error body is read (at most ERROR_BODY_MAX bytes): a
        // body that stalls must not leave the answer "streaming" forever.
        arm(idleMs, "error-body");
        let text = await readSome(resp, ERROR_BODY_MAX);
        clearTimeout(timer);
        if (timedOut === "error-body") text += ` … (the error body stalled for ${idleMs / 1000} s)`;
        if (!resp.ok) call("on_http_error", resp.status, resp.headers.get("retry-after"), ct, text);
        else call("on_wrong_type", resp.status, ct, text);
        return;
      }
      const reader = resp.body.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          arm(idleMs, "idle");
          call("on_chunk", value);
        }
        clearTimeout(timer);
        call("on_end");
      } catch (e) {
        clearTimeout(timer);
        if (timedOut) call("on_timeout", timedOut, (timedOut === "first-byte" ? firstByteMs : idleMs) / 1000);
        else call("on_read_error", e.name, String(e.message));
      }
    } finally {
      clearTimeout(timer);
      try { sink.destroy(); } catch (e) { /* already gone */ }
    }
  })();
  return { abort: () => ctl.abort(new DOMException("Stopped by the user", "AbortError")) };
}
