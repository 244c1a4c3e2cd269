"""call/speed.py: time to first token, tokens/s (usage once ended, else an estimate), and the
stall notice that tells silence from keep-alives."""

from __future__ import annotations

from pysse.call.speed import CHARS_PER_TOKEN, STALL_S, SpeedMeter


def streamed(meter: SpeedMeter, chars_per_ms: float = 0.1) -> None:
    meter.on_bytes(100, content=True)
    meter.on_text(120, 40)
    for t in range(200, 1200, 100):
        meter.on_bytes(t, content=True)
        meter.on_text(t, int(100 * chars_per_ms))


def test_ttft_and_an_estimated_rate_while_streaming() -> None:
    m = SpeedMeter()
    streamed(m)
    v = m.view(1150)
    assert v.ttft_ms == 120
    assert v.estimated and v.tokens_per_s is not None
    tokens = (40 + 10 * 10) / CHARS_PER_TOKEN
    assert abs(v.tokens_per_s - tokens / ((1100 - 120) / 1000)) < 0.01
    assert v.text.startswith("0.12 s to first token · ≈")
    assert v.stall == "" and v.notice == ""


def test_usage_is_trusted_only_once_the_answer_ended() -> None:
    m = SpeedMeter()
    streamed(m)
    m.on_usage(1)  # Anthropic's message_start says output_tokens: 1
    assert m.view(1150).estimated
    m.on_usage(98)
    m.on_end(1200)
    v = m.view(5000)
    assert not v.estimated and v.tokens_per_s is not None
    assert abs(v.tokens_per_s - 98 / 0.98) < 0.01
    assert "≈" not in v.text
    assert v.stall == ""  # an ended answer never stalls


def test_a_burst_has_no_rate() -> None:
    m = SpeedMeter()
    m.on_bytes(50, content=True)
    m.on_text(50, 3000)
    m.on_end(60)
    assert m.view(60).tokens_per_s is None
    assert m.view(60).text == "0.05 s to first token"


def test_silence_then_keepalives_then_text() -> None:
    m = SpeedMeter()
    assert m.view(1000).stall == ""
    assert m.view(STALL_S * 1000 + 1).stall == "waiting"
    streamed(m)
    quiet = 1100 + STALL_S * 1000
    v = m.view(quiet + 500)
    assert v.stall == "silent" and v.notice == f"no bytes for {v.stall_s:.0f} s"
    m.on_bytes(quiet + 600, content=False)  # a keep-alive: alive, not progress
    v = m.view(quiet + 700)
    assert v.stall == "keepalive" and "keep-alives" in v.notice
    m.on_bytes(quiet + 800, content=True)
    m.on_text(quiet + 800, 5)
    assert m.view(quiet + 900).stall == ""


def test_summary_round_trip() -> None:
    m = SpeedMeter()
    streamed(m)
    m.on_end(1200)
    s = m.summary(1200)
    v = SpeedMeter.from_summary(s)
    assert v is not None and v.text == m.view(1200).text and v.stall == ""
    assert SpeedMeter.from_summary("junk") is None
    bad = SpeedMeter.from_summary({"ttft_ms": "x", "tokens_per_s": True})
    assert bad is not None and bad.text == ""
