"""The answer record's rules, without a server: append-only bytes read from any offset, a time
to live after the end, a total size cap that evicts oldest first (ended before live)."""

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


def test_the_size_cap_evicts_ended_records_first_then_the_oldest_live() -> None:
    book = RecordBook(ttl=100, max_bytes=10)
    old_live, ended, new_live = book.create("a", 0), book.create("b", 1), book.create("c", 2)
    book.append(old_live, b"1234", 3)
    book.append(ended, b"1234", 3)
    book.end(ended, 4)
    assert book.append(new_live, b"12", 5) == []  # exactly at the cap
    assert book.append(new_live, b"3", 6) == []  # the ended one goes, no live one
    assert "b" not in book and book.total == 7
    evicted = book.append(new_live, b"4567", 7)  # over again: the oldest live one goes
    assert evicted == [old_live] and old_live.evicted and "a" not in book
    assert book.total == 7 <= book.max_bytes and book.evictions == 2


def test_an_answer_larger_than_the_cap_evicts_itself() -> None:
    book = RecordBook(ttl=100, max_bytes=8)
    rec = book.create("big", 0)
    assert book.append(rec, b"123456789", 1) == [rec]
    assert rec.evicted and book.total == 0 and book.get("big", 1) is None


def test_bad_settings_and_duplicate_ids_are_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        RecordBook(ttl=0)
    book = RecordBook()
    book.create("x", 0)
    with pytest.raises(ValueError, match="already exists"):
        book.create("x", 0)
