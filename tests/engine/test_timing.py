"""The timer wraps the model call only, and honours warm-up, repeats and sleep per metric."""

from __future__ import annotations

import numpy as np
import pytest

from olive_eval.engine.timing import timing
from olive_eval.engine.timing.timing import measure
from olive_eval.metrics.performance import TimingConfig, latency_ms, throughput_per_s
from olive_eval.runtimes.base import BoundCall


class FakeClock:
    """Stands in for the ``time`` module inside the timer: time passes only when we say so."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class ModelCall(BoundCall):
    """A model call that takes ``seconds`` of fake time."""

    def __init__(self, clock: FakeClock, seconds: float) -> None:
        self.clock, self.seconds, self.calls = clock, seconds, 0

    def __call__(self) -> None:
        self.calls += 1
        self.clock.now += self.seconds

    def outputs(self) -> list[np.ndarray]:
        return []


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(timing, "time", fake)
    return fake


def test_warmup_and_repeats_are_honoured(clock):
    call = ModelCall(clock, 0.001)
    seconds = measure(call, TimingConfig(warmup_num=3, repeat_test_num=5))
    assert call.calls == 8 and seconds.shape == (5,)


def test_sleep_between_runs_is_outside_the_timer(clock):
    call = ModelCall(clock, 0.002)
    seconds = measure(call, TimingConfig(warmup_num=1, repeat_test_num=4, sleep_num=0.02))
    np.testing.assert_allclose(seconds, 0.002, rtol=1e-12)  # each interval is the call alone
    assert clock.now == pytest.approx(5 * 0.002 + 4 * 0.02)  # the sleeps happened, after timed runs only


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


def test_a_long_timing_loop_reports_progress(monkeypatch):  # issue 6, item 11
    clock = FakeClock()
    monkeypatch.setattr(timing, "time", clock)
    notes: list[str] = []
    call = ModelCall(clock, seconds=1.0)
    measure(call, TimingConfig(warmup_num=6, repeat_test_num=12), notes.append)
    # one report every 5 s of fake time, none inside a timed interval
    assert notes == ["warm-up 5/6", "timed run 5/12", "timed run 10/12"]
