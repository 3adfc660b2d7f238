"""The pass's look at each chunk end (:class:`SequentialStop`), with stand-in scorers: when it looks, what it
decides, and what it records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from olive_eval.config.sequential import SequentialSettings, checkpoints
from olive_eval.decide.sequential.confidence_sequence import mean_confidence_sequence
from olive_eval.engine.passes.sequential import Rows, SequentialGoal, SequentialStop, SequentialUnit
from olive_eval.metrics.base import Score


class MeanMetric:
    """A mean of per-example scores said to lie in [0, 1]."""

    example_range = (0.0, 1.0)

    def ratio_rows(self, statistics: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(statistics, dtype=np.float64), np.ones(len(statistics))

    def reduce(self, statistics: np.ndarray) -> Score:
        return Score(float(np.mean(statistics)))


@dataclass
class Named:
    name: str


class Consumer:
    """The candidate's scores so far, as a pass's scorer hands them to the look."""

    def __init__(self, scores: np.ndarray) -> None:
        self.metric, self.scores, self.seen = Named("acc"), scores, 0

    def statistics_so_far(self) -> dict[str, tuple[Any, np.ndarray]]:
        return {"accuracy_score": (MeanMetric(), self.scores[: self.seen])}


def _unit(baseline: np.ndarray, settings: SequentialSettings, value: float = 0.02) -> SequentialUnit:
    rows = Rows(baseline.astype(np.float64), np.ones(len(baseline)), 0.0, 1.0)
    goal = SequentialGoal("acc-accuracy_score", "acc", "accuracy_score", "max-degradation", value, 0.05, True, rows)
    return SequentialUnit(settings, (goal,), {"d": None})


def _drive(stop: SequentialStop, consumer: Consumer, total: int, batch: int) -> int:
    """Batches through the look, as the pass loop does; the examples run."""
    for end in range(batch, total + batch, batch):
        consumer.seen = min(end, total)
        if stop(consumer.seen):
            break
    return consumer.seen


def test_it_looks_at_the_first_batch_end_past_each_chunk_end_and_decides_as_the_sequence_says():
    rng = np.random.default_rng(0)
    n = 4000
    baseline = (rng.random(n) < 0.9).astype(float)
    candidate = (rng.random(n) < 0.97).astype(float)
    settings = SequentialSettings(min_examples=250)
    stop = SequentialStop(_unit(baseline, settings), "d", [Consumer(candidate)], n)
    consumer = stop.consumers[0]
    ran = _drive(stop, consumer, n, batch=64)
    record = stop.record()
    looks = [int(look[0]) for look in record.goals["acc-accuracy_score"].looks]
    assert looks == [min(-(-end // 64) * 64, n) for end in checkpoints(settings, n)][: len(looks)]
    # the margins by hand: max-degradation 0.02, higher is better: c - b + 0.02 in [-0.98, 1.02]
    z = candidate - baseline + 0.02
    lower, _ = mean_confidence_sequence(z[:ran], -0.98, 1.02, 0.05)
    assert record.goals["acc-accuracy_score"].state == "met" and lower[-1] >= 0
    assert record.examples == ran < n and record.stopped == "decided"
    assert record.goals["acc-accuracy_score"].lower == pytest.approx(lower[-1], abs=1e-3)


def test_a_value_outside_the_declared_range_leaves_the_goal_open_and_says_why():
    n = 1000
    baseline = np.full(n, 0.9)
    candidate = np.full(n, 1.5)  # a metric breaking its own example_range
    stop = SequentialStop(_unit(baseline, SequentialSettings(min_examples=100)), "d", [Consumer(candidate)], n)
    assert _drive(stop, stop.consumers[0], n, batch=100) == n
    record = stop.record()
    assert record.goals["acc-accuracy_score"].state == "open" and record.stopped is None
    assert record.full is not None and record.full.startswith("acc-accuracy_score: ")
    assert "outside the stated bounds" in record.full


def test_a_pass_the_plan_runs_in_full_is_never_looked_at():
    n = 500
    unit = _unit(np.ones(n), SequentialSettings(min_examples=10))
    unit = SequentialUnit(unit.settings, unit.goals, {"d": "roc-auroc is a global metric"})
    stop = SequentialStop(unit, "d", [Consumer(np.zeros(n))], n)
    assert _drive(stop, stop.consumers[0], n, batch=50) == n
    record = stop.record()
    assert record.goals == {} and record.full == "roc-auroc is a global metric" and record.examples == n
