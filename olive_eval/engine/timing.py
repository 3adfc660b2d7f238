"""Timing around the model call only: inputs are prepared and bound before the clock starts."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from olive_eval.metrics.performance import TimingConfig
from olive_eval.runtimes.base import BoundCall

#: Seconds between progress reports during a long timing loop.
PROGRESS_EVERY = 5.0


def measure(call: BoundCall, config: TimingConfig, report: Callable[[str], None] | None = None) -> np.ndarray:
    """Seconds per call for ``repeat_test_num`` calls after ``warmup_num`` untimed ones.

    ``BoundCall.__call__`` synchronizes GPU work itself, so the interval covers the whole call.
    ``report`` hears how far a long loop has got, every few seconds (outside the timed region).
    """
    clock = time.perf_counter
    next_report = clock() + PROGRESS_EVERY
    for i in range(config.warmup_num):
        call()
        if report is not None and clock() >= next_report:
            report(f"warm-up {i + 1:,}/{config.warmup_num:,}")
            next_report = clock() + PROGRESS_EVERY
    seconds = np.empty(config.repeat_test_num, dtype=np.float64)
    for i in range(config.repeat_test_num):
        start = clock()
        call()
        seconds[i] = clock() - start
        if config.sleep_num:
            time.sleep(config.sleep_num)
        if report is not None and clock() >= next_report:
            report(f"timed run {i + 1:,}/{config.repeat_test_num:,}")
            next_report = clock() + PROGRESS_EVERY
    return seconds
