// Apply the saved theme (Settings → theme: system, light or dark) before the first paint, so a
// dark-mode reader never sees a flash of the other theme while Python starts. pysse.browser
// owns the setting and keeps <html data-theme> in step afterwards.
try {
  const theme = JSON.parse(localStorage.getItem("pysse.settings.v1") || "{}").theme;
  if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
} catch (e) { /* storage disabled or unreadable: follow the system */ }

// Right-to-left readers (issue #42): the page's chrome mirrors when the reader's language is
// written right to left. Set before the first paint, so the layout never flips after it. Each
// answer block and message still takes its direction from its own text (dir="auto"); the
// page's own words stay English (lang="en").
try {
  const lang = (navigator.language || "").toLowerCase().split("-")[0];
  if (["ar", "he", "iw", "fa", "ur", "ps", "sd", "ug", "yi", "ckb", "dv"].includes(lang)) {
    document.documentElement.dir = "rtl";
  }
} catch (e) { /* no navigator.language: left to right */ }
