"""Saying how the relay is doing: an event-loop lag monitor that logs (at most once per
``quiet`` seconds) when the relay falls behind, and the numbers an operator watches (open
streams, chunks relayed, store bytes, evictions, lag, CPU) as ``GET /metrics`` (Prometheus'
text format) and, with ``--metrics-every SECONDS``, as one log line that often.

Why lag: every stream of a relay process shares one event loop. When the loop has more work
than a core can do, nothing fails; every chunk just waits longer (issue #22 measured 40 s of
backlog with not one line logged). A timer that should fire every ``interval`` and fires
late by ``lag`` measures exactly that wait.

The numbers are read from what counts them, a relay's ``StreamGuard`` (its streams and
chunks) and its ``Answers`` (answers running, the store's counters), never from the
``Forwarder`` that holds both: the forwarder owns its metrics (``Forwarder.metrics``), so
this module stays below it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import resource
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from .body import json_error
from .serve import STOPPING

if TYPE_CHECKING:
    from .resume import Answers
    from .stream import StreamGuard

__all__ = ["LagMonitor", "RelayMetrics", "metrics_endpoint"]

log = logging.getLogger("pysse.relay")


class LagMonitor:
    """How late the event loop runs a timer: ``last`` and the ``worst`` since the last
    report, in seconds. A warning when it is ``threshold`` late or more for ``sustained``
    ticks in a row while ``busy()`` (streams are open: a lone hiccup of a shared machine is
    not the relay falling behind), at most once per ``quiet`` seconds, with the worst lag
    since the previous warning."""

    def __init__(
        self,
        interval: float = 0.25,
        threshold: float = 0.2,
        sustained: int = 3,
        quiet: float = 10.0,
    ) -> None:
        self.interval = interval
        self.threshold = threshold
        self.sustained = sustained
        self.quiet = quiet
        self.last = 0.0
        self.worst = 0.0  # since the last metrics report
        self.late = 0  # ticks later than the threshold, ever
        self._run = 0  # late ticks in a row
        self._warned_at = -quiet
        self._worst_unlogged = 0.0
        self.busy: Callable[[], bool] = lambda: True
        self.stopping: Callable[[], bool] = lambda: False  # shutting down: no warning
        self.describe: Callable[[], str] | None = None  # what the relay holds, for the line

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            start = loop.time()
            await asyncio.sleep(self.interval)
            lag = max(0.0, loop.time() - start - self.interval)
            self.tick(lag, loop.time())

    def tick(self, lag: float, now: float) -> bool:
        """One measurement; True when it was logged."""
        self.last = lag
        self.worst = max(self.worst, lag)
        if lag < self.threshold:
            self._run = 0
            return False
        self.late += 1
        self._run += 1
        self._worst_unlogged = max(self._worst_unlogged, lag)
        if self._run < self.sustained or now - self._warned_at < self.quiet:
            return False
        if not self.busy() or self.stopping():
            return False
        self._warned_at = now
        worst, self._worst_unlogged = self._worst_unlogged, 0.0
        held = f"; {self.describe()}" if self.describe is not None else ""
        log.warning(
            "the relay is falling behind: its event loop ran up to %.0f ms late (every "
            "stream's bytes wait that long)%s; run more relay processes (docs/relay.md)",
            worst * 1000,
            held,
        )
        return True


class RelayMetrics:
    """The numbers of one relay: its streams and chunks (``guard``), its answers and their
    store (``answers``, None with ``--no-resume``); a log line every ``every`` seconds (0:
    never). Each ``Forwarder`` makes one, shared by every route of that relay."""

    def __init__(self, guard: StreamGuard, answers: Answers | None, every: float = 0.0) -> None:
        self.guard = guard
        self.answers = answers
        self.every = every
        self.lag = LagMonitor()
        self.lag.describe = self.summary
        self.lag.busy = lambda: guard.open_streams > 0
        self.lag.stopping = STOPPING.is_set
        self._tasks: list[asyncio.Task[None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> None:
        """Start the monitor in the running loop (once per loop: tests run several)."""
        loop = asyncio.get_running_loop()
        if self._loop is loop:
            return
        self._loop = loop
        self._tasks = [loop.create_task(self.lag.run())]
        if self.every > 0:
            self._tasks.append(loop.create_task(self._report()))

    async def _report(self) -> None:
        while True:
            await asyncio.sleep(self.every)
            log.info("metrics: %s", self.summary())
            self.lag.worst = 0.0

    def snapshot(self) -> dict[str, float]:
        answers = self.answers
        usage = resource.getrusage(resource.RUSAGE_SELF)
        out: dict[str, float] = {
            "open_streams": self.guard.open_streams,
            "chunks_relayed": self.guard.chunks,
            "answers_running": answers.running if answers else 0,
            "loop_lag_seconds": round(self.lag.last, 4),
            "loop_lag_worst_seconds": round(self.lag.worst, 4),
            "loop_late_ticks": self.lag.late,
            "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3),
            "rss_bytes": _rss_bytes(),
        }
        if answers is not None:
            out.update(answers.store.stats())
        return out

    def summary(self) -> str:
        m = self.snapshot()
        text = (
            f"{m['open_streams']:.0f} streams open, {m['chunks_relayed']:.0f} chunks relayed, "
            f"loop lag {m['loop_lag_seconds'] * 1000:.0f} ms "
            f"(worst {m['loop_lag_worst_seconds'] * 1000:.0f} ms), "
            f"RSS {m['rss_bytes'] / 2**20:.0f} MiB"
        )
        if "store_bytes" in m:
            text += (
                f", store {m['store_bytes'] / 2**20:.1f} MiB in {m['store_answers']:.0f} "
                f"answers, {m['evictions']:.0f} evicted, {m['not_kept']:.0f} not kept"
            )
        return text

    def prometheus(self) -> str:
        lines = []
        for name, value in self.snapshot().items():
            lines.append(f"pysse_relay_{name} {value:g}")
        return "\n".join(lines) + "\n"


def _rss_bytes() -> int:
    with contextlib.suppress(OSError, ValueError, IndexError), open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def metrics_endpoint(metrics: RelayMetrics, secret: str | None) -> Any:
    """``GET /metrics``: the numbers as Prometheus text (the shared secret, if the relay has
    one, is needed here too)."""

    async def endpoint(request: Request) -> Response:
        metrics.start()
        if secret:
            given = request.headers.get("x-relay-secret", "")
            if not hmac.compare_digest(given.encode(), secret.encode()):
                return json_error(401, "relay_secret", "/metrics needs the X-Relay-Secret header")
        return PlainTextResponse(
            metrics.prometheus(),
            headers={"cache-control": "no-store", "x-content-type-options": "nosniff"},
        )

    return endpoint
