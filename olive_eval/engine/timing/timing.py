"""The measurement loop: timing around the model call only, inputs prepared and bound before the clock starts.

Two loops:

* back to back (the default): one call right after the other, as ``onnxruntime_perf_test`` and
  optimum-benchmark time them;
* ``yield_between_runs``: ``time.sleep(sleep_num)`` after every call even when it is 0, as Olive's
  loop does. ``sleep(0)`` yields the CPU; ONNX Runtime's spinning worker threads then go idle between
  calls and wake up with each one, which changes the figure on a busy or small machine (see the README).

``repeat_test_num: "auto"`` times in chunks until every statistic of the run is known to within
``target_rel_ci`` of its value (a 95% bootstrap interval), or ``max_seconds`` have passed.

Progress never enters the timed interval: after each call the loop reads the clock (as it always did for its
progress lines), and only every ``TICK_SECONDS`` advances a live task (:mod:`olive_eval.progress`) by the calls
made since, or every ``PROGRESS_EVERY`` writes a line when there is no live task.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

import numpy as np

from olive_eval.metrics.performance import TimingConfig
from olive_eval.progress import NO_TASK, Task
from olive_eval.runtimes.base import BoundCall

#: Seconds between progress lines during a long timing loop.
PROGRESS_EVERY = 5.0
#: Seconds between advances of a live progress task during a timing loop.
TICK_SECONDS = 0.25
#: Adaptive repeats: never judge the interval on fewer runs than this.
MIN_ADAPTIVE_RUNS = 10
#: Adaptive repeats: target seconds of timed calls per chunk, between two interval checks.
CHUNK_SECONDS = 0.25
#: Adaptive repeats: resamples of the stopping check (the reported interval uses the metric's own settings).
CHECK_RESAMPLES = 200

Report = Callable[[str], None]


#: Settling: the process counts as idle below this share of one core, checked over this window.
IDLE_SHARE, SETTLE_WINDOW, MAX_SETTLE = 0.05, 0.005, 0.25


def settle() -> float:
    """Wait until this process's other threads are idle; the seconds waited.

    After a session runs, ONNX Runtime's worker threads spin for about 30 ms before they park. The next
    model timed in that window shares the cores with them, and a model that gains more from threads
    loses more. Interleaved rounds switch models often, so before each round we wait for the process
    to go idle (at most ``MAX_SETTLE``). Nothing is timed meanwhile.
    """
    started = time.perf_counter()
    while time.perf_counter() - started < MAX_SETTLE:
        cpu, wall = time.process_time(), time.perf_counter()  # CPU time of all the process's threads
        time.sleep(SETTLE_WINDOW)
        if (time.process_time() - cpu) / max(time.perf_counter() - wall, 1e-9) < IDLE_SHARE:
            break
    return time.perf_counter() - started


class _Ticker:
    """Progress of a loop of calls, looked at when the loop's clock says so: a line, or a live task's advance."""

    def __init__(self, what: str, n: int, report: Report | None, task: Task) -> None:
        self.what, self.n, self.report, self.task = what, n, report, task
        self.watched = report is not None or task.live
        self.every = TICK_SECONDS if task.live else PROGRESS_EVERY
        self.shown = 0
        self.due = time.perf_counter() + self.every

    def tick(self, done: int, now: float) -> None:
        """``done`` calls made by ``now``, which is past ``due``."""
        if self.task.live:
            self.task.advance(done - self.shown)
            self.shown = done
        elif self.report is not None:
            self.report(f"{self.what} {done:,}/{self.n:,}")
        self.due = now + self.every

    def finish(self) -> None:
        self.task.advance(self.n - self.shown)


def warm_up(call: BoundCall, n: int, report: Report | None = None, task: Task = NO_TASK) -> None:
    """``n`` untimed calls."""
    clock = time.perf_counter
    ticker = _Ticker("warm-up", n, report, task)
    watched = ticker.watched
    for i in range(n):
        call()
        if watched and (now := clock()) >= ticker.due:
            ticker.tick(i + 1, now)
    ticker.finish()


def timed_calls(
    call: BoundCall, n: int, config: TimingConfig, report: Report | None = None, task: Task = NO_TASK
) -> np.ndarray:
    """Seconds of each of ``n`` calls. ``BoundCall.__call__`` synchronizes GPU work itself, so the interval
    covers the whole call; sleeping and progress (a line, or ``task``'s advance) happen outside it."""
    clock = time.perf_counter
    sleep = config.sleep_num if (config.sleep_num or config.yield_between_runs) else None
    seconds = np.empty(n, dtype=np.float64)
    ticker = _Ticker("timed run", n, report, task)
    watched = ticker.watched
    for i in range(n):
        start = clock()
        call()
        seconds[i] = clock() - start
        if sleep is not None:
            time.sleep(sleep)
        if watched and (now := clock()) >= ticker.due:
            ticker.tick(i + 1, now)
    ticker.finish()
    return seconds


def measure(call: BoundCall, config: TimingConfig, report: Report | None = None) -> np.ndarray:
    """Olive's measurement: ``warmup_num`` untimed calls, then ``repeat_test_num`` timed ones."""
    if config.adaptive:
        raise ValueError("measure() takes a fixed repeat_test_num; adaptive runs go through the timing phase")
    warm_up(call, config.warmup_num, report)
    return timed_calls(call, int(config.repeat_test_num), config, report)


def round_sizes(repeat_test_num: int, rounds: int) -> list[int]:
    """``repeat_test_num`` timed calls split over at most ``rounds`` rounds, the first ones one larger."""
    rounds = max(1, min(rounds, repeat_test_num))
    base, extra = divmod(repeat_test_num, rounds)
    return [base + (i < extra) for i in range(rounds)]


def chunk_size(seconds: np.ndarray) -> int:
    """Adaptive repeats: how many calls make about ``CHUNK_SECONDS`` at the speed seen so far."""
    if len(seconds) == 0:
        return MIN_ADAPTIVE_RUNS
    mean = float(np.mean(seconds))
    return int(min(10_000, max(MIN_ADAPTIVE_RUNS, math.ceil(CHUNK_SECONDS / max(mean, 1e-7)))))


def relative_half_width(
    seconds: np.ndarray, statistics: Sequence[Callable[[np.ndarray], np.ndarray | float]], seed: int = 0
) -> float:
    """The largest half-width of the 95% percentile-bootstrap interval of the statistics, relative to
    their values (inf with too few runs). Adaptive repeats stop once it is within ``target_rel_ci``."""
    if len(seconds) < MIN_ADAPTIVE_RUNS:
        return math.inf
    rng = np.random.default_rng(seed)
    resampled = seconds[rng.integers(0, len(seconds), size=(CHECK_RESAMPLES, len(seconds)))]
    worst = 0.0
    for statistic in statistics:
        value = float(statistic(seconds))
        low, high = np.percentile(np.asarray(statistic(resampled)), [2.5, 97.5])
        if value == 0 or not math.isfinite(value):
            return math.inf
        worst = max(worst, (high - low) / 2 / abs(value))
    return worst
