"""Executors run per-model units. The local one runs them in this process on the run's own evaluator (its
plan and loaded data); a process or Ray executor would send the unit (it pickles) and call
:func:`olive_eval.engine.unit.evaluate_model` there, which ends in the same :func:`run_unit`."""

from __future__ import annotations

from typing import Protocol

from olive_eval.engine.runner import ModelEvaluator
from olive_eval.engine.unit import ModelEvaluation, ModelUnit, run_unit


class Executor(Protocol):
    def run(self, unit: ModelUnit) -> ModelEvaluation: ...


class LocalExecutor:
    """Runs each unit here, sharing the run's plan and data store across models."""

    def __init__(self, evaluator: ModelEvaluator) -> None:
        self.evaluator = evaluator

    def run(self, unit: ModelUnit) -> ModelEvaluation:
        return run_unit(self.evaluator, unit)
