"""app/settings.py: defaults, the server's format, what the user saved, form coercion."""

from __future__ import annotations

import json

import pytest

from pysse.app.settings import DEFAULTS, coerce, dump_settings, image_hosts, load_settings


def test_defaults_when_nothing_is_saved() -> None:
    assert load_settings(None, {}) == DEFAULTS
    assert load_settings("", {})["format"] == "auto"


def test_server_format_then_saved_values() -> None:
    assert load_settings(None, {"format": "anthropic"})["format"] == "anthropic"
    saved = json.dumps({"model": "m", "idle_s": "12", "unknown": 1, "format": "gemini"})
    s = load_settings(saved, {})
    assert s["model"] == "m" and s["idle_s"] == 12 and s["format"] == "gemini"
    assert "unknown" not in s


def test_a_stale_saved_format_does_not_override_the_servers() -> None:
    site = {"format": "anthropic"}
    # Saved while playing with the demo (no server format), then the server is started with
    # --format anthropic: the server wins.
    stale = json.dumps({"format": "gemini", "model": "m"})
    s = load_settings(stale, site)
    assert s["format"] == "anthropic" and s["model"] == "m"
    # Chosen under this server's format: the user's choice stands.
    chosen = dump_settings({**DEFAULTS, "format": "gemini"}, site)
    assert load_settings(chosen, site)["format"] == "gemini"
    # ... until the server's format changes again.
    assert load_settings(chosen, {"format": "openai-chat"})["format"] == "openai-chat"


@pytest.mark.parametrize("saved", ["{not json", "[1, 2]", '"text"', json.dumps({"format": 3})])
def test_unreadable_saved_settings_fall_back_to_defaults(saved: str) -> None:
    assert load_settings(saved, {})["format"] == "auto"


@pytest.mark.parametrize(
    ("value", "expected"),
    [("5", 5), ("2.7", 2), ("0", 1), ("-3", 1), ("x", 60), ("nan", 60), ("inf", 60), (None, 60)],
)
def test_timeouts_are_whole_seconds_at_least_one(value: object, expected: int) -> None:
    assert coerce("first_byte_s", value) == expected


def test_text_settings_and_image_hosts() -> None:
    assert coerce("model", None) == "" and coerce("model", 5) == "5"
    assert image_hosts({"image_hosts": " a.example, ,b.example "}) == {"a.example", "b.example"}


def test_choices_fall_back_to_their_default() -> None:
    from pysse.app.settings import coerce

    assert coerce("theme", "dark") == "dark"
    assert coerce("theme", "neon") == "system"
    assert coerce("keep_recordings", "no") == "no"
    assert coerce("keep_recordings", None) == "yes"
