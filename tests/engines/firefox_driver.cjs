// Firefox ESR over WebDriver BiDi, for the Python tests (tests/engines/firefox.py): one
// puppeteer-core browser, driven by JSON lines on stdin ({seq, op, ...args}); each answer is
// one JSON line on stdout ({seq, result} or {seq, error}). Logs go to stderr.
"use strict";
const readline = require("node:readline");
const puppeteer = require(process.env.PYSSE_PUPPETEER_CORE);

let browser = null;
const pages = new Map();
let nextId = 1;
const get = (id) => {
  const p = pages.get(id);
  if (!p) throw new Error(`no page ${id}`);
  return p;
};

const ops = {
  async launch({ executablePath }) {
    browser = await puppeteer.launch({
      browser: "firefox", executablePath, headless: true, protocolTimeout: 300000,
    });
    return await browser.version();
  },
  async newPage({ width, height }) {
    const context = await browser.createBrowserContext(); // its own storage
    const page = await context.newPage();
    await page.setViewport({ width, height });
    const errors = [];
    page.on("pageerror", (e) => errors.push(`pageerror: ${e && e.message ? e.message : e}`));
    const id = nextId++;
    pages.set(id, { context, page, errors });
    return id;
  },
  async twinPage({ id, width, height }) { // another tab on the same storage
    const { context } = get(id);
    const page = await context.newPage();
    await page.setViewport({ width, height });
    const errors = [];
    page.on("pageerror", (e) => errors.push(`pageerror: ${e && e.message ? e.message : e}`));
    const twin = nextId++;
    pages.set(twin, { context, page, errors, twin: true });
    return twin;
  },
  async goto({ id, url }) { await get(id).page.goto(url, { timeout: 120000 }); },
  async evaluate({ id, expression }) { return await get(id).page.evaluate(expression); },
  async type({ id, selector, text }) {
    const { page } = get(id);
    await page.focus(selector);
    await page.keyboard.type(text);
  },
  async press({ id, selector, key }) {
    const { page } = get(id);
    await page.focus(selector);
    await page.keyboard.press(key);
  },
  async click({ id, selector }) { await get(id).page.click(selector); },
  async screenshot({ id, path }) { await get(id).page.screenshot({ path }); },
  async errors({ id }) { return get(id).errors.slice(); },
  async closePage({ id }) {
    const { context, page, twin } = get(id);
    pages.delete(id);
    if (twin) await page.close(); else await context.close();
  },
  async quit() { if (browser) await browser.close(); browser = null; },
};

const write = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
readline.createInterface({ input: process.stdin }).on("line", async (line) => {
  const { seq, op, ...args } = JSON.parse(line);
  try {
    const result = await ops[op](args);
    write({ seq, result: result === undefined ? null : result });
  } catch (e) {
    write({ seq, error: String((e && e.stack) || e) });
  }
  if (op === "quit") process.exit(0);
});
