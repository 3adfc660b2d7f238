"""Timing around the model call only: inputs are prepared and bound before the clock starts."""

from __future__ import annotations

import time

import numpy as np

from olive_eval.metrics.performance import TimingConfig
from olive_eval.runtimes.base import BoundCall


def measure(call: BoundCall, config: TimingConfig) -> np.ndarray:
    """Seconds per call for ``repeat_test_num`` calls after ``warmup_num`` untimed ones.

    ``BoundCall.__call__`` synchronizes GPU work itself, so the interval covers the whole call.
    """
    for _ in range(config.warmup_num):
        call()
    seconds = np.empty(config.repeat_test_num, dtype=np.float64)
    clock = time.perf_counter
    for i in range(config.repeat_test_num):
        start = clock()
        call()
        seconds[i] = clock() - start
        if config.sleep_num:
            time.sleep(config.sleep_num)
    return seconds
