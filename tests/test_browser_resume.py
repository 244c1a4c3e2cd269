"""Resumable answers in Chromium (issue #12): the page on one origin, the real relay on
another behind a TCP proxy that the test cuts like a pulled cable, the testing kit's
ScriptServer as the provider. A cut mid-answer shows "Reconnecting…" and completes with the
identical text from one upstream request; Stop after a resume cancels the upstream; a reload
mid-answer reattaches on its own (the chat store keeps the answer id and the bytes) and
completes; a reload after the relay forgot the answer says it expired and keeps the text. And ``/demo cut`` on the demo."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import LiveServer, Page, shown_text, wait_until
from pysse.server.app import create_app
from pysse.server.demo import RICH_ANSWER
from pysse.server.relay import RelayConfig, create_relay_app
from pysse.server.resume import Answers
from pysse.server.store import MemoryStore
from pysse.testing import CutProxy, Script, ScriptServer

pytestmark = pytest.mark.browser

TEXT = "Resuming is exact: é 東京 🙂, every byte once. " * 12
PACED = Script.answer(TEXT).chunked("random", sizes=(5, 40), seed=1).paced(0.02)
QUICK = Script.answer(TEXT).chunked("random", sizes=(5, 40), seed=1).paced(0.01)
SILENT_AFTER = Script.answer(TEXT).chunked("random", sizes=(5, 40), seed=1).paced(0.03)


class Setup:
    def __init__(
        self,
        browser: Any,
        site: Path,
        up: ScriptServer,
        store: MemoryStore | None = None,
        **relay_kw: Any,
    ) -> None:
        self.up = up
        self.page_server = LiveServer(create_app(site)).__enter__()
        cfg = RelayConfig(upstream=up.url + "/v1", allow_origins=[self.page_server.url], **relay_kw)
        answers = Answers(store, cfg.unwatched_timeout) if store is not None else None
        self.relay = LiveServer(create_relay_app(cfg, answers=answers)).__enter__()
        self.proxy = CutProxy(self.relay.port)
        settings = {"relay": self.proxy.url + "/relay", "format": "openai-chat", "headers": ""}
        self.p = Page(browser, self.page_server.url, settings=settings)
        self.page = self.p.open()

    def received(self) -> int:
        return len(str(self.page.evaluate("pysse.rawHex(-1)"))) // 2

    def wait_received(self, n: int) -> None:
        wait_until(self.page, "async (n) => (await pysse.rawHex(-1)).length >= 2 * n", n)

    def close(self) -> None:
        self.p.close()
        self.proxy.close()
        self.relay.__exit__()
        self.page_server.__exit__()


@pytest.fixture
def setup(browser: Any, site: Path, sse_server: ScriptServer) -> Iterator[Any]:
    made: list[Setup] = []

    def make(script: Script, store: MemoryStore | None = None, **relay_kw: Any) -> Setup:
        sse_server.play(script)
        s = Setup(browser, site, sse_server, store, **relay_kw)
        made.append(s)
        return s

    yield make
    for s in made:
        errors = list(s.p.errors)
        s.close()
        assert errors == [], errors


def test_a_cut_mid_answer_reconnects_and_completes_identically(setup: Any) -> None:
    s = setup(PACED)
    s.p.send("hi")
    s.wait_received(300)
    # The cable is cut and stays out until the page shows it is reconnecting: that state
    # lasts one backoff (~250 ms) after a plain cut, which a busy page could miss.
    assert s.proxy.unplug() >= 1
    s.page.wait_for_function(
        "() => { const a = document.querySelector('[data-role=assistant]');"
        " return a.dataset.reconnecting === '1'"
        " && a.querySelector('.status').textContent.includes('Reconnecting…'); }",
        timeout=30_000,
    )
    s.proxy.plug()
    msg = s.p.wait_done()
    assert msg.get_attribute("data-state") == "completed"
    assert msg.get_attribute("data-text") == TEXT  # nothing duplicated, nothing missing
    assert bytes.fromhex(s.page.evaluate("pysse.rawHex(-1)")) == PACED.sent
    assert int(msg.get_attribute("data-resumes")) >= 1
    assert len(s.up.requests) == 1  # resumed from the relay's record, never asked again
    # The inspector's raw view shows where the answer was resumed.
    msg.query_selector("[data-role=inspect]").click()
    mark = s.page.wait_for_selector("[data-role=insp-resume]")
    assert "resumed at byte" in mark.inner_text()


def test_reconnecting_retries_until_the_relay_is_reachable_again(setup: Any) -> None:
    s = setup(PACED)
    s.p.send("hi")
    s.wait_received(300)
    s.proxy.unplug()  # the cable stays out: every reconnect fails
    s.page.wait_for_function(
        "() => /Reconnecting… \\(try [3-9]\\)/.test("
        "document.querySelector('[data-role=assistant] .status').textContent)",
        timeout=30_000,
    )
    assert s.proxy.refused >= 2  # the failed tries reached the network
    s.proxy.plug()
    msg = s.p.wait_done()
    assert msg.get_attribute("data-state") == "completed"
    assert msg.get_attribute("data-text") == TEXT
    assert msg.get_attribute("data-resumes") == "1"  # one resume took, after the failures
    assert len(s.up.requests) == 1


def test_stop_after_a_resume_cancels_the_upstream(setup: Any) -> None:
    s = setup(SILENT_AFTER.stall(after_event=10))  # ten events, then generating for ever
    s.p.send("hi")
    s.wait_received(200)
    s.proxy.cut()
    s.page.wait_for_selector("[data-role=assistant][data-resumes='1']", timeout=30_000)
    # A cut is not Stop. (A window in which nothing may happen: a slow machine can only make
    # it miss a disconnect, never see one that did not happen.)
    assert not s.up.last_request.wait_disconnected(0.5)
    s.page.click("[data-role=stop]")
    # The upstream generates for ever: only the Stop can end it. (Was also "within 1 s of
    # the click": a speed, which a busy machine broke; the 300 ms target is a benchmark's.)
    assert s.up.last_request.wait_disconnected(30), "Stop did not cancel the upstream"
    assert s.p.wait_done().get_attribute("data-state") == "aborted"


# True once the page's IndexedDB holds the answer ``id`` (its conversation and a recording of
# at least ``n`` bytes): what a reload needs to reattach.
SAVED = """async ([id, n]) => {
  const db = await new Promise((ok, no) => {
    const r = indexedDB.open("pysse"); r.onsuccess = () => ok(r.result); r.onerror = no; });
  const all = (store) => new Promise((ok, no) => {
    const r = db.transaction(store).objectStore(store).getAll();
    r.onsuccess = () => ok(r.result); r.onerror = no; });
  try {
    const bodies = await all("bodies"), recs = await all("recordings");
    return bodies.some((b) => JSON.stringify(b).includes(id))
      && recs.some((r) => r.meta.includes(id) && r.bytes.length >= n);
  } finally { db.close(); }
}"""


def wait_saved(s: Setup, n: int) -> str:
    answer_id = s.page.get_attribute("[data-role=assistant]", "data-answer-id")
    assert answer_id
    deadline = time.monotonic() + 30
    # (polled with evaluate, which awaits the promise; wait_for_function would take the
    # promise itself as a true value)
    while not s.page.evaluate(SAVED, [answer_id, n]):
        assert time.monotonic() < deadline, "the answer in flight was never saved"
        time.sleep(0.2)
    return answer_id


def test_a_reload_mid_answer_reattaches_and_completes(setup: Any) -> None:
    s = setup(PACED)
    s.p.send("hi")
    s.wait_received(300)
    answer_id = wait_saved(s, 1)  # saved while it streams (the chat store does this)
    s.p.reload()  # the page reattaches on its own: nothing to call
    msg = s.p.wait_done()
    assert msg.get_attribute("data-answer-id") == answer_id
    assert msg.get_attribute("data-state") == "completed"
    assert msg.get_attribute("data-text") == TEXT  # every byte once, across the reload
    assert len(s.up.requests) == 1  # one generation, not a second one
    s.p.reload()  # and the finished answer is stored as finished
    assert s.p.wait_done().get_attribute("data-state") == "completed"
    # Restored: a placeholder first, its HTML put in by a later task (read at once, it could
    # be the placeholder's empty text).
    s.page.wait_for_selector("[data-role=assistant]:not([data-pending])")
    settled = shown_text(s.page.locator("[data-role=assistant] .settled"))
    assert settled.strip().startswith("Resuming")
    assert len(s.up.requests) == 1


CLEAR_RECORDINGS = """async () => {
  const db = await new Promise((ok, no) => {
    const r = indexedDB.open("pysse"); r.onsuccess = () => ok(r.result); r.onerror = no; });
  await new Promise((ok, no) => {
    const t = db.transaction("recordings", "readwrite"); t.objectStore("recordings").clear();
    t.oncomplete = ok; t.onerror = no; });
  db.close();
}"""


@pytest.mark.parametrize("bytes_kept", [True, False], ids=["bytes-kept", "bytes-lost"])
def test_a_reload_after_the_answer_expired_says_so_and_keeps_the_text(
    setup: Any, bytes_kept: bool
) -> None:
    # The relay's store runs on the test's clock, and the page is cut off from the relay
    # once it has 900 bytes: it cannot have the whole answer by the time it goes, however
    # slow it is (it had 8 s to save and leave), and the answer expires when the test says
    # (was a 1 s sleep past a 0.3 s time to live).
    now = [0.0]
    store = MemoryStore(ttl=0.3, clock=lambda: now[0])
    s = setup(QUICK, store)
    s.p.send("hi")
    s.wait_received(900)
    s.proxy.unplug()
    answer_id = wait_saved(s, 600)
    s.page.goto(s.p.base + "/style.css")  # the page is gone...
    if not bytes_kept:  # (the recording was evicted or never stored: the text still is)
        s.page.evaluate(CLEAR_RECORDINGS)
    assert s.up.last_request.wait_ended(60)  # ...the relay finished the answer unwatched...
    deadline = time.monotonic() + 30
    while (rec := store.book.get(answer_id, now[0])) is None or rec.ended_at is None:
        assert time.monotonic() < deadline, "the relay never ended the answer"
        time.sleep(0.05)
    now[0] += 1.0  # ...and forgot it
    s.proxy.plug()
    s.p.open()
    msg = s.p.wait_done()
    assert msg.get_attribute("data-state") == "truncated"
    status = msg.query_selector(".status").inner_text()
    assert "could not resume: this answer expired on the relay" in status
    msg = s.page.query_selector("[data-role=assistant]")  # (redrawn when the text was kept)
    text = msg.get_attribute("data-text")
    assert text and TEXT.startswith(text) and text != TEXT  # what it had is kept


def test_demo_cut_resumes(make_page: Any) -> None:
    p = make_page(settings={"headers": "X-Demo-Pace: 1"})
    page = p.open()
    # "Reconnecting" lasts one backoff (~250 ms): recorded as it happens, not looked for
    # (a busy page was looked at too late and the test timed out).
    page.evaluate(
        """() => { window.__reconnecting = [];
        new MutationObserver((ms) => ms.forEach((m) =>
            window.__reconnecting.push(m.target.dataset.reconnecting)))
          .observe(document.querySelector('[data-role=log]'),
            { attributes: true, subtree: true, attributeFilter: ['data-reconnecting'] }); }"""
    )
    p.send("/demo cut")
    msg = p.wait_done()
    assert "1" in page.evaluate("window.__reconnecting")
    assert msg.get_attribute("data-state") == "completed"
    assert msg.get_attribute("data-text") == RICH_ANSWER
    assert int(msg.get_attribute("data-resumes")) == 1
