// pysse into a Pyodide that is already running, from the directory this module is served from
// (`python build.py wheels DIR` writes it there, beside the wheels): micropip from its own
// wheel in that directory, then micropip.install("pysse[markdown]", index_urls=[DIR/simple]).
// Nothing comes from a CDN.
//
//   import { installPysse } from "./pysse/install.js";
//   await installPysse(pyodide);   // then, in Python: from pysse.browser import stream_chat
//
// micropip's own errors rarely say which URL failed: a wrong index URL reads "Can't fetch
// metadata for 'pysse'", a missing wheel "File is not a zip file" or "Invalid checksum". So
// after a failed install each URL the install needed is looked at, and the error names the
// first one that did not answer. Some failures are silent (a package micropip did not find in
// the index is taken from Pyodide's lock, whose file may not be there): every installed module
// is imported before this resolves.
const HERE = new URL("./", import.meta.url);

export class InstallError extends Error {
  constructor(message, url = "") {
    super(message);
    this.name = "InstallError";
    this.url = url; // the URL that failed, when one did
  }
}

// Install pysse[markdown] into `pyodide`. `index`: the simple index to install from (default:
// the one beside this module); a relative URL resolves against the page (or worker).
// `highlight: false` leaves pygments out (1.25 MB of the 1.69 MB): closed code fences are then
// shown as plain code, everything else is the same.
export async function installPysse(pyodide, { index = new URL("simple", HERE).href, highlight = true } = {}) {
  const base = new URL(index, globalThis.location?.href ?? HERE).href.replace(/\/+$/, "");
  const manifest = await fetchManifest();
  await loadMicropip(pyodide, new URL(manifest.micropip.url, HERE).href);
  const micropip = pyodide.pyimport("micropip");
  // Each dependency is also named: after a failed install micropip may have installed pysse
  // but not all of its dependencies, and a retry in the same page would stop at "pysse is
  // already installed".
  const wheels = manifest.wheels.filter((w) => highlight || w.project !== "pygments");
  const deps = wheels.map((w) => w.project).filter((p) => p !== "pysse");
  const wanted = [highlight ? manifest.requirement : "pysse", ...deps];
  try {
    await micropip.install.callKwargs(wanted, { index_urls: [base] });
    importEach(pyodide, wheels);
  } catch (e) {
    const said = lastLine(e);
    const failed = await firstFailure(base, wheels);
    const where = `${wanted[0]} could not be installed from ${base}`;
    if (failed) throw new InstallError(`${where}: ${failed.url} ${failed.why} (micropip: ${said})`, failed.url);
    throw new InstallError(`${where}: ${said}`);
  } finally {
    micropip.destroy();
  }
}

async function fetchManifest() {
  const url = new URL("wheels.json", HERE).href;
  const resp = await reach(url, "GET");
  if (resp.why) throw new InstallError(`pysse's wheel list ${url} ${resp.why} (serve the whole directory python build.py wheels DIR writes)`, url);
  return JSON.parse(resp.text);
}

// micropip itself: already importable (the page loaded it), else its wheel from here. loadPackage
// does not throw when a URL fails, so the import decides.
async function loadMicropip(pyodide, url) {
  if (importable(pyodide, "micropip")) return;
  const errors = [];
  await pyodide.loadPackage(url, { messageCallback: () => {}, errorCallback: (m) => errors.push(m) });
  if (importable(pyodide, "micropip")) return;
  const resp = await reach(url, "HEAD");
  const why = resp.why || `could not be loaded (${errors.join("; ") || "no reason given"})`;
  throw new InstallError(`micropip could not be loaded: ${url} ${why}`, url);
}

function importable(pyodide, name) {
  return pyodide.runPython(`import importlib.util; importlib.util.find_spec(${JSON.stringify(name)}) is not None`);
}

function importEach(pyodide, wheels) {
  for (const w of wheels) {
    for (const name of w.imports) pyodide.runPython(`import ${name}`);
  }
}

// The first URL of the install that does not answer 200: each project's page in the index
// (pysse's first: the one the requirement names), then each file it links to (the wheel and its
// .metadata). null if every one answers.
async function firstFailure(base, wheels) {
  const first = (w) => (w.project === "pysse" ? 0 : 1);
  for (const w of [...wheels].sort((a, b) => first(a) - first(b))) {
    const page = `${base}/${w.project}/`;
    const resp = await reach(page, "GET");
    if (resp.why) return { url: page, why: resp.why };
    for (const tag of resp.text.match(/<a\s[^>]*>/g) || []) {
      const href = /href="([^"#]*)/.exec(tag);
      if (!href) continue;
      const file = new URL(href[1].replaceAll("&amp;", "&"), page).href;
      const files = /data-(core|dist-info)-metadata=/.test(tag) ? [file, `${file}.metadata`] : [file];
      for (const url of files) {
        const r = await reach(url, "HEAD");
        if (r.why) return { url, why: r.why };
      }
    }
  }
  return null;
}

// {text} when `url` answers 2xx, else {why}: "answered HTTP 404 Not Found", "could not be fetched (...)".
async function reach(url, method) {
  try {
    const resp = await fetch(url, { method, cache: "no-store" });
    if (!resp.ok) return { why: `answered HTTP ${resp.status} ${resp.statusText}`.trimEnd() };
    return { text: method === "GET" ? await resp.text() : "" };
  } catch (e) {
    return { why: `could not be fetched (${e.name}: ${e.message})` };
  }
}

function lastLine(e) {
  const lines = String(e && e.message ? e.message : e).trim().split("\n");
  return lines[lines.length - 1].trim();
}
