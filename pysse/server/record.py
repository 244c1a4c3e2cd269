"""The relay's record of answers: each answer's bytes, append-only, kept for a while after it
ends, within a total size cap. Pure (no asyncio, no sockets, time passed in), so the rules
are tested without a server; ``pysse.server.store`` puts the async waiting around it.

Why a record and not the connection: a browser's connection can drop (Wi-Fi, a reload, a
proxy's idle cut) while the provider is still generating, and billing, the answer. The relay
keeps the bytes it received for the answer, so a page that comes back with "I have N bytes"
gets exactly the bytes after N: byte offsets make resuming exact whatever byte the cut fell
on (mid-line, mid-UTF-8 character, between a CR and its LF), and they need no change to the
stream (no ``id:`` lines added: the relay stays a byte-exact passthrough).

The rules:

* **Time to live.** An ended answer is kept for ``ttl`` seconds after its end, then forgotten
  (a resume gets "expired"). A live answer is never expired by time: the relay's own limits
  (unwatched cap, ``--max-duration``) end it.
* **Size cap.** The bytes of all records together stay within ``max_bytes``. Appending past
  it evicts whole records, oldest first, ended ones before live ones; an evicted live answer
  is reported so its producer can cancel the upstream (nobody could ever resume it whole).
  A single answer larger than the cap is evicted itself.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

__all__ = ["Record", "RecordBook"]


@dataclass(eq=False)
class Record:
    """One answer: its bytes so far, whether it ended, and what it was sent as."""

    answer_id: str
    created: float
    content_type: str = "text/event-stream"
    data: bytearray = field(default_factory=bytearray, repr=False)
    ended_at: float | None = None
    evicted: bool = False  # dropped for space while live: its readers end, resumes expire

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def ended(self) -> bool:
        return self.ended_at is not None

    def read(self, offset: int) -> bytes:
        """The bytes from ``offset`` on (``b""`` when the reader is up to date)."""
        return bytes(self.data[offset:])


class RecordBook:
    """Records by answer id, with a time to live after the end and a total size cap."""

    def __init__(self, ttl: float = 600.0, max_bytes: int = 64 << 20) -> None:
        if ttl <= 0 or max_bytes <= 0:
            raise ValueError("the answer store needs a positive time to live and size cap")
        self.ttl = ttl
        self.max_bytes = max_bytes
        self.total = 0  # bytes held by all records
        self._records: OrderedDict[str, Record] = OrderedDict()  # oldest first
        self.evictions = 0

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, answer_id: object) -> bool:
        return answer_id in self._records

    def create(self, answer_id: str, now: float, content_type: str = "text/event-stream") -> Record:
        if answer_id in self._records:
            raise ValueError(f"answer {answer_id!r} already exists")
        self.expire(now)
        rec = Record(answer_id, now, content_type)
        self._records[answer_id] = rec
        return rec

    def get(self, answer_id: str, now: float) -> Record | None:
        """The record, or None if there never was one, it expired, or it was evicted."""
        self.expire(now)
        return self._records.get(answer_id)

    def append(self, rec: Record, data: bytes, now: float) -> list[Record]:
        """Add bytes to a live record; returns the live records evicted to make room (their
        producers should stop). Appending to an evicted or ended record does nothing."""
        if rec.evicted or rec.ended or not data:
            return []
        rec.data += data
        self.total += len(data)
        return self._make_room(now)

    def end(self, rec: Record, now: float) -> None:
        """The answer is over (finished, failed or stopped); kept ``ttl`` seconds from now."""
        if rec.ended_at is None:
            rec.ended_at = now
            if rec.answer_id in self._records:
                self._records.move_to_end(rec.answer_id)  # "oldest" means ended longest ago

    def expire(self, now: float) -> list[Record]:
        """Forget ended records older than the time to live."""
        gone = [
            r
            for r in self._records.values()
            if r.ended_at is not None and now - r.ended_at > self.ttl
        ]
        for rec in gone:
            self._drop(rec)
        return gone

    def _make_room(self, now: float) -> list[Record]:
        if self.total <= self.max_bytes:
            return []
        self.expire(now)
        evicted_live: list[Record] = []
        for live in (False, True):  # ended records first, then live ones, oldest first
            for rec in [r for r in self._records.values() if r.ended != live]:
                if self.total <= self.max_bytes:
                    return evicted_live
                self._drop(rec)
                self.evictions += 1
                if live:
                    rec.evicted = True
                    evicted_live.append(rec)
        return evicted_live

    def _drop(self, rec: Record) -> None:
        if self._records.pop(rec.answer_id, None) is not None:
            self.total -= rec.size
            rec.data = bytearray()  # the memory goes now, even if a reader still holds rec
