"""One model's evaluation as a self-contained unit of work, the thing an executor runs.

:class:`ModelUnit` names the model (its config, which pickles) and its folder. :func:`run_unit` evaluates
the unit's per-model work (prediction passes, file sizes, user functions) on an evaluator that holds the
run's plan and data: the local executor calls it in this process with the run's own evaluator, and a child
process or another machine builds that evaluator from the config first (importing its user scripts, so their
metrics and components are registered where it runs). The
result pickles (function metrics by their registered name). Latency is not part of it: timing is only
comparable on one machine, so the interleaved timing rounds stay with the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from olive_eval.engine.model.evidence import Evidence
from olive_eval.engine.model.runner import ModelEvaluator
from olive_eval.engine.passes.baseline_outputs import BaselineLink
from olive_eval.engine.passes.sequential import SequentialUnit
from olive_eval.engine.run.goals import goal_check, stopping_goal
from olive_eval.records.results import ModelResult
from olive_eval.records.sequential import decisions
from olive_eval.runtimes.base import ModelConfig

if TYPE_CHECKING:
    from olive_eval.engine.passes.shards import Sharding


@dataclass
class ModelEvaluation:
    """What a unit returns: the model's results and, by joint key, what each value rests on."""

    result: ModelResult
    evidence: dict[str, Evidence]
    #: The per-example files the evaluation wrote, as :mod:`olive_eval.engine.cache.record_files` names them: filled
    #: when the evaluation goes into the result cache or comes out of it, so a cached model gets its files too.
    records: dict[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelUnit:
    """One model to evaluate and its folder under ``instances/`` and ``samples/``."""

    model: ModelConfig
    folder: str | None = None
    #: The per-model metrics' names, measured stage by stage (None: all at once).
    stages: tuple[tuple[str, ...], ...] | None = None
    #: With early stop: the baseline's results (and evidence) the candidate's goals are checked against.
    baseline: ModelResult | None = None
    baseline_evidence: dict[str, Evidence] = field(default_factory=dict)
    #: Where the baseline keeps its outputs, for metrics that compare with them (fidelity); None without such.
    baseline_outputs: BaselineLink | None = None
    #: In a sequential run, a candidate's goals decided chunk by chunk (None: its passes run in full).
    sequential: SequentialUnit | None = None

    @property
    def name(self) -> str:
        return self.model.display_name()


def run_unit(evaluator: ModelEvaluator, unit: ModelUnit, sharding: Sharding | None = None) -> ModelEvaluation:
    """The per-model work of ``unit`` on an evaluator holding the run's plan and data; each prediction pass in
    ``sharding``'s shards (the executor's choice), else in one go."""
    stop = None
    if unit.baseline is not None:
        baseline, run = unit.baseline, evaluator.run

        def stop(result: ModelResult) -> str | None:
            evidence = evaluator.evidence.get(unit.name, {})
            check = goal_check(run, unit.baseline_evidence, evidence, decisions(result.sequential))
            return stopping_goal(run, baseline, unit.name, result, check)

    result = evaluator.evaluate(
        unit.model, unit.folder, unit.stages, stop, sharding, unit.baseline_outputs, unit.sequential
    )
    return ModelEvaluation(result, evaluator.evidence[unit.name])
