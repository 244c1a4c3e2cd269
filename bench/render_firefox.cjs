// One streamed answer in Firefox ESR over WebDriver BiDi (puppeteer-core), for
// bench/bench_render.py. Firefox has no devtools.timeline over BiDi, so Firefox's own
// profiler records it: started with the browser (MOZ_PROFILER_STARTUP), markers only (no
// stack sampling, no marker stacks: the least overhead), written to `profile` when the
// browser quits (MOZ_PROFILER_SHUTDOWN). bench/gecko_frames.py reads it.
// Usage: node render_firefox.cjs '<json: {puppeteer, firefox, url, prompt, profile, warmMs,
// start, end}>'. Prints one JSON line: {version, warm, t0, t1} or {error}.
"use strict";
const opts = JSON.parse(process.argv[2]);
const puppeteer = require(opts.puppeteer);

(async () => {
  const browser = await puppeteer.launch({
    browser: "firefox",
    executablePath: opts.firefox,
    headless: true,
    protocolTimeout: 600000,
    env: {
      ...process.env,
      MOZ_PROFILER_STARTUP: "1",
      MOZ_PROFILER_SHUTDOWN: opts.profile,
      MOZ_PROFILER_STARTUP_FEATURES: "nostacksampling,nomarkerstacks",
      MOZ_PROFILER_STARTUP_FILTERS: "GeckoMain",
      MOZ_PROFILER_STARTUP_ENTRIES: "33554432",
    },
  });
  let result;
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 720 });
    await page.goto(opts.url, { timeout: 120000 });
    await page.waitForSelector("body[data-ready='1']", { timeout: 120000 });
    let warm = false;
    if (opts.warmMs > 0) {
      try { // data-warm is optional: a page without it is measured after a fixed settle
        await page.waitForSelector("body[data-warm='1']", { timeout: opts.warmMs });
        warm = true;
      } catch (e) {}
    }
    await new Promise((r) => setTimeout(r, 500));
    // the end mark, as in Chromium: only data-state is watched
    const done = page.evaluate(`new Promise((resolve) => {
      new MutationObserver((list, obs) => { for (const m of list) {
        if (m.oldValue === 'streaming' && m.target.dataset.role === 'assistant'
            && m.target.dataset.state !== 'streaming') {
          performance.mark(${JSON.stringify(opts.end)}); obs.disconnect();
          resolve(performance.now()); return; } } })
      .observe(document.body, { subtree: true, attributes: true, attributeOldValue: true,
                                attributeFilter: ['data-state'] }); })`);
    await page.focus("[data-role=prompt]");
    await page.keyboard.type(opts.prompt);
    const t0 = await page.evaluate(
      `(performance.mark(${JSON.stringify(opts.start)}), performance.now())`);
    await page.keyboard.press("Enter");
    const t1 = await done;
    await new Promise((r) => setTimeout(r, 500)); // the final frame
    result = { version: await browser.version(), warm, t0, t1 };
  } finally {
    await browser.close(); // writes the profile
  }
  process.stdout.write(JSON.stringify(result) + "\n");
})().catch((e) => {
  process.stdout.write(JSON.stringify({ error: String((e && e.stack) || e) }) + "\n");
  process.exit(1);
});
