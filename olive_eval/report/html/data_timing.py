"""Pure extraction of the timed runs (results.json ``timings``) as distributions per model, metric and
generation quantity, with what is missing said per model. No HTML, no figures."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from olive_eval.records.results import RunResult, TimedRuns

#: Most run values the page carries over every timing chart (SVG points: more slow the browser down): past it
#: each round keeps every k-th run (the percentiles are still of every run). 50k values are about 0.4 MB of JSON.
MAX_POINTS = 50_000


@dataclass
class Distribution:
    """One model's runs: values per round (every ``stride``-th run kept), percentiles over every run."""

    model: str
    rounds: list[list[float]]
    p50: float
    p90: float
    runs: int
    stride: int = 1


@dataclass
class TimingView:
    """One distribution chart: a timing metric's per-call times, or one generation quantity of it."""

    metric: str
    quantity: str | None
    unit: str
    batch_size: int | None
    distributions: list[Distribution] = field(default_factory=list)
    #: Models without runs here, with why (failed, not timed, an older results.json).
    missing: dict[str, str] = field(default_factory=dict)

    @property
    def title(self) -> str:
        return f"{self.metric}: {self.quantity}" if self.quantity else self.metric


def _rounds(timed: TimedRuns, quantity: str | None) -> tuple[list[list[float]], str]:
    """The rounds of one view in its unit: ms, or a rate (count per second) for a counted quantity."""
    if quantity is None:
        return timed.rounds, timed.unit
    rounds = timed.quantities[quantity]
    count = timed.counts.get(quantity)
    if count is None:
        return rounds, timed.unit
    return [[count * 1000.0 / v if v > 0 else math.inf for v in r] for r in rounds], "tokens/s"


def _why_missing(result: RunResult, name: str) -> str:
    model = result.models[name]
    if model.status == "failed":
        return f"failed: {model.error or 'no reason recorded'}"
    if model.unfinished:
        return f"not finished ({model.status})"
    if model.early_stopped:
        return f"stopped early by {model.early_stopped}: not timed"
    if not model.timings:
        return "no timed runs recorded (not timed, a failed timing run, or a results.json from before they were kept)"
    return "not timed on this metric"


def timing_views(result: RunResult, names: list[str], max_points: int = MAX_POINTS) -> list[TimingView]:
    """Every timing metric and generation quantity any model recorded, each model's runs or why it has none."""
    views: dict[tuple[str, str | None], TimingView] = {}
    for name in names:
        for metric, timed in result.models[name].timings.items():
            for quantity in (None, *timed.quantities):
                rounds, unit = _rounds(timed, quantity)
                batch = None if quantity else timed.batch_size
                view = views.setdefault((metric, quantity), TimingView(metric, quantity, unit, batch))
                values = np.array([v for r in rounds for v in r], dtype=np.float64)
                values = values[np.isfinite(values)]
                if not len(values):
                    view.missing[name] = "no finite timed runs"
                    continue
                p50, p90 = np.percentile(values, [50.0, 90.0])
                view.distributions.append(Distribution(name, rounds, float(p50), float(p90), len(values)))
    for view in views.values():
        present = {d.model for d in view.distributions}
        view.missing.update({n: _why_missing(result, n) for n in names if n not in present and n not in view.missing})
    total = sum(d.runs for v in views.values() for d in v.distributions)
    stride = max(1, math.ceil(total / max_points))
    if stride > 1:
        for view in views.values():
            for d in view.distributions:
                d.rounds, d.stride = [r[::stride] for r in d.rounds], stride
    return list(views.values())


def timing_keys_without_runs(result: RunResult) -> list[str]:
    """Timing sub-types with a value but no recorded runs on that model (an older results.json, a cached value)."""
    out = []
    for name, model in result.models.items():
        for key, sub in model.metrics.items():
            if sub.timing is not None and sub.measured and not model.timings:
                out.append(f"{name}: {key}")
    return out
