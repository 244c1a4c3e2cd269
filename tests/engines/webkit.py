"""WebKitGTK (Safari's engine) through Selenium and WebKitWebDriver, in a virtual X display.

The MiniBrowser runs with ``--automation`` and without ``--headless`` (it hangs), in an Xvfb
display this driver starts itself. Classic WebDriver only: one session serves every page
(a window each), and a page's storage is cleared when it is made (``new_page``)."""

from __future__ import annotations

import os
import subprocess
from typing import Any, Literal

from . import Driver, EngineName, EnginePage, js_args

__all__ = ["WebKitDriver"]

# execute_async_script's callback receives a tagged result, so that a rejection is an error
# on this side (not a value) and undefined comes back as null.
ASYNC = """const done = arguments[arguments.length - 1];
Promise.resolve().then(() => (%s)(%s)).then(
  (v) => done({ ok: v === undefined ? null : v }),
  (e) => done({ err: String((e && e.stack) || e) }));"""
# Each delete is waited for (up to 10 s: WebKit can keep one pending, neither done nor
# blocked, while a closed window's connection lingers; the page's own open then waits behind
# it). Pages are closed by ending their document first (``close``), so no worker of an
# earlier test writes into the next test's store.
CLEAR_STORAGE = """async () => {
  localStorage.clear(); sessionStorage.clear();
  const gone = (name) => new Promise((resolve) => {
    const req = indexedDB.deleteDatabase(name);
    req.onsuccess = req.onerror = () => resolve();
    setTimeout(resolve, 10000);
  });
  for (const db of (await indexedDB.databases?.()) || []) await gone(db.name);
}"""


class WebKitPage(EnginePage):
    engine: EngineName = "webkit"

    def __init__(self, driver: WebKitDriver, width: int, height: int) -> None:
        self.driver = driver
        wd = driver.wd
        if driver.pages:
            wd.switch_to.new_window("window")
        self.handle = wd.current_window_handle
        driver.pages.append(self)
        wd.set_window_size(width, height)
        self.fresh = True
        self.size = (width, height)

    def twin(self) -> EnginePage:
        """Another window of the session: the same storage (never cleared for it)."""
        page = WebKitPage(self.driver, *self.size)
        page.fresh = False
        return page

    def _wd(self) -> Any:
        wd = self.driver.wd
        if wd.current_window_handle != self.handle:
            wd.switch_to.window(self.handle)
        return wd

    def goto(self, url: str) -> None:
        wd = self._wd()
        if self.fresh:  # a new page starts with empty storage for the origin
            self.fresh = False
            origin = url.split("/", 3)[:3]
            wd.get("/".join(origin) + "/__engine/blank")
            self.evaluate(CLEAR_STORAGE)
        wd.get(url)

    def evaluate(self, fn: str, *args: Any) -> Any:
        reply = self._wd().execute_async_script(ASYNC % (fn, js_args(args)))
        if "err" in reply:
            raise RuntimeError(f"webkit evaluate: {reply['err']}")
        return reply["ok"]

    def _find(self, selector: str) -> Any:
        from selenium.webdriver.common.by import By

        return self._wd().find_element(By.CSS_SELECTOR, selector)

    def type(self, selector: str, text: str) -> None:
        self._find(selector).send_keys(text)

    def press(self, selector: str, key: Literal["Enter", "Escape", "Tab"]) -> None:
        from selenium.webdriver.common.keys import Keys

        self._find(selector).send_keys(
            {"Enter": Keys.ENTER, "Escape": Keys.ESCAPE, "Tab": Keys.TAB}[key]
        )

    def click(self, selector: str) -> None:
        """A click on what the selector finds when the click lands: a list the page drew
        again between the find and the click (another tab's write) is found again, as
        Playwright's locators do."""
        from selenium.common.exceptions import StaleElementReferenceException

        for _ in range(4):
            try:
                self._find(selector).click()
                return
            except StaleElementReferenceException:
                continue
        self._find(selector).click()

    def screenshot(self, path: str) -> None:
        self._wd().save_screenshot(path)

    def close(self) -> None:
        wd = self._wd()
        self.driver.pages.remove(self)
        # The document ends first, its workers with it: a window closed with an answer
        # streaming could otherwise go on writing to the origin's store for a while.
        wd.get("about:blank")
        if self.driver.pages:
            wd.close()
            wd.switch_to.window(self.driver.pages[-1].handle)
        # (else the session's last window stays, on that blank page)


class WebKitDriver(Driver):
    name: EngineName = "webkit"

    def __init__(self, minibrowser: str, webdriver: str, xvfb: str) -> None:
        from selenium import webdriver as selenium
        from selenium.webdriver.webkitgtk.options import Options
        from selenium.webdriver.webkitgtk.service import Service

        self.pages: list[WebKitPage] = []
        self.xvfb, display = start_xvfb(xvfb)
        try:
            opts = Options()
            opts.binary_location = minibrowser
            opts.add_argument("--automation")  # never --headless: the MiniBrowser hangs
            env = {**os.environ, "DISPLAY": display}
            service = Service(executable_path=webdriver, env=env)
            self.wd = selenium.WebKitGTK(options=opts, service=service)
        except Exception:
            self.xvfb.kill()
            raise
        self.wd.set_script_timeout(300)
        self.wd.set_page_load_timeout(120)
        self.version = str(self.wd.capabilities.get("browserVersion", ""))

    def new_page(self, width: int = 1000, height: int = 700) -> EnginePage:
        return WebKitPage(self, width, height)

    def close(self) -> None:
        try:
            self.wd.quit()
        finally:
            self.xvfb.terminate()
            self.xvfb.wait(10)


def start_xvfb(xvfb: str) -> tuple[subprocess.Popen[bytes], str]:
    """An X server of our own on a free display number (Xvfb picks it: ``-displayfd``)."""
    read, write = os.pipe()
    proc = subprocess.Popen(
        [xvfb, "-displayfd", str(write), "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    with os.fdopen(read) as f:
        number = f.readline().strip()
    if not number:
        proc.kill()
        raise RuntimeError("Xvfb did not start (apt-get install xvfb)")
    return proc, f":{number}"
