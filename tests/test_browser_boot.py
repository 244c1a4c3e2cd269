"""web/app.js + web/boot.js in headless Chromium: the page boots from the build's memory
snapshot, falls back to a plain start whenever the snapshot cannot be used (missing, corrupt,
from another build), boots from a site built without a snapshot or without Node, queues what
is typed before Python is ready, and shows progress that never goes backwards.

Timing is the bench's business (``python build.py bench --only browser``); these tests check
which path was taken and that the page works on it."""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from buildtools.snapshot_prepare import SKIP
from conftest import READY_MS, Page
from pysse.server.app import create_app
from pysse.server.demo import RICH_ANSWER
from support import LiveServer

pytestmark = pytest.mark.browser

MODULES = "() => pysse.py('import sys; sorted(sys.modules)')"
FROM_BUNDLES = """() => pysse.py(`import sys
sorted(n for n, m in list(sys.modules.items())
       if str(getattr(m, "__file__", "") or "").startswith("/lib/lazy/"))`)"""


def manifest(site: Path) -> dict[str, Any]:
    html = (site / "index.html").read_text()
    m = re.search(r'<script type="application/json" id="pysse-boot">(.*?)</script>', html)
    assert m, "no boot manifest in index.html"
    return dict(json.loads(m.group(1).replace("<\\/", "</")))


def boot_info(page: Any) -> dict[str, Any]:
    return dict(page.evaluate("() => window.pysseBoot"))


def wheel_modules(site: Path) -> set[str]:
    """Every module of pysse's browser wheel, by name, but those the snapshot leaves out on
    purpose (``SKIP``: command lines, and deprecated paths that warn when imported)."""
    (url,) = [u for u in json.loads((site / "site.json").read_text())["wheels"] if "/pysse-" in u]
    names = set()
    with zipfile.ZipFile(site / url) as whl:
        for n in whl.namelist():
            if n.endswith(".py"):
                names.add(n[:-3].replace("/", ".").removesuffix(".__init__"))
    return {n for n in names if not n.startswith(SKIP)}


def test_boots_from_the_snapshot_with_every_page_module_in_it(make_page: Any, site: Path) -> None:
    p = make_page(boot="snapshot")
    page = p.open()
    assert boot_info(page) == {"path": "snapshot", "snapshotError": None}
    assert page.inner_text("[data-role=boot-text]") == "Ready"
    page.wait_for_selector("body[data-warm='1']")  # the idle warm-up's steps done
    modules = set(page.evaluate(MODULES))
    assert wheel_modules(site) - modules == set()  # derived, not a hand-kept list
    assert {"markdown_it", "pygments.formatters.html"} <= modules
    # A rich answer (headings, a table, a highlighted fence) imports nothing more than the
    # lazy bundles it needs (its fence's lexer: pysse.render.lazy), never all lexers.
    p.send("hello")
    msg = p.wait_done()
    assert msg.get_attribute("data-text") == RICH_ANSWER
    assert "hl-" in msg.inner_html()
    new = set(page.evaluate(MODULES)) - modules
    assert new <= set(page.evaluate(FROM_BUNDLES)), new
    assert len([m for m in new if m.startswith("pygments.lexers.")]) < 10
    # A lexer the snapshot does not hold comes from its own bundle, when an answer needs it.
    p.send("/demo echo ```haskell\nmain = print 1\n```")
    assert "hl-" in p.wait_done().inner_html()
    assert "pygments.lexers.haskell" in page.evaluate(FROM_BUNDLES)


def test_every_visitor_gets_its_own_random_state(make_page: Any) -> None:
    draws = []
    for _ in range(2):
        page = make_page(boot="snapshot").open()
        assert boot_info(page)["path"] == "snapshot"
        draws.append(page.evaluate("() => pysse.py('import random; random.random()')"))
    assert draws[0] != draws[1]


FROZEN = "() => pysse.py('import gc; gc.get_freeze_count()')"


