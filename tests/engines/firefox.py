"""Firefox ESR over WebDriver BiDi: puppeteer-core in one long-lived Node process
(``firefox_driver.cjs``), spoken to in JSON lines. Playwright's own Firefox build cannot be
had here, and Debian's Firefox speaks BiDi, which puppeteer-core drives."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any, Literal

from . import Driver, EngineName, EnginePage, js_args

__all__ = ["FirefoxDriver"]

HERE = Path(__file__).resolve().parent


class FirefoxPage(EnginePage):
    engine: EngineName = "firefox"

    def __init__(
        self, driver: FirefoxDriver, width: int, height: int, twin_of: int | None = None
    ) -> None:
        self.driver = driver
        self.size = (width, height)
        if twin_of is None:
            self.id = driver.call("newPage", width=width, height=height)
        else:
            self.id = driver.call("twinPage", id=twin_of, width=width, height=height)

    def twin(self) -> EnginePage:
        return FirefoxPage(self.driver, *self.size, twin_of=self.id)

    def goto(self, url: str) -> None:
        self.driver.call("goto", id=self.id, url=url)

    def evaluate(self, fn: str, *args: Any) -> Any:
        return self.driver.call("evaluate", id=self.id, expression=f"({fn})({js_args(args)})")

    def type(self, selector: str, text: str) -> None:
        self.driver.call("type", id=self.id, selector=selector, text=text)

    def press(self, selector: str, key: Literal["Enter", "Escape", "Tab"]) -> None:
        self.driver.call("press", id=self.id, selector=selector, key=key)

    def click(self, selector: str) -> None:
        self.driver.call("click", id=self.id, selector=selector)

    def screenshot(self, path: str) -> None:
        self.driver.call("screenshot", id=self.id, path=path)

    def errors(self) -> list[str]:
        return [*self.driver.call("errors", id=self.id), *super().errors()]

    def close(self) -> None:
        self.driver.call("closePage", id=self.id)


class FirefoxDriver(Driver):
    name: EngineName = "firefox"

    def __init__(self, node: str, puppeteer_core: str, firefox: str) -> None:
        # the driver's stderr, kept for as long as the driver runs (read when it fails)
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115
            prefix="pysse-firefox-", suffix=".log", delete=False
        )
        self.proc = subprocess.Popen(
            [node, str(HERE / "firefox_driver.cjs")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env={**os.environ, "PYSSE_PUPPETEER_CORE": puppeteer_core},
            text=True,
        )
        self.seq = 0
        self.lock = threading.Lock()
        try:
            self.version = str(self.call("launch", executablePath=firefox))
        except Exception:
            self.close()
            raise

    def call(self, op: str, **args: Any) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        with self.lock:
            self.seq += 1
            self.proc.stdin.write(json.dumps({"seq": self.seq, "op": op, **args}) + "\n")
            self.proc.stdin.flush()
            while True:
                line = self.proc.stdout.readline()
                if not line:
                    raise RuntimeError(f"the Firefox driver exited:\n{self.stderr()}")
                reply = json.loads(line)
                if reply.get("seq") == self.seq:
                    break
        if "error" in reply:
            raise RuntimeError(f"firefox {op}: {reply['error']}")
        return reply.get("result")

    def stderr(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text(errors="replace")[-4000:]

    def new_page(self, width: int = 1000, height: int = 700) -> EnginePage:
        return FirefoxPage(self, width, height)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.call("quit")
                self.proc.wait(20)
            except Exception:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()
        Path(self.log.name).unlink(missing_ok=True)
