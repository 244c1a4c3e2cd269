"""chats/recording.py: recordings pack for storage, export and import checked, and the total
cap drops the oldest first."""

from __future__ import annotations

import base64

import pytest

from pysse.chats.recording import (
    RECORDING_MAX,
    Recording,
    RecordingError,
    evict,
    recordings_from_json,
    recordings_to_json,
)


def rec() -> Recording:
    return Recording(
        [(1.5, b"data: a\n"), (9.2, b"\n"), (20.0, b"data: [DONE]\n\n")],
        format="auto",
        state="completed",
        timing={"renders": 3, "bad": float("nan"), "rows": [1.0, float("inf")]},
        answer_id="ans-1",
    )


def test_pack_and_unpack_keep_bytes_times_and_meta() -> None:
    r = rec()
    meta, data = r.pack()
    assert data == r.raw() and meta["timing"] == {"renders": 3, "bad": None, "rows": [1.0, None]}
    back = Recording.unpack(meta, data)
    assert back.chunks == r.chunks and back.answer_id == "ans-1" and back.state == "completed"


@pytest.mark.parametrize(
    ("meta", "data"),
    [
        ("x", b""),
        ({"times": [1], "sizes": [1, 2]}, b"abc"),
        ({"times": [1], "sizes": [5]}, b"abc"),
        ({"times": ["x"], "sizes": [3]}, b"abc"),
        ({"times": [1], "sizes": [-3]}, b"abc"),
    ],
)
def test_unpack_refuses_what_does_not_add_up(meta: object, data: bytes) -> None:
    with pytest.raises(RecordingError):
        Recording.unpack(meta, data)


def test_export_import_round_trip_and_checks() -> None:
    doc = recordings_to_json({"m2": rec()})
    back = recordings_from_json(doc, {"m1", "m2"})
    assert back["m2"].raw() == rec().raw()
    with pytest.raises(RecordingError, match="not in the conversation"):
        recordings_from_json(doc, {"m1"})
    bad = {"m2": {**doc["m2"], "base64": "!!!"}}
    with pytest.raises(RecordingError, match="base64"):
        recordings_from_json(bad, {"m2"})
    huge = {"m2": {**doc["m2"], "base64": base64.b64encode(b"x" * (RECORDING_MAX + 1)).decode()}}
    with pytest.raises(RecordingError, match="larger"):
        recordings_from_json(huge, {"m2"})
    assert recordings_from_json(None, set()) == {}


def test_export_keeps_the_newest_recordings_that_fit() -> None:
    recs = {f"m{i}": Recording([(0.0, b"x" * 100)]) for i in range(5)}
    doc = recordings_to_json(recs, limit=250)
    assert list(doc) == ["m3", "m4"]


def test_evict_drops_the_oldest_until_it_fits() -> None:
    index = [("a", 50, 3.0), ("b", 50, 1.0), ("c", 50, 2.0)]
    assert evict(index, 150) == []
    assert evict(index, 100) == ["b"]
    assert evict(index, 10) == ["b", "c", "a"]