def test_what_boot_imported_is_out_of_the_collectors_sight(
    make_page: Any, browser: Any, other_sites: dict[str, LiveServer]
) -> None:
    # Else every full collection walks the whole imported world again: a long task while an
    # answer streams (the bench's CPU-4x rows).
    page = make_page(boot="snapshot").open()
    assert boot_info(page)["path"] == "snapshot"
    assert page.evaluate(FROZEN) > 10_000
    p = Page(browser, other_sites["plain"].url)
    try:
        page = p.open()
        assert boot_info(page)["path"] == "plain"
        assert page.evaluate(FROZEN) > 10_000
    finally:
        p.close()


@pytest.mark.parametrize("locale", ["de-DE", "ja-JP"])
def test_the_snapshot_fits_any_locale(browser: Any, server: LiveServer, locale: str) -> None:
    # A fresh module's heap holds LANG (from navigator.language): the build's heap delta
    # must not depend on it.
    ctx = browser.new_context(locale=locale)
    try:
        page = ctx.new_page()
        page.goto(server.url + "/?boot=snapshot")
        page.wait_for_selector("body[data-ready='1']", timeout=READY_MS)
        assert boot_info(page) == {"path": "snapshot", "snapshotError": None}
    finally:
        ctx.close()


def other_runtime(route: Any) -> None:
    """The snapshot as another Pyodide build made it: its build id (header bytes 16-48)."""
    resp = route.fetch()
    body = bytearray(resp.body())
    body[16:48] = bytes(32)
    route.fulfill(response=resp, body=bytes(body))


def other_build(page: Any, site: Path) -> None:
    """index.html as another build would have written it: the same files, another stamp."""
    html = (site / "index.html").read_text()
    stamp = manifest(site)["snapshot"]["stamp"]
    page.route(
        lambda url: urlparse(url).path == "/",  # (whatever its query: ?boot=snapshot)
        lambda route: route.fulfill(
            body=html.replace(stamp, "0" * len(stamp)), content_type="text/html"
        ),
    )


def test_a_first_visit_starts_plain_and_a_later_one_restores_what_it_cached(
    make_page: Any,
) -> None:
    """By default a visit restores the snapshot only when it is in the page's cache (the
    service worker fetched it, idle, after an earlier visit: ~3.5 MB a first visit need not
    wait for); else it starts plain."""
    p = make_page(service_workers="allow")
    page = p.open()
    assert boot_info(page) == {"path": "plain", "snapshotError": None}
    got = page.evaluate(CACHED_SNAPSHOT)
    assert got, "the service worker never cached the snapshot"
    page = p.reload()
    assert boot_info(page) == {"path": "snapshot", "snapshotError": None}
    p.send("/demo echo restored")
    assert p.wait_done().get_attribute("data-text") == "restored"


CACHED_SNAPSHOT = """async () => {
  const reg = await navigator.serviceWorker.ready;
  for (let i = 0; i < 600; i++) {  // its install caches the runtime: up to a minute
    const cache = await caches.open('pysse-runtime');
    if ((await cache.keys()).some((r) => r.url.endsWith('/app.snap'))) return true;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  return false;
}"""


@pytest.mark.parametrize(
    ("case", "why"),
    [
        ("missing", "could not load"),
        ("other runtime", "Snapshot build id mismatch"),
        ("other build", "belongs to another build"),
    ],
)
def test_falls_back_to_a_plain_start(make_page: Any, site: Path, case: str, why: str) -> None:
    p = make_page(boot="snapshot")
    page = p.page
    warnings: list[str] = []
    page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    if case == "missing":
        page.route("**/app.snap", lambda route: route.fulfill(status=404, body="gone"))
    elif case == "other runtime":
        page.route("**/app.snap", other_runtime)
    else:
        other_build(page, site)
    p.open()
    info = boot_info(page)
    assert info["path"] == "plain" and why in info["snapshotError"], info
    assert any("starting Python without the snapshot" in w for w in warnings), warnings
    p.send("/demo echo still works")
    assert p.wait_done().get_attribute("data-text") == "still works"


