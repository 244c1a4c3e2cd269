// The network half of the bridge: fetch() + a ReadableStream read loop that hands every chunk
// to Python synchronously (sink.on_chunk), with first-byte, idle and no-content timeouts, Stop
// through an AbortController (and DELETE to the relay), and resuming a dropped answer from the
// byte it reached. Python (pysse.browser) owns everything else, including every decision and
// every message a person reads.
const ERROR_BODY_MAX = 8192;
const PROBE_MS = 5000;

// When fetch() fails with "TypeError: Failed to fetch" the browser says nothing about why
// (relay down, wrong host, CORS refused, a preflight that did not allow a header). A GET
// needs no preflight: if the relay answers it, the relay is up and the failure was CORS or
// the preflight; its JSON (pysse relays) lists the headers it allows. Returns a plain object.
// `max`: bytes of the body read (a model list is longer than an error), at most 2 MiB.
export async function probe(url, max = ERROR_BODY_MAX) {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(new DOMException("probe timeout", "TimeoutError")), PROBE_MS);
  try {
    const resp = await fetch(url, { method: "GET", cache: "no-store", signal: ctl.signal });
    const text = await readSome(resp, Math.min(Number(max) || ERROR_BODY_MAX, 2 << 20));
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

// Where to resume (or stop) an answer: the URL it was posted to, plus its id and offset. The
// relay URL may already have a query (Gemini's ?alt=sse). Same rule as pysse.call.reconnect.
function answerUrl(url, answerId, from) {
  const q = `answer=${encodeURIComponent(answerId)}` + (from === null ? "" : `&from=${from}`);
  return url + (url.includes("?") ? "&" : "?") + q;
}

// Start an answer: POST the body, then read it (see follow()).
export function start(url, headers, body, sink, firstByteMs, idleMs, contentMs) {
  return follow({ url, headers, body, sink, firstByteMs, idleMs, contentMs, answerId: "", received: 0 });
}

// Reattach to an answer the relay is keeping (after a reload): resume it from byte `received`.
export function reattach(url, headers, answerId, received, sink, firstByteMs, idleMs, contentMs) {
  return follow({ url, headers, body: null, sink, firstByteMs, idleMs, contentMs, answerId, received });
}

// One answer, over as many connections as it takes. Each chunk goes to Python synchronously
// (sink.on_chunk); a connection that drops mid-answer is resumed when the relay gave the
// answer an id: Python decides how long to wait (sink.on_drop), then `GET url?answer=ID&from=N`
// continues from the N bytes Python has, so nothing is duplicated or missed. Stop aborts the
// request and, for a resumable answer, tells the relay (DELETE): a disconnect alone is not Stop.
function follow(o) {
  const { url, sink, firstByteMs, idleMs, contentMs } = o;
  // GET and DELETE carry no body: the same headers (a relay secret...) without content-type.
  const plainHeaders = Object.fromEntries(
    Object.entries(o.headers || {}).filter(([k]) => k.toLowerCase() !== "content-type"));
  let answerId = o.answerId;
  let received = o.received;
  let stopped = false;
  let ctl = null;
  let timer = 0;
  let contentTimer = 0;
  let timedOut = null;
  let wake = null; // ends a wait between two tries early (Stop)
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
  const clearTimers = () => { clearTimeout(timer); clearTimeout(contentTimer); };
  const call = (name, ...args) => {
    try { return sink[name](...args); } catch (e) { console.error(`pysse: ${name} failed`, e); }
    return undefined;
  };
  const seconds = (kind) => ({ "first-byte": firstByteMs, "no-content": contentMs }[kind] ?? idleMs) / 1000;
  const drop = (kind, name, message) => ({ drop: kind, name, message });
  const DONE = { drop: null };

  // One connection: the POST (first) or a resume. Returns DONE when the answer has ended
  // (Python was told), or a drop to resume from.
  async function connect(first) {
    ctl = new AbortController();
    timedOut = null;
    arm(firstByteMs, "first-byte");
    let resp;
    try {
      resp = first
        ? await fetch(url, { method: "POST", headers: o.headers, body: o.body, signal: ctl.signal, cache: "no-store" })
        : await fetch(answerUrl(url, answerId, received), { method: "GET", headers: plainHeaders, signal: ctl.signal, cache: "no-store" });
    } catch (e) {
      clearTimers();
      if (stopped) return DONE;
      if (!first) return drop(timedOut === "revived" ? "revived" : "network-error", e.name, String(e.message));
      if (timedOut) call("on_timeout", timedOut, firstByteMs / 1000);
      else if (e.name !== "AbortError") {
        const found = await probe(url);
        call("on_network_error", e.name, String(e.message), JSON.stringify(found));
      }
      return DONE;
    }
    const ct = resp.headers.get("content-type") || "";
    if (first) {
      answerId = resp.headers.get("x-pysse-answer-id") || "";
      call("on_open", resp.status, ct, resp.headers.get("x-pysse-format") || "", resp.headers.get("x-pysse-relay") || "", answerId);
    }
    if (!resp.ok || !ct.toLowerCase().startsWith("text/event-stream")) {
      // A timer stays armed while the error body is read (at most ERROR_BODY_MAX bytes): a
      // body that stalls must not leave the answer "streaming" forever.
      arm(idleMs, "error-body");
      let text = await readSome(resp, ERROR_BODY_MAX);
      clearTimeout(timer);
      if (stopped) return DONE;
      if (!first) {
        // A gateway or a restarting relay (502, 503...) may come back: try again. The relay's
        // own refusals (410 expired, 416...) are final.
        if (resp.status >= 502 && resp.status <= 504) return drop("http-error", `HTTP ${resp.status}`, text);
        call("on_resume_failed", resp.status, text);
        return DONE;
      }
      if (timedOut === "error-body") text += ` … (the error body stalled for ${idleMs / 1000} s)`;
      if (!resp.ok) call("on_http_error", resp.status, resp.headers.get("retry-after") || "", ct, text);
      else call("on_wrong_type", resp.status, ct, text);
      return DONE;
    }
    if (!first) call("on_resumed", received);
    const reader = resp.body.getReader();
    // A resumed answer may have nothing new yet: silence from here on is an idle timeout (the
    // first connection keeps its first-byte timer until the first chunk).
    if (!first) arm(idleMs, "idle");
    armContent();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        arm(idleMs, "idle");
        received += value.length;
        if (call("on_chunk", value)) armContent();
      }
      clearTimers();
      // done: true is not always the end: WebKit (and Apple's network stack) report a cut
      // connection that way, where Chromium's read rejects. Python says whether the answer
      // ended (false) or this was a drop to resume (true: no terminal signal yet, and the
      // relay keeps the answer).
      if (call("on_end") === true) return drop("early-end", "", "the body ended before the answer did");
      return DONE;
    } catch (e) {
      clearTimers();
      if (stopped) return DONE;
      if (timedOut === "idle") return drop("idle", "TimeoutError", `no bytes for ${idleMs / 1000} s`);
      if (timedOut === "revived") return drop("revived", "AbortError", "replaced when the page came back");
      if (timedOut) { call("on_timeout", timedOut, seconds(timedOut)); return DONE; }
      return drop("read-error", e.name, String(e.message));
    }
  }

  (async () => {
    try {
      let r = await connect(o.body !== null);
      while (r.drop && !stopped) {
        if (!answerId) { // the relay keeps no record of this answer: the drop ends it
          if (r.drop === "idle") call("on_timeout", "idle", idleMs / 1000);
          else call("on_read_error", r.name, r.message);
          break;
        }
        const delay = call("on_drop", r.drop, r.name, r.message);
        if (typeof delay !== "number" || delay < 0) break;
        await new Promise((resolve) => { wake = resolve; setTimeout(resolve, delay); });
        wake = null;
        if (stopped) break;
        r = await connect(false);
      }
    } finally {
      clearTimers();
      try { sink.destroy(); } catch (e) { /* already gone */ }
    }
  })();
  return {
    abort: () => {
      stopped = true;
      if (answerId) {
        fetch(answerUrl(url, answerId, null), { method: "DELETE", headers: plainHeaders, cache: "no-store" })
          .catch(() => {}); // the relay's unwatched cap ends it if this cannot arrive
      }
      if (ctl) ctl.abort(new DOMException("Stopped by the user", "AbortError"));
      if (wake) wake();
    },
    // The page came back into view and Python judged this answer's connection dead or
    // silent (pysse.call.reconnect.revive_on_return): resume now, not at the idle timeout.
    revive: () => {
      if (stopped || !answerId) return;
      if (wake) wake(); // between two tries: the next one starts now
      else if (ctl) expire("revived");
    },
    answer_id: () => answerId,
    received: () => received,
  };
}
