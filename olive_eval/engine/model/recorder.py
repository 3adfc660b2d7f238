"""The one way a kind of work records a value: metric and sub-type, score and evidence in, a sub-type result out.

A model's prediction passes (one process or shards), its file sizes, user functions, lm-eval tasks and the timing
phase all hand what they measured to the model's :class:`Recorder`, so every value is made alike: an undefined
or non-finite score is recorded as undefined, a confidence interval is computed from the evidence, and the
evidence is kept (by joint key) for the paired goals checked after all models ran.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from olive_eval.config.metric import MetricConfig, SubType
from olive_eval.config.metric_set import joint_key
from olive_eval.engine.model.evidence import Evidence
from olive_eval.engine.model.guard import failure_message, format_traceback, scoring_error
from olive_eval.engine.passes.pass_loop import PassRecord
from olive_eval.engine.passes.scored import Scored
from olive_eval.errors import EvaluationError
from olive_eval.metrics import Score
from olive_eval.records.results import ConfidenceInterval, ModelResult, SubMetricResult
from olive_eval.records.sequential import SequentialPass


@dataclass
class Recorder:
    """One model's results and evidence, as its work records them (``folder``: its per-example files' folder)."""

    model_name: str
    result: ModelResult
    #: joint key -> what the value rests on, for intervals and paired goals
    evidence: dict[str, Evidence] = field(default_factory=dict)
    folder: str | None = None

    @property
    def records_folder(self) -> str:
        """The folder of the model's per-example files (its name where the run gave none)."""
        return self.folder or self.model_name

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Add the wall time of the block to ``stage_seconds[name]``."""
        start = time.perf_counter()
        try:
            yield
        finally:
            seconds = self.result.stage_seconds.get(name, 0.0) + time.perf_counter() - start
            self.result.stage_seconds[name] = round(seconds, 6)

    def record(
        self, metric: MetricConfig, sub: SubType, score: Score, evidence: Evidence | None = None
    ) -> SubMetricResult:
        """The sub-type's value (undefined where the score is), with its interval where the config asks one."""
        key = joint_key(metric, sub)
        undefined = score.undefined
        if undefined is None and not np.isfinite(score.value):
            undefined = f"the value is {score.value}"
        result = SubMetricResult(
            value=None if undefined is not None else float(score.value),
            priority=sub.priority,
            higher_is_better=sub.higher_is_better,
            unit=metric.metric_type.unit_of(sub.name),
            per_class=None if score.per_class is None else [v if np.isfinite(v) else None for v in score.per_class],
            aggregation=sub.aggregation,
            undefined=undefined,
            details=score.details,
        )
        ci = sub.confidence_interval
        if ci is not None and evidence is not None and result.value is not None:
            try:
                result.ci_low, result.ci_high = evidence.interval(
                    result.value, ci.method, ci.n_resamples, ci.level, ci.seed
                )
            except ValueError as exc:
                raise EvaluationError(f"metric '{key}': cannot compute a confidence interval: {exc}") from exc
            result.confidence_interval = ConfidenceInterval(ci.method, ci.n_resamples, ci.level, ci.seed)
        if evidence is not None:
            self.evidence[key] = evidence
        self.result.metrics[key] = result
        return result

    def fail(self, sub_types: list[tuple[MetricConfig, SubType]], exc: Exception) -> None:
        """Record ``exc`` on every sub-type of the unit that has no value yet."""
        message = failure_message(exc)
        self.result.tracebacks.append(format_traceback(exc))
        for metric, sub in sub_types:
            key = joint_key(metric, sub)
            if key not in self.result.metrics:
                self.result.metrics[key] = SubMetricResult(
                    value=None,
                    priority=sub.priority,
                    higher_is_better=sub.higher_is_better,
                    unit=metric.metric_type.unit_of(sub.name),
                    error=message,
                )

    def fail_metric(self, metric: MetricConfig, exc: Exception) -> None:
        """Every sub-type of ``metric`` without a value fails with ``exc``."""
        self.fail([(metric, sub) for sub in metric.sub_types], exc)

    def record_scored(self, metric: MetricConfig, scored: list[Scored]) -> None:
        """A finished metric's sub-types: each its value, or its own error (that sub-type alone fails)."""
        for item in scored:
            if item.error is not None:
                self.fail([(metric, item.sub)], scoring_error(metric, item.error))
                continue
            self.record(metric, item.sub, item.score, item.evidence)

    def record_sequential(self, data_config: str, record: SequentialPass) -> None:
        """A sequential run's pass: the examples it used and each goal's decision."""
        self.result.sequential[data_config] = record

    def record_pass(self, data_config: str, record: PassRecord) -> None:
        """What a prediction pass measured besides the metrics: its summary and its notes as warnings."""
        self.result.passes[data_config] = record.summary()
        self.result.warnings.extend(f"{count} {note} on '{data_config}'" for note, count in record.notes.items())
