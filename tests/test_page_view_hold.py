"""Holding the reader's view where the engine has no CSS scroll anchoring (WebKit), pure: when
it acts, how far it scrolls, and that it never acts where the engine anchors itself."""

from __future__ import annotations

from pysse.page.view_hold import ViewHold


def test_scrolls_by_as_much_as_the_anchor_moved() -> None:
    hold = ViewHold(native=False)
    assert hold.active(following=False)
    hold.remember("p#7", 180.0)
    assert hold.correction(198.0) == 18.0  # content above grew: scroll down as much
    assert hold.correction(170.0) == -10.0  # ... or shrank: up
    assert hold.corrections == 2


def test_still_and_gone_anchors_move_nothing() -> None:
    hold = ViewHold(native=False)
    assert hold.correction(100.0) == 0.0  # nothing remembered yet
    hold.remember("td", 50.0)
    assert hold.correction(50.3) == 0.0  # sub-pixel: layout rounding, not a shift
    assert hold.correction(None) == 0.0  # the anchor left the document (a replaced tail)
    hold.remember(None, 0.0)
    assert hold.anchor is None and hold.corrections == 0


def test_never_acts_while_following_or_where_the_engine_anchors() -> None:
    assert not ViewHold(native=False).active(following=True)  # the bottom is followed anyway
    assert not ViewHold(native=True).active(following=False)  # Chromium, Firefox: theirs
