"""The peer column of ``build.py bench --only peer|render`` (issue #41, goal 5): which pages are
measured, and the table of pysse's figures against streamdown's and their ratios, worked out by
hand from made-up rows."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bench.bench_peer import PEER_FILES, prepare, ratio
from bench.bench_render import Row, peer_table, pysse_sites, targets_table


def row(cpu: float, render: float, long_tasks: int, longest: float) -> Row:
    return {
        "cpu_ms": cpu,
        "render_ms": render,
        "long_tasks": long_tasks,
        "longest_task_ms": longest,
    }


def test_ratio() -> None:
    assert ratio(6.0, 24.0) == 0.25
    assert math.isnan(ratio(1.0, 0.0))
    assert math.isnan(ratio(float("nan"), 2.0))
    assert math.isnan(ratio(2.0, float("nan")))


def test_modes_of_a_site() -> None:
    worker, main = pysse_sites("this branch", "http://x", ["worker", "main"])
    assert (worker.name, worker.page, worker.peer) == ("this branch, worker", "/", False)
    assert (main.name, main.page) == ("this branch, main", "/?thread=main")
    (baseline,) = pysse_sites("baseline", "http://y", ["worker", "main"])
    assert (baseline.name, baseline.page) == ("baseline", "/")


def test_peer_table_medians_and_ratios() -> None:
    stream = "mixed 56 KB"
    res = {
        (stream, "this branch, worker"): [row(5000, 3000, 3, 100), row(7000, 3400, 2, 90)],
        (stream, "this branch, main"): [row(8000, 3000, 1, 40)],
        (stream, "streamdown 2.7.1"): [row(24000, 8000, 123, 42), row(26000, 8400, 125, 40)],
        ("code n=1", "this branch, worker"): [row(1, 1, 0, 1)],  # no peer: no table
    }
    lines = peer_table(res)
    assert lines[0] == (
        "| mixed 56 KB, Chromium 1x, median of 2 runs | this branch, worker | this branch, main "
        "| streamdown 2.7.1 | this branch, worker / streamdown | this branch, main / streamdown |"
    )
    by_label = {ln.split(" | ")[0].lstrip("| "): ln for ln in lines[2:] if ln}
    assert by_label["main-thread CPU ms"] == (
        "| main-thread CPU ms | 6,000 | 8,000 | 25,000 | 0.24 | 0.32 |"
    )
    assert by_label["tasks >= 12.5 ms CPU"].endswith("| 2 | 1 | 124 | 0.02 | 0.01 |")
    assert by_label["longest task ms"].endswith("| 95.0 | 40.0 | 41.0 | 2.32 | 0.98 |")
    assert by_label["script ms"].endswith("| n/a | n/a | n/a | n/a | n/a |")  # not in the rows
    assert not any("code n=1" in ln for ln in lines)
    assert peer_table({k: v for k, v in res.items() if "streamdown" not in k[1]}) == []


def test_issue_targets_are_pysse_s_only() -> None:
    res = {("mixed 56 KB", "streamdown 2.7.1"): [row(24000, 8000, 123, 42)]}
    assert len(targets_table(res)) == 2  # the head only


def test_no_npm_skips_the_peer_in_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no npm here
    assert prepare(tmp_path / "peer") is None
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "streamdown is not measured" in out


def test_a_failing_npm_skips_the_peer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    npm = tmp_path / "bin" / "npm"
    npm.parent.mkdir()
    npm.write_text("#!/bin/sh\necho 'npm error code ENOTFOUND registry.npmjs.org' >&2\nexit 1\n")
    npm.chmod(0o755)
    monkeypatch.setenv("PATH", str(npm.parent))
    assert prepare(tmp_path / "peer") is None
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "ENOTFOUND" in out and "skipped" in out
    assert sorted(p.name for p in (tmp_path / "peer").iterdir()) == sorted(PEER_FILES)