def test_message_sent_before_python_is_ready_goes_out(make_page: Any) -> None:
    p = make_page()
    page = p.page
    held: list[Any] = []
    page.route("**/boot/**", lambda route: held.append(route))  # hold Python back
    page.goto(p.base + "/", wait_until="commit")
    page.wait_for_selector("body[data-booting='1']")
    p.send("/demo echo early bird")
    page.wait_for_selector(".msg.user")
    assert page.get_attribute("body", "data-ready") is None  # the UI works before Python
    assert "Your message goes out when it is ready." in page.inner_text("[data-role=boot-text]")
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    page.unroute("**/boot/**")  # continues the held requests (and lets later ones through)
    page.wait_for_selector("body[data-ready='1']", timeout=READY_MS)
    msg = p.wait_done()
    assert msg.get_attribute("data-text") == "early bird"
    assert page.locator(".msg.user").count() == 1
    assert page.inner_text("[data-role=boot-text]") == "Ready"


RECORD_PROGRESS = """window.__progress = [];
document.addEventListener('DOMContentLoaded', () => {
  const bar = document.querySelector('[data-role=boot-progress]');
  const text = document.querySelector('[data-role=boot-text]');
  const note = () => window.__progress.push([bar.value, text.textContent]);
  new MutationObserver(note).observe(bar, { attributes: true });
  new MutationObserver(note).observe(text, { childList: true, characterData: true, subtree: true });
});"""


def test_progress_counts_bytes_then_phases_and_never_goes_back(make_page: Any) -> None:
    p = make_page()
    page = p.page
    page.add_init_script(RECORD_PROGRESS)
    cdp = p.ctx.new_cdp_session(page.raw)
    cdp.send("Network.enable")  # a slow link: ~50 Mbit/s
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 20, "downloadThroughput": 6e6, "uploadThroughput": 1e6},
    )
    p.open()
    steps = page.evaluate("() => window.__progress")
    values = [v for v, _ in steps]
    assert values == sorted(values) and values[-1] == 100, steps
    downloading = {v for v, label in steps if label == "Loading Python…"}
    assert len([v for v in downloading if 5 < v < 80]) >= 3, steps  # bytes, as they came
    labels = [label for _, label in steps]
    order = ["Loading Python…", "Starting Python…", "Starting the app…", "Ready"]
    seen = [label for label in dict.fromkeys(labels)]
    assert seen == order, seen


@pytest.fixture(scope="module")
def other_sites(
    site: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, LiveServer]]:
    """Sites built without a snapshot, and as a machine without Node would build them."""
    import shutil

    import build

    root = tmp_path_factory.mktemp("sites")
    plain = build.build_site(root / "plain", snapshot=False)
    which = shutil.which
    try:
        shutil.which = lambda name, *a, **k: None if name == "node" else which(name, *a, **k)  # type: ignore[assignment]
        sources = build.build_site(root / "sources")
    finally:
        shutil.which = which  # type: ignore[assignment]
    servers = {"plain": LiveServer(create_app(plain)), "sources": LiveServer(create_app(sources))}
    for s in servers.values():
        s.__enter__()
    yield servers
    for s in servers.values():
        s.__exit__()
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("kind", ["plain", "sources"])
def test_a_site_without_a_snapshot_boots(
    browser: Any, other_sites: dict[str, LiveServer], kind: str
) -> None:
    p = Page(browser, other_sites[kind].url)
    try:
        page = p.open()
        assert boot_info(page) == {"path": "plain", "snapshotError": None}
        p.send("hello")
        msg = p.wait_done()
        assert msg.get_attribute("data-text") == RICH_ANSWER and "hl-" in msg.inner_html()
        assert p.errors == []
    finally:
        p.close()
