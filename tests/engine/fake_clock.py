"""A clock for timing tests: time passes only when a scripted model says so, so latency tests are exact.

Models built by :data:`LOADER` advance :data:`CLOCK` by their cost on each call. ``drift`` makes every
call slower as (fake) time passes, the way a machine that gets busier does.
"""

from __future__ import annotations

import math

LOADER = """
import json
from tests.engine import fake_clock


def load(model_path):
    spec = json.load(open(model_path))
    if spec.get("fail"):
        raise RuntimeError("this model does not load")
    fake_clock.CLOCK.now += spec.get("load", 0.0)
    return fake_clock.ScriptedModel(spec)
"""


class FakeClock:
    def __init__(self) -> None:
        self.reset()

    def reset(self, drift: float = 0.0) -> None:
        self.now = 0.0
        self.drift = drift
        self.log: list[tuple[str, float]] = []  # (model, seconds) of every call
        self.sleeps: list[float] = []

    def perf_counter(self) -> float:
        return self.now

    def process_time(self) -> float:
        """No other thread ever spins here: the process is idle whenever the models are not called."""
        return 0.0

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def call(self, name: str, cost: float) -> None:
        seconds = cost * (1.0 + self.drift * self.now)
        self.log.append((name, seconds))
        self.now += seconds


CLOCK = FakeClock()


class ScriptedModel:
    """``cost`` seconds a call; ``cold`` extra on the first call; ``wobble`` a deterministic ± spread."""

    def __init__(self, spec: dict) -> None:
        self.spec = spec
        self.calls = 0

    def __call__(self, x):
        cost = self.spec["cost"]
        if self.calls == 0:
            cost += self.spec.get("cold", 0.0)
        cost *= 1.0 + self.spec.get("wobble", 0.0) * math.sin(1.7 * self.calls)
        if self.spec.get("spike") and self.calls % 4 == 3:
            cost *= self.spec["spike"]
        self.calls += 1
        CLOCK.call(self.spec["name"], cost)
        return x
