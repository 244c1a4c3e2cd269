"""render/frames.py: FrameScheduler and ScrollFollower (pure logic)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from pysse.render.frames import MAX_SPAN, FrameLoop, FrameScheduler, ScrollFollower

ROOT = Path(__file__).resolve().parents[1]


class FakeFrames:
    def __init__(self) -> None:
        self.pending = 0
        self.renders = 0
        self.hidden = False

    def sched(self) -> FrameScheduler:
        return FrameScheduler(self.render, self.request, lambda: self.hidden)

    def render(self) -> None:
        self.renders += 1

    def request(self) -> None:
        self.pending += 1


def test_many_deltas_one_render_per_frame() -> None:
    f = FakeFrames()
    s = f.sched()
    for _ in range(50):
        s.request()
    assert f.pending == 1 and f.renders == 0
    s.on_frame()
    assert f.renders == 1
    s.on_frame()  # a frame with nothing new renders nothing
    assert f.renders == 1
    s.request()
    assert f.pending == 2


def test_flush_renders_synchronously_and_closes() -> None:
    f = FakeFrames()
    s = f.sched()
    s.request()
    s.flush()
    assert f.renders == 1 and s.closed
    s.request()
    s.on_frame()
    assert f.renders == 1  # nothing after the end


def test_hidden_tab_requests_no_frames_and_renders_once_on_return() -> None:
    f = FakeFrames()
    f.hidden = True
    s = f.sched()
    for _ in range(1000):
        s.request()
    assert f.pending == 0 and f.renders == 0
    f.hidden = False
    s.on_visible()
    assert f.renders == 1
    s.on_visible()
    assert f.renders == 1


def test_scroll_follower_releases_on_user_scroll_and_rearms_at_bottom() -> None:
    sf = ScrollFollower(threshold=8)
    # Following: after a render it scrolls to the bottom, and its own scroll is not the user's.
    assert sf.target_after_render(height=2000, client=500) == 1500
    sf.on_scroll(top=1500, height=2000, client=500)
    assert sf.following
    # Content grows and the browser's scroll event comes before the re-pin (issue #41): the
    # view is off the bottom, but the reader did nothing.
    sf.on_scroll(top=1546, height=2214, client=500)
    assert sf.following
    assert sf.target_after_render(height=2400, client=500) == 1900
    # The user drags the scrollbar up: released, and renders do not move the view.
    sf.hold(True)
    sf.on_scroll(top=1200, height=2400, client=500)
    sf.hold(False)
    assert not sf.following
    assert sf.target_after_render(height=2600, client=500) is None
    assert sf.show_jump
    # Back to the bottom by hand: re-armed.
    sf.on_scroll(top=2096, height=2600, client=500)
    assert sf.following and not sf.show_jump


def test_wheel_up_releases_before_the_scroll_event() -> None:
    sf = ScrollFollower()
    sf.target_after_render(1000, 500)
    sf.on_user_intent_up()
    assert sf.target_after_render(1200, 500) is None
    assert sf.jump(1200, 500) == 700 and sf.following


def test_downward_gesture_rearms_even_though_the_text_grew_meanwhile() -> None:
    sf = ScrollFollower(threshold=8)
    sf.on_user_intent_up()  # the user is reading higher up
    sf.on_scroll(top=100, height=3000, client=500)
    assert not sf.following
    sf.on_user_intent_down(height=3000)  # scrolls down to where the bottom was (2500)...
    sf.on_scroll(top=2500, height=3300, client=500)  # ...while 300 px of text arrived
    assert sf.following
    sf.hold(True)
    sf.on_scroll(top=1000, height=3300, client=500)  # half-way down is not the bottom
    assert not sf.following


def test_a_late_wheel_event_measures_growth_from_its_own_time_stamp() -> None:
    sf = ScrollFollower(threshold=8)
    sf.on_user_intent_up()
    for when, height in ((0, 3000), (16, 3000), (33, 3100), (50, 3250)):
        sf.seen(height, when)
    # The wheel was turned at t=10 (the browser scrolled to 2500, the bottom it had drawn);
    # its event arrives at t=50, after 250 px more text.
    sf.on_user_intent_down(3250, since=10)
    sf.on_scroll(top=2500, height=3250, client=500)
    assert sf.following
    # Heard of without a time stamp, the same gesture is measured from when it arrived.
    late = ScrollFollower(threshold=8)
    late.on_user_intent_up()
    late.on_user_intent_down(3250)
    late.on_scroll(top=2500, height=3250, client=500)
    assert not late.following


def test_the_heights_are_kept_for_a_second_only() -> None:
    sf = ScrollFollower()
    for when in range(0, 5000, 16):
        sf.seen(1000 + when, when)
    assert len(sf._heights) <= 1000 // 16 + 3
    # a gesture long after: the least of what was seen since (and the one just before)
    assert sf.height_since(4900, 6000) == 1000 + 4848  # seen at 4848, before 4900 - 50


# One table of steps for both followers: (Python method, JS method, arguments, following
# after it). After each step both must agree on following, show_jump and what it returned.
STEPS: list[tuple[str, str, list[float | bool], bool]] = [
    ("target_after_render", "target", [2000, 500], True),
    ("on_scroll", "onScroll", [1500, 2000, 500], True),  # its own scroll
    ("on_scroll", "onScroll", [1454, 1954, 500], True),  # clamped: the content shrank
    ("on_scroll", "onScroll", [1546, 2214, 500], True),  # grown, not re-pinned yet (#41)
    ("target_after_render", "target", [2214, 500], True),
    ("hold", "hold", [True], True),  # a finger drags the log
    ("on_scroll", "onScroll", [1600, 2214, 500], False),
    ("hold", "hold", [False], False),
    ("target_after_render", "target", [2400, 500], False),  # stays; Jump shows
    ("on_scroll", "onScroll", [1000, 2400, 500], False),  # off the bottom: still released
    ("on_scroll", "onScroll", [1895, 2400, 500], True),  # back at the bottom: re-armed
    ("target_after_render", "target", [2600, 500], True),
    ("on_user_intent_up", "up", [], False),  # the wheel upwards
    ("target_after_render", "target", [2700, 500], False),
    ("on_user_intent_down", "down", [2700], False),  # the wheel downwards, while it grows
    ("on_scroll", "onScroll", [2200, 2900, 500], True),
    ("target_after_render", "target", [3000, 500], True),
    ("on_user_intent_up", "up", [], False),
    ("on_scroll", "onScroll", [800, 3000, 500], False),
    ("jump", "jump", [3100, 500], True),
    ("target_after_render", "target", [3300, 500], True),
    # A wheel's event reaches the page after its scroll, and after the text grew (#41): the
    # growth counts from the event's time stamp (1010), not from when the page heard of it.
    ("on_user_intent_up", "up", [], False),
    ("seen", "seen", [3300, 1000], False),
    ("seen", "seen", [3450, 1040], False),
    ("seen", "seen", [3600, 1090], False),
    ("on_user_intent_down", "down", [3600, 1010], False),
    ("on_scroll", "onScroll", [2800, 3600, 500], True),  # where the bottom was at 1000
    ("on_user_intent_up", "up", [], False),
    ("seen", "seen", [3600, 3000], False),  # two seconds later: 1000-1090 forgotten
    ("seen", "seen", [3700, 3100], False),
    ("on_user_intent_down", "down", [3700, 3110], False),
    ("on_scroll", "onScroll", [2800, 3700, 500], False),  # 400 px short: not the bottom
]

AGREE_JS = """import { Follower } from "./view.js";
const f = new Follower();
const out = [];
for (const [name, args] of JSON.parse(process.argv[2])) {
  const r = f[name](...args);
  out.push([f.following, f.showJump, r === undefined ? null : r]);
}
console.log(JSON.stringify(out));
"""


def test_the_page_and_stream_chat_follow_by_the_same_rules(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node")
    # view.js as the page has it, beside the writer it imports (which touches no DOM when
    # imported: a stand-in had to be kept in step with its exports)
    (tmp_path / "view.js").write_text((ROOT / "web" / "view.js").read_text())
    writer = ROOT / "pysse" / "browser" / "dom_writer.js"
    (tmp_path / "dom_writer.js").write_text(writer.read_text())
    (tmp_path / "agree.mjs").write_text(AGREE_JS)
    steps = json.dumps([[js, args] for _, js, args, _ in STEPS])
    ran = subprocess.run(
        [node, str(tmp_path / "agree.mjs"), steps], capture_output=True, text=True, check=True
    )
    in_js = json.loads(ran.stdout)
    sf = ScrollFollower()
    in_py = []
    for name, _, args, _ in STEPS:
        r = getattr(sf, name)(*args)
        in_py.append([sf.following, sf.show_jump, r])
    assert in_py == in_js
    assert [row[0] for row in in_py] == [following for *_, following in STEPS]


class Answer:
    """A ``Scheduled`` that counts its frames; ``broken``: its frame raises."""

    def __init__(self, broken: bool = False) -> None:
        self.broken = broken
        self.frames = 0
        self.shown = 0

    def on_frame(self) -> None:
        if self.broken:
            raise ValueError("cannot render")
        self.frames += 1

    def on_visible(self) -> None:
        if self.broken:
            raise ValueError("cannot show")
        self.shown += 1

    def on_hidden(self) -> None:
        """(nothing to do)"""

    def on_page_return(self, persisted: bool) -> None:
        """(nothing to do)"""


def test_one_answers_failing_frame_ends_its_frames_alone() -> None:
    """Issue #40: an exception in one answer's frame work reached the worker's message
    handler, which took it for the death of the page's Python and ended every answer. The
    loop isolates each answer: the failing one is reported and forgotten, the others render
    on, frame after frame."""
    from pysse import faults
    from pysse.render.frames import FrameLoop

    before = faults.count()
    loop = FrameLoop()
    bad, good = Answer(broken=True), Answer()
    for who in (bad, good):
        loop.add(who)
        loop.request(who)
    loop.on_frame()  # (raised here before the fix)
    assert good.frames == 1
    assert faults.count() == before + 1
    assert "cannot render" in faults.LAST[-1]
    loop.request(good)
    loop.on_frame()
    assert good.frames == 2
    loop.set_hidden(True)
    loop.set_hidden(False)  # the failed answer is no longer told
    assert good.shown == 1
    assert faults.count() == before + 1


def test_a_frame_stands_for_one_to_max_span_display_frames() -> None:
    """The page's frame message says how many display frames it covers (its cadence); the
    loop keeps it for the answers' updates, never below one or above ``MAX_SPAN``."""
    loop = FrameLoop()
    for given, kept in [(None, 1.0), (4.0, 4.0), (0.2, 1.0), (1e9, MAX_SPAN)]:
        loop.on_frame() if given is None else loop.on_frame(given)
        assert loop.span == kept
