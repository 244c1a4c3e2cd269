"""The service worker (web/sw.js): a repeat visit boots with no network for the runtime, the
page opens offline with its stored chats and says that sending needs the network, and a new
build is never served stale: the page says when an update is ready, and takes it on reload."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from buildtools.compress import link_or_copy
from conftest import READY_MS, Page, stored_answers, wait_stored
from pysse.server.app import create_app
from support import LiveServer

pytestmark = pytest.mark.browser

# Read afresh each time: a worker that became active while the page was loading claims it
# (clients.claim) a moment after `ready` settles, and only then is it the controller.
CONTROLLED = """async () => { await navigator.serviceWorker.ready;
  const active = () => navigator.serviceWorker.controller?.state === 'activated';
  for (let i = 0; !active() && i < 300; i++) {
    await new Promise((ok) => setTimeout(ok, 100));
  }
  return active(); }"""


@pytest.fixture
def own_site(site: Path, tmp_path: Path) -> Iterator[tuple[LiveServer, Path]]:
    """The built site under a server of its own, its sw.js a file of its own (a deploy can
    change it); everything else hard-linked where it can be (the static server follows no
    symbolic link out of its directory)."""
    root = tmp_path / "site"
    shutil.copytree(site, root, copy_function=link_or_copy)
    for item in root.glob("sw.js*"):
        data = item.read_bytes()
        item.unlink()
        item.write_bytes(data)
    with LiveServer(create_app(root)) as live:
        yield live, root


def visit(browser: Any, base: str) -> Page:
    p = Page(browser, base, service_workers="allow")
    p.open()
    return p


# The visit's service worker has finished installing and activating (its runtime cached).
ACTIVATED = """async () => { const reg = await navigator.serviceWorker.ready;
  for (let i = 0; reg.active?.state !== 'activated' && i < 300; i++) {
    await new Promise((ok) => setTimeout(ok, 100));
  }
  return reg.active?.state === 'activated'; }"""


def controlled(p: Page) -> None:
    """The next visit, controlled by the service worker the visit before installed. Once it
    is active, a navigation (not Playwright's reload, which bypasses service workers: a page
    reloaded after the worker had claimed its clients stayed uncontrolled, a race that failed
    a clean-clone run) is its from the start."""
    assert p.page.evaluate(ACTIVATED)
    p.page.goto(p.url)
    p.page.wait_for_selector("body[data-ready='1']", timeout=READY_MS)
    assert p.page.evaluate(CONTROLLED)


def test_a_repeat_visit_needs_no_network_and_the_page_opens_offline(
    browser: Any, own_site: tuple[LiveServer, Path]
) -> None:
    live, _ = own_site
    p = visit(browser, live.url)
    try:
        p.send("/demo echo kept for later")
        p.wait_done()
        wait_stored(p.page, lambda s: len(stored_answers(s)) == 1)
        controlled(p)
        runtime: list[tuple[str, bool]] = []
        p.page.on(
            "response",
            lambda r: (
                runtime.append((r.url, r.from_service_worker))
                if "/boot/" in r.url or "/pyodide/" in r.url
                else None
            ),
        )
        live.__exit__(None, None, None)  # the site (and its relay) out of reach: no network
        page = p.page
        page.goto(p.url)  # (a visit: Playwright's reload bypasses the service worker)
        page.wait_for_selector("body[data-ready='1']", timeout=READY_MS)
        assert runtime and all(from_sw for _, from_sw in runtime), runtime  # from the cache
        p.ctx.set_offline(True)  # (the browser says so: the page does too)
        page.wait_for_selector("[data-role=offline]:not([hidden])")
        assert "sending needs the network" in page.inner_text("[data-role=offline]")
        page.click("[data-role=chat-open] >> text=/demo echo kept for later")
        page.wait_for_selector("[data-role=assistant][data-text='kept for later']")
        p.send("/demo echo while offline")
        msg = p.wait_done()
        assert msg.get_attribute("data-state") == "error"  # said, not lost
        assert "relay" in msg.query_selector(".status").inner_text().lower()
        p.ctx.set_offline(False)
        page.wait_for_selector("[data-role=offline]", state="hidden")
    finally:
        p.close()


def test_a_new_build_is_offered_then_taken_on_reload(
    browser: Any, own_site: tuple[LiveServer, Path]
) -> None:
    live, root = own_site
    p = visit(browser, live.url)
    try:
        controlled(p)
        old = p.page.evaluate("() => navigator.serviceWorker.controller.scriptURL")
        sw = root / "sw.js"
        text = sw.read_text()
        build = json.loads(text.split("const BUILD = ", 1)[1].split(";", 1)[0])
        sw.write_text(text.replace(json.dumps(build), json.dumps("next-" + build), 1))
        for name in ("sw.js.br", "sw.js.gz"):
            (root / name).unlink(missing_ok=True)  # (the server would send the old one)
        p.page.evaluate("() => navigator.serviceWorker.ready.then((r) => r.update())")
        p.page.wait_for_selector("[data-role=update]:not([hidden])", timeout=60_000)
        assert "A new version of this page is ready" in p.page.inner_text("[data-role=update]")
        with p.page.expect_navigation():
            p.page.click("[data-role=update-reload]")
        p.page.wait_for_selector("body[data-ready='1']", timeout=READY_MS)
        assert p.page.evaluate("() => navigator.serviceWorker.controller.scriptURL") == old
        got = p.page.evaluate(
            "() => caches.keys().then((k) => k.filter((n) => n.startsWith('pysse-shell-')))"
        )
        assert got == ["pysse-shell-next-" + build]  # the old build's files went
    finally:
        p.close()


KEPT = """async (paths) => {
  for (const p of paths) await (await fetch(p)).arrayBuffer();
  const cache = await caches.open('pysse-runtime');
  return Promise.all(paths.map(async (p) => !!(await cache.match(new URL(p, location.href).href))));
}"""


def test_the_service_worker_keeps_only_the_bytes_this_build_wrote(
    browser: Any, own_site: tuple[LiveServer, Path]
) -> None:
    """A content-addressed file is kept for good, so only its own bytes are: one served with
    other bytes (a proxy's page, a truncated body: here a byte more) is served once and not
    kept; its untouched neighbour is. (Before: any 200 under boot/ and pyodide/ was kept.)"""
    live, root = own_site
    bad, good = sorted((root / "boot").glob("*/lexer-*.zip"))[:2]
    for item in root.glob(f"{bad.relative_to(root).as_posix()}*"):
        data = item.read_bytes()
        item.unlink()  # (a hard link: the built site's file stays as it is)
        if item.suffix == ".zip":  # (no compressed copy left to serve instead)
            item.write_bytes(data + b"x")
    p = visit(browser, live.url)
    try:
        controlled(p)
        paths = [f.relative_to(root).as_posix() for f in (bad, good)]
        assert p.page.evaluate(KEPT, paths) == [False, True]
    finally:
        p.close()


SHORTEN = """async () => {
  const snap = JSON.parse(document.getElementById('pysse-boot').textContent).snapshot;
  const url = new URL(snap.stdlib.url, location.href).href;
  const cache = await caches.open('pysse-runtime');
  for (let i = 0; !(await cache.match(url)) && i < 300; i++) await new Promise((ok) => setTimeout(ok, 100));
  await cache.put(url, new Response('not the stdlib'));
  return url;
}"""


def test_the_boot_drops_a_cached_file_of_the_wrong_size(
    browser: Any, own_site: tuple[LiveServer, Path]
) -> None:
    """A snapshot file in the service worker's cache with another size than the build wrote
    is dropped, not booted from: the page starts plain and works. (Before: it was taken as
    the snapshot being here, failed as it loaded, and stayed in the cache.)"""
    live, _ = own_site
    p = visit(browser, live.url)
    try:
        assert p.page.evaluate(ACTIVATED)
        url = p.page.evaluate(SHORTEN)
        p.page.goto(p.url)
        p.page.wait_for_selector("body[data-ready='1']", timeout=READY_MS)
        assert p.page.evaluate("() => pysse.boot.path") == "plain"
        assert not p.page.evaluate("(u) => caches.match(u).then((r) => !!r)", url)
        p.send("/demo echo booted plain")
        assert p.wait_done().get_attribute("data-text") == "booted plain"
    finally:
        p.close()
