"""The result objects that results.json serializes, and the atomic write."""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

RESULTS_FILE = "results.json"


@dataclass
class GoalResult:
    type: str
    value: float
    threshold: float | None  # None when a relative goal has no baseline value to resolve against
    met: bool
    missed_by: float | None = None
    # Filled for goals with a ``confidence`` (paired bootstrap against the baseline):
    confidence: float | None = None
    change: float | None = None  # candidate - baseline
    change_ci_low: float | None = None  # two-sided interval of the change at ``confidence``
    change_ci_high: float | None = None
    probability: float | None = None  # share of resamples in which the goal holds
    margin: float | None = None  # how far the candidate is past the threshold (negative: short of it)
    margin_bound: float | None = None  # the margin's lower bound at ``confidence``; met iff >= 0


@dataclass
class ConfidenceInterval:
    method: str
    n_resamples: int
    level: float
    seed: int


@dataclass
class SubMetricResult:
    value: float
    priority: int
    higher_is_better: bool | None  # None only for an unranked custom sub-type that does not say
    goal: GoalResult | None = None
    unit: str | None = None
    per_class: list[float] | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    confidence_interval: ConfidenceInterval | None = None
    aggregation: str | None = None


@dataclass
class ModelResult:
    status: Literal["ok", "failed", "pending"]
    error: str | None = None
    metrics: dict[str, SubMetricResult] = field(default_factory=dict)
    goals_met: bool = False
    pareto: bool = False
    runtime: dict[str, Any] = field(default_factory=dict)
    seconds: float | None = None
    #: Wall seconds per stage: "load", "inference:<data config>", "scoring:<data config>", "timing:<data config>".
    stage_seconds: dict[str, float] = field(default_factory=dict)


@dataclass
class RunResult:
    baseline: str
    models: dict[str, ModelResult]
    ranking: list[str] = field(default_factory=list)
    best: str | None = None
    objectives: list[str] = field(default_factory=list)
    output_dir: str | None = None

    @property
    def failed(self) -> list[str]:
        return [name for name, m in self.models.items() if m.status == "failed"]

    def to_dict(self) -> dict[str, Any]:
        return _finite(asdict(self))

    def write(self, output_dir: Path) -> Path:
        """Write results.json atomically: a reader never sees a half-written file."""
        output_dir.mkdir(parents=True, exist_ok=True)
        target = output_dir / RESULTS_FILE
        return atomic_write_text(target, json.dumps(self.to_dict(), indent=2) + "\n")


def atomic_write_text(target: Path, text: str) -> Path:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: write them as strings so strict parsers still read the file."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value
