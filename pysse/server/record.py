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
* **Size cap, and no reader is ever cut.** The bytes of all records together stay within
  ``max_bytes``. Past it, ended records go first, oldest first. Then the oldest live answer
  stops being *kept*: it streams on to whoever reads it, a note in the stream says it can no
  longer be resumed, and a resume gets "not kept: the relay's store was full". A record that
  is not kept (or was forgotten while someone still reads it) holds only the bytes its
  readers have not read yet. A live answer that is not kept and has no reader is reported,
  so its producer cancels the upstream: nobody could ever read it.
* **O(1) per operation.** Ended records sit in an index ordered by their end (one time to
  live for all, so also by expiry): expiry and eviction pop from its front. Live records that
  are still kept sit in one ordered by their start. No operation walks every record.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

__all__ = ["NOT_KEPT_NOTE", "Cursor", "Record", "RecordBook"]

# The comment the stream gets once its answer is no longer kept: a comment changes no text,
# and it is put in where an event ends (never inside one).
NOT_KEPT_NOTE = (
    b": pysse relay: this answer is no longer kept for resuming (the relay's store was "
    b"full); this connection still gets all of it\n\n"
)
# The stream so far ends with a blank line: the next byte starts a new event.
_EVENT_ENDS = (b"\n\n", b"\r\r", b"\n\r", b"\n\r\n")


@dataclass(eq=False, slots=True)
class Cursor:
    """One reader's place in a record: the offset of the next byte it reads."""

    offset: int


@dataclass(eq=False, slots=True)
class Record:
    """One answer: its bytes so far, whether it ended, and what it was sent as."""

    answer_id: str
    created: float
    content_type: str = "text/event-stream"
    data: bytearray = field(default_factory=bytearray, repr=False)
    base: int = 0  # the offset of data[0]: above 0 once bytes every reader had were let go
    size: int = 0  # every byte ever appended (offsets run up to this)
    ended_at: float | None = None
    kept: bool = True  # False: no longer recorded for resumes (the store was full)
    cursors: list[Cursor] = field(default_factory=list, repr=False)
    tail: bytes = b""  # the stream's last bytes, while a note waits for an event's end
    note_due: bool = False

    @property
    def ended(self) -> bool:
        return self.ended_at is not None

    def read(self, offset: int) -> bytes:
        """The bytes from ``offset`` on (``b""`` when the reader is up to date, or when they
        were let go)."""
        start = offset - self.base
        if start < 0 or start >= len(self.data):
            return b""
        with memoryview(self.data) as view:
            return bytes(view[start:])  # one copy, not a bytearray slice and then bytes


