// The network half of the bridge: fetch() + a ReadableStream read loop that hands every chunk
// to Python synchronously (sink.on_chunk), with first-byte and idle timeouts and Stop through
// an AbortController. Python (pysse.browser) owns everything else.
export function start(url, headers, body, sink, firstByteMs, idleMs) {
  const ctl = new AbortController();
  let timer = 0;
  let timedOut = null;
  const arm = (ms, kind) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = kind;
      // Never abort with a string reason: Pyodide would hang (see NOTES).
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
        clearTimeout(timer);
        let text = "";
        try { text = (await resp.text()).slice(0, 4000); } catch (e) { /* body unreadable */ }
        if (!resp.ok) call("on_http_error", resp.status, resp.headers.get("retry-after"), ct, text);
        else call("on_wrong_type", resp.status, ct, text);
        return;
      }
      call("on_open", resp.status, ct);
      const reader = resp.body.getReader();
      let first = true;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          arm(idleMs, first ? "idle" : "idle");
          first = false;
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
