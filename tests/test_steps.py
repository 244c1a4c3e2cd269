"""``pysse.steps.run_steps``: a stepwise computation run to its end at once."""

from __future__ import annotations

from collections.abc import Generator

from pysse.steps import run_steps


def test_every_step_runs_and_the_result_is_returned() -> None:
    seen: list[int] = []

    def steps() -> Generator[list[int], None, str]:
        for i in range(5):
            seen.append(i)
            yield list(seen)  # (progress for a caller that shows it: ignored here)
        return "done"

    assert run_steps(steps()) == "done"
    assert seen == [0, 1, 2, 3, 4]


def test_a_computation_without_steps_returns_at_once() -> None:
    def steps() -> Generator[None, None, int]:
        return 7
        yield

    assert run_steps(steps()) == 7
