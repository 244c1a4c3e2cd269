"""The answer record's rules, without a server: append-only bytes read from any offset, a time
to live after the end, a total size cap that evicts ended answers first and then stops keeping
the oldest live one without cutting its reader, in O(1) per operation."""

from __future__ import annotations

import pytest

from pysse.server.record import RecordBook


def test_bytes_read_from_any_offset() -> None:
    book = RecordBook(ttl=10, max_bytes=1000)
    rec = book.create("a", now=0)
    for piece in (b"data: h", b"\xc3", b"\xa9\r", b"\n\r\n"):
        book.append(rec, piece, now=1)
    whole = b"data: h\xc3\xa9\r\n\r\n"
    for k in range(len(whole) + 1):
        assert rec.read(k) == whole[k:]
    assert book.total == len(whole)


def test_an_ended_record_expires_after_the_ttl_a_live_one_never() -> None:
    book = RecordBook(ttl=10, max_bytes=1000)
    done, live = book.create("done", 0), book.create("live", 0)
    book.append(done, b"x", 0)
    book.append(live, b"y", 0)
    book.end(done, now=5)
    assert book.get("done", 15) is done  # 10 s after its end: still there
    assert book.get("done", 15.1) is None
    assert book.get("live", 1000) is live
    assert book.total == 1
    assert book.append(done, b"late", 16) == [] and done.read(0) == b""


def test_the_size_cap_evicts_ended_records_first_then_stops_keeping_the_oldest_live() -> None:
    book = RecordBook(ttl=100, max_bytes=10)
    old_live, ended, new_live = book.create("a", 0), book.create("b", 1), book.create("c", 2)
    book.append(old_live, b"1234", 3)
    book.append(ended, b"1234", 3)
    book.end(ended, 4)
    assert book.append(new_live, b"12", 5) == []  # exactly at the cap
    assert book.append(new_live, b"3", 6) == []  # the ended one goes, no live one
    assert "b" not in book and book.total == 7 and book.evictions == 1
    # Over again: the oldest live answer is no longer kept. Nobody reads it, so it is
    # reported (its producer stops); its bytes go, but it stays known ("not kept").
    assert book.append(new_live, b"4567", 7) == [old_live]
    assert not old_live.kept and book.get("a", 7) is old_live and book.not_kept == 1
    assert book.total == 7 <= book.max_bytes
    assert book.append(old_live, b"more", 8) == [old_live]  # and stays reported
    assert new_live.kept and new_live.read(0) == b"1234567"


def test_an_answer_being_read_is_never_cut_by_the_cap() -> None:
    book = RecordBook(ttl=100, max_bytes=16)
    rec = book.create("read", 0)
    cursor = book.attach(rec, 0)
    assert cursor is not None
    book.append(rec, b"data: 1\n\n", 1)
    assert book.read(rec, cursor) == b"data: 1\n\n"
    book.append(rec, b"data: 22", 2)  # over the cap, mid-event: no longer kept
    assert not rec.kept and book.not_kept == 1
    assert book.read(rec, cursor) == b"data: 22"
    book.append(rec, b"\n\n", 3)  # the event ends: the note comes, then the rest
    assert book.append(rec, b"data: 333\n\n", 4) == []
    got = book.read(rec, cursor)
    assert got.startswith(b"\n\n: pysse relay: this answer is no longer kept")
    assert got.endswith(b"all of it\n\ndata: 333\n\n")
    assert book.total == 0  # the reader has it all: nothing held for it
    assert book.attach(rec, 0) is None  # and nobody can start over
    assert book.detach(rec, cursor)  # its last reader left: the producer should stop


class CountingNow(float):
    """A clock reading that counts the subtractions made with it: the old expiry computed
    ``now - ended_at`` for every record on every call."""

    subtractions = 0

    def __sub__(self, other: object) -> float:
        CountingNow.subtractions += 1
        return float(self) - float(other)  # type: ignore[arg-type]


def test_expiry_and_eviction_walk_no_record_that_stays() -> None:
    # 10,000 live answers and 10,000 ended ones: a lookup that expires two records, and an
    # append that evicts one for room, look at a handful of records, not at all of them
    # (counted, not timed: before the ordered index each one was 20,000 looks).
    book = RecordBook(ttl=10, max_bytes=10**9)
    for i in range(10_000):
        book.append(book.create(f"live{i}", 0), b"x" * 10, 0)
    for i in range(10_000):
        rec = book.create(f"done{i}", 0)
        book.append(rec, b"y" * 10, 0)
        book.end(rec, i / 1000)  # ended over 10 s
    CountingNow.subtractions = 0
    now = CountingNow(10.0015)
    assert book.get("done9999", now) is not None  # two ended records expire now
    assert "done0" not in book and "done1" not in book and "done2" in book
    book.max_bytes = book.kept_bytes - 5
    book.append(book.get("live0", now), b"z", now)  # type: ignore[arg-type]
    assert book.evictions == 1 and "done2" not in book and book.not_kept == 0
    assert CountingNow.subtractions <= 4


def test_bad_settings_and_duplicate_ids_are_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        RecordBook(ttl=0)
    book = RecordBook()
    book.create("x", 0)
    with pytest.raises(ValueError, match="already exists"):
        book.create("x", 0)