class RecordBook:
    """Records by answer id, with a time to live after the end and a total size cap."""

    def __init__(self, ttl: float = 600.0, max_bytes: int = 64 << 20, notes: bool = True) -> None:
        """``notes``: put ``NOT_KEPT_NOTE`` in a stream no longer kept (off for a local copy
        of a store that keeps the whole answer elsewhere: its offsets must stay the same)."""
        if ttl <= 0 or max_bytes <= 0:
            raise ValueError("the answer store needs a positive time to live and size cap")
        self.ttl = ttl
        self.max_bytes = max_bytes
        self.notes = notes
        self.total = 0  # bytes held by all records (kept, or still owed to a reader)
        self.kept_bytes = 0  # bytes of the records kept for resuming: these the cap bounds
        self._live: dict[str, Record] = {}
        self._kept_live: OrderedDict[str, Record] = OrderedDict()  # oldest start first
        self._ended: OrderedDict[str, Record] = OrderedDict()  # oldest end first
        self.evictions = 0  # ended records dropped for space
        self.not_kept = 0  # live answers no longer recorded for space

    def __len__(self) -> int:
        return len(self._live) + len(self._ended)

    def __contains__(self, answer_id: object) -> bool:
        return answer_id in self._live or answer_id in self._ended

    def create(self, answer_id: str, now: float, content_type: str = "text/event-stream") -> Record:
        if answer_id in self:
            raise ValueError(f"answer {answer_id!r} already exists")
        self.expire(now)
        rec = Record(answer_id, now, content_type)
        self._live[answer_id] = rec
        self._kept_live[answer_id] = rec
        return rec

    def get(self, answer_id: str, now: float) -> Record | None:
        """The record, or None if there never was one or it expired or was evicted."""
        self.expire(now)
        return self._live.get(answer_id) or self._ended.get(answer_id)

    def append(self, rec: Record, data: bytes, now: float) -> list[Record]:
        """Add bytes to a live record; returns the live records that are not kept and have
        no reader (their producers should stop). Appending to an ended record does
        nothing."""
        if rec.ended or not data:
            return []
        if not rec.kept and not rec.cursors:
            return [rec]  # nobody reads it and nobody could resume it
        rec.data += data
        rec.size += len(data)
        self.total += len(data)
        if rec.note_due:
            self._note_if_event_ended(rec, data)
        if rec.kept:
            self.kept_bytes += len(data)
            if self.kept_bytes > self.max_bytes:
                return self._make_room(now)
        return []

    def end(self, rec: Record, now: float) -> None:
        """The answer is over (finished, failed or stopped); kept ``ttl`` seconds from now."""
        if rec.ended_at is not None:
            return
        rec.ended_at = now
        rec.note_due = False
        if self._live.pop(rec.answer_id, None) is not None:
            self._kept_live.pop(rec.answer_id, None)
            self._ended[rec.answer_id] = rec  # at the back: "oldest" means ended longest ago

    def expire(self, now: float) -> None:
        """Forget ended records older than the time to live (from the front of the index)."""
        ended = self._ended
        limit = now - self.ttl
        while ended:
            rec = next(iter(ended.values()))
            if rec.ended_at is None or rec.ended_at >= limit:
                return
            ended.popitem(last=False)
            self._let_go(rec)

    # -- readers ------------------------------------------------------------------------------

    def attach(self, rec: Record, offset: int) -> Cursor | None:
        """A reader from ``offset``; None when those bytes were already let go."""
        if offset < rec.base:
            return None
        cursor = Cursor(offset)
        rec.cursors.append(cursor)
        return cursor

    def read(self, rec: Record, cursor: Cursor) -> bytes:
        """The bytes ``cursor`` has not read yet, and it moves past them."""
        chunk = rec.read(cursor.offset)
        if chunk:
            cursor.offset += len(chunk)
            if not rec.kept:
                self._trim(rec)
        return chunk

    def detach(self, rec: Record, cursor: Cursor) -> bool:
        """The reader left. True when the answer is live, not kept, and now has no reader:
        its producer should stop."""
        rec.cursors.remove(cursor)
        if rec.kept:
            return False
        self._trim(rec)
        return not rec.cursors and not rec.ended

    # -- internals ----------------------------------------------------------------------------

    def _make_room(self, now: float) -> list[Record]:
        self.expire(now)
        ended = self._ended
        while self.kept_bytes > self.max_bytes and ended:
            _, rec = ended.popitem(last=False)
            self._let_go(rec)
            self.evictions += 1
        unread: list[Record] = []
        kept_live = self._kept_live
        while self.kept_bytes > self.max_bytes and kept_live:
            _, rec = kept_live.popitem(last=False)
            self.not_kept += 1
            if self.notes:
                rec.tail = bytes(rec.data[-3:])
                rec.note_due = True
            self._let_go(rec)  # it stays in the book: a resume is told why
            if rec.note_due:
                self._note_if_event_ended(rec, b"")
            if not rec.cursors:
                unread.append(rec)
        return unread

    def _note_if_event_ended(self, rec: Record, data: bytes) -> None:
        """Put the note in once the stream is between events."""
        rec.tail = (rec.tail + data)[-3:]
        if rec.size and not rec.tail.endswith(_EVENT_ENDS):
            return
        rec.note_due = False
        if not rec.cursors:
            return  # nobody to read it
        rec.data += NOT_KEPT_NOTE
        rec.size += len(NOT_KEPT_NOTE)
        self.total += len(NOT_KEPT_NOTE)

    def _let_go(self, rec: Record) -> None:
        """Stop keeping ``rec``: from now on it holds only what its readers still need."""
        if rec.kept:
            self.kept_bytes -= len(rec.data)
        rec.kept = False
        self._trim(rec)

    def _trim(self, rec: Record) -> None:
        low = min((c.offset for c in rec.cursors), default=rec.size)
        drop = low - rec.base
        if drop > 0:
            del rec.data[:drop]  # from the front: CPython moves a start pointer, no copy
            rec.base = low
            self.total -= drop
