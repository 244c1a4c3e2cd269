// A module Web Worker that runs pysse: Pyodide and the wheels load here, and worker.py streams
// each answer with stream_chat(..., on_update=poster(answer)), which posts every rendered
// update to the page as {type: "pysse-update", answer, update}.
import { loadPyodide } from "../pyodide/314.0.7/pyodide.mjs";
import { installPysse } from "../pysse/install.js";

try {
  const pyodide = await loadPyodide();
  await installPysse(pyodide);
  const source = await fetch(new URL("./worker.py", import.meta.url));
  await pyodide.runPythonAsync(await source.text());
  const onMessage = pyodide.globals.get("on_message");
  self.onmessage = (e) => onMessage(e.data);
  self.postMessage({ type: "ready" });
} catch (e) {
  self.postMessage({ type: "error", message: e.message });
}
