// Apply the saved theme (Settings → theme: system, light or dark) before the first paint, so a
// dark-mode reader never sees a flash of the other theme while Python starts. pysse.browser
// owns the setting and keeps <html data-theme> in step afterwards.
try {
  const theme = JSON.parse(localStorage.getItem("pysse.settings.v1") || "{}").theme;
  if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
} catch (e) { /* storage disabled or unreadable: follow the system */ }
