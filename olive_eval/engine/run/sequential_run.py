"""A sequential run's state in the run: the plan's scope, each candidate's unit, decisions, ``finish: best``."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TypeVar

from olive_eval.config.metric import MetricConfig
from olive_eval.config.run import RunConfig
from olive_eval.data.sources import Source
from olive_eval.engine.model.evidence import Evidence
from olive_eval.engine.model.unit import ModelEvaluation
from olive_eval.engine.passes.sequential import SequentialUnit
from olive_eval.engine.run.sequential_plan import plan_scope, scope_lines, sequential_unit
from olive_eval.engine.work.prediction_pass import PredictionPass
from olive_eval.errors import ConfigError
from olive_eval.progress import Progress
from olive_eval.records.results import ModelResult, RunResult
from olive_eval.records.sequential import SequentialPass
from olive_eval.runtimes.base import ModelConfig

C = TypeVar("C")


@dataclass
class SequentialRun:
    """What the run keeps for ``sequential``: per data config, why its pass runs in full (None: it may stop)."""

    config: RunConfig
    scope: dict[str, str | None]

    @classmethod
    def of(cls, run: RunConfig, jobs: list[PredictionPass], cache: C) -> tuple[SequentialRun | None, C | None]:
        """The plan's scope over its prediction passes, and the result cache the run may use: none in a
        sequential run, whose values rest on the examples each candidate used (None without ``sequential``)."""
        if run.sequential is None:
            return None, cache
        passes: dict[str, list[MetricConfig]] = {}
        for job in jobs:
            passes.setdefault(job.data_config, []).extend(job.metrics)
        return cls(run, plan_scope(run, passes)), None

    @property
    def lines(self) -> dict[str, str]:
        """The plan's line per data config (results.json's ``sequential``, and a progress line)."""
        return scope_lines(self.config, self.scope)

    def open(self, sources: dict[str, Source], progress: Progress) -> None:
        """Once the data is loaded: ``min_examples`` within each stopping pass's data (read to count its rows where
        its files do not say: a sequential run holds the data in memory anyway); the plan's lines said."""
        assert self.config.sequential is not None
        wanted = self.config.sequential.min_examples
        for name, reason in self.scope.items():
            source = sources[name]
            total = source.num_rows
            if total is None:
                total = sum(chunk.num_rows for chunk in source.chunks())
            if reason is None and wanted > total:
                raise ConfigError(
                    f"min_examples {wanted} is more than the {total} examples of data config '{name}'",
                    path="sequential.min_examples",
                    source=self.config.source,
                )
        for name, line in self.lines.items():
            progress("plan", f"sequential: '{name}' {line}")

    def unit(self, results: RunResult, evidence: dict[str, dict[str, Evidence]], name: str) -> SequentialUnit:
        """Candidate ``name``'s unit: its goals against the baseline; racing, the candidates evaluated before."""
        base = results.baseline
        rivals = {
            other: evidence.get(other, {})
            for other, model in results.models.items()
            if other not in (base, name) and model.evaluated and model.goals_met
        }
        return sequential_unit(self.config, self.scope, evidence.get(base, {}), rivals)

    def to_finish(
        self, results: RunResult, candidates: list[ModelConfig]
    ) -> tuple[ModelConfig, dict[str, SequentialPass]] | None:
        """``finish: best``: the best candidate when it stopped early on some pass, and its sequential record
        as it will read once the candidate is evaluated again on all the data (``finished``)."""
        assert self.config.sequential is not None
        best = results.best
        if self.config.sequential.finish != "best" or best is None:
            return None
        record = results.models[best].sequential
        model = next((m for m in candidates if m.display_name() == best), None)
        if model is None or not any(p.examples < p.total for p in record.values()):
            return None
        return model, {name: replace(p, finished=True) for name, p in record.items()}


def open_sequential(sequential: SequentialRun | None, sources: dict[str, Source], progress: Progress) -> None:
    """:meth:`SequentialRun.open` where the run is sequential."""
    if sequential is not None:
        sequential.open(sources, progress)


def finished(
    fresh: ModelEvaluation, first: ModelResult, evidence: dict[str, Evidence], record: dict[str, SequentialPass]
) -> ModelEvaluation:
    """The best candidate's evaluation on all the data (``finish: best``), keeping what its first evaluation had
    besides the passes (the timing rounds a session ran beside the baseline) and the record of the examples its
    decisions needed."""
    result = fresh.result
    measured = {**first.metrics, **result.metrics}
    result.metrics = {key: measured[key] for key in dict.fromkeys([*first.metrics, *result.metrics])}
    result.timings = {**first.timings, **result.timings}
    result.sequential = record
    kept = {key: value for key, value in evidence.items() if key not in fresh.evidence}
    return ModelEvaluation(result, {**kept, **fresh.evidence}, fresh.records)
