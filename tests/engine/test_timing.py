"""The timer wraps the model call only, and honours warm-up, repeats and sleep per metric."""

from __future__ import annotations

import time

import numpy as np

from olive_eval.engine.timing import measure
from olive_eval.metrics.performance import TimingConfig, latency_ms, throughput_per_s
from olive_eval.runtimes.base import BoundCall


class SleepyCall(BoundCall):
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.calls = 0

    def __call__(self) -> None:
        self.calls += 1
        time.sleep(self.seconds)

    def outputs(self) -> list[np.ndarray]:
        return []


def test_warmup_and_repeats_are_honoured():
    call = SleepyCall(0.0)
    seconds = measure(call, TimingConfig(warmup_num=3, repeat_test_num=5))
    assert call.calls == 8 and seconds.shape == (5,)


def test_sleep_between_runs_is_outside_the_timer():
    call = SleepyCall(0.002)
    started = time.perf_counter()
    seconds = measure(call, TimingConfig(warmup_num=0, repeat_test_num=4, sleep_num=0.02))
    wall = time.perf_counter() - started
    assert wall >= 4 * 0.02  # the sleeps happened
    assert np.all(seconds < 0.02)  # but none of them was timed
    assert np.all(seconds >= 0.002)


def test_statistics_match_numpy():
    rng = np.random.default_rng(1)
    s = rng.uniform(0.001, 0.01, 101)
    assert latency_ms(s, "avg") == np.mean(s) * 1000
    assert latency_ms(s, "p90") == np.percentile(s, 90) * 1000
    assert latency_ms(s, "p999") == np.percentile(s, 99.9) * 1000
    assert throughput_per_s(s, 8, "min") == 8 / np.max(s)  # min throughput is the slowest run
    assert throughput_per_s(s, 8, "max") == 8 / np.min(s)
    assert throughput_per_s(s, 8, "avg") == 8 / np.mean(s)
    assert throughput_per_s(s, 8, "p90") == np.percentile(8 / s, 90)
