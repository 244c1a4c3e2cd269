"""The decisions about an attached file, in pure Python (``pysse.app.attach_rules``): its kind,
an image's size from its header, and whether and how a large image is scaled down."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from pysse.app.attach_rules import (
    MAX_SIDE,
    fit,
    image_size,
    kind_of,
    scale_plan,
    scaled_note,
    text_of,
)
from pysse.errors import AttachmentError
from pysse.providers.attachments import MAX_IMAGE_BYTES


def encoded(fmt: str, w: int, h: int, **kw: object) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (w, h), (200, 30, 30)).save(out, fmt, **kw)
    return out.getvalue()


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from(
        [("PNG", {}), ("GIF", {}), ("JPEG", {}), ("WEBP", {}), ("WEBP", {"lossless": True})]
    ),
    st.integers(1, 400),
    st.integers(1, 400),
)
def test_the_size_is_read_from_every_type_a_model_takes(
    kind: tuple[str, dict[str, object]], w: int, h: int
) -> None:
    fmt, kw = kind
    assert image_size(encoded(fmt, w, h, **kw)) == (w, h)


def test_a_jpeg_with_exif_before_its_frame_is_read() -> None:
    exif = Image.Exif()
    exif[0x010E] = "x" * 3000  # a long description: a big APP1 segment first
    out = io.BytesIO()
    Image.new("RGB", (37, 21)).save(out, "JPEG", exif=exif)
    assert image_size(out.getvalue()) == (37, 21)


@given(st.binary(max_size=64))
def test_any_bytes_are_a_size_or_none_never_an_error(data: bytes) -> None:
    got = image_size(data)
    assert got is None or (got[0] > 0 and got[1] > 0)


@pytest.mark.parametrize("fmt", ["PNG", "GIF", "JPEG", "WEBP"])
def test_a_header_cut_short_is_none(fmt: str) -> None:
    data = encoded(fmt, 30, 20)
    assert image_size(data[:9]) is None


@given(st.integers(1, 20_000), st.integers(1, 20_000))
def test_fit_bounds_the_longest_side_and_keeps_the_aspect(w: int, h: int) -> None:
    fw, fh = fit(w, h)
    assert max(fw, fh) <= MAX_SIDE and fw <= w and fh <= h
    if max(w, h) <= MAX_SIDE:
        assert (fw, fh) == (w, h)
    else:
        assert max(fw, fh) == MAX_SIDE
        assert abs(fw / fh - w / h) <= 1 / min(fw, fh) * (w / h) + 0.01


def test_a_small_image_goes_as_it_is() -> None:
    assert scale_plan("image/png", (1568, 1000), 1_000_000) is None


def test_a_large_photo_is_scaled_to_1568_on_its_longest_side() -> None:
    plan = scale_plan("image/png", (4000, 3000), 2_000_000)
    assert plan is not None and (plan.width, plan.height) == (1568, 1176)
    assert plan.encodings[0][0] == "image/webp"  # keeps transparency
    assert plan.encodings[-1][0] == "image/jpeg"  # the last resort
    jpeg = scale_plan("image/jpeg", (3000, 4000), 2_000_000)
    assert jpeg is not None and (jpeg.width, jpeg.height) == (1176, 1568)
    assert {t for t, _ in jpeg.encodings} == {"image/jpeg"}
    note = scaled_note("cat.png", (4000, 3000), plan, "image/webp")
    assert note == "cat.png scaled to 1568×1176 to fit (was 4000×3000)."


def test_a_small_image_too_heavy_is_encoded_again_at_its_size() -> None:
    plan = scale_plan("image/png", (1200, 900), MAX_IMAGE_BYTES + 1)
    assert plan is not None and (plan.width, plan.height) == (1200, 900)
    assert "re-encoded as WEBP" in scaled_note("a.png", (1200, 900), plan, "image/webp")


def test_kinds_and_the_sentence_for_a_file_no_model_takes() -> None:
    assert kind_of("a.png", "image/png") == "image"
    assert kind_of("notes.md", "text/markdown") == "text"
    assert kind_of("data.json", "application/json") == "text"
    assert kind_of("script.py", "") == "text"
    with pytest.raises(AttachmentError, match=r"^setup\.exe: application/x-msdownload cannot"):
        kind_of("setup.exe", "application/x-msdownload")
    with pytest.raises(AttachmentError, match="cannot be attached"):
        kind_of("pic.bmp", "image/bmp")


def test_text_must_be_utf8() -> None:
    assert text_of("a.txt", "\ufeffhé".encode()) == "hé"
    with pytest.raises(AttachmentError, match="not UTF-8"):
        text_of("a.txt", "hé".encode("latin-1"))
