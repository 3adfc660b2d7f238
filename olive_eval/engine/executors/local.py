"""The ``local`` executor: each unit in this process, on the run's own evaluator (its plan and loaded data)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from olive_eval.engine.executors.base import Progress, executor_builders

if TYPE_CHECKING:
    from olive_eval.config.executor import LocalConfig
    from olive_eval.config.run import RunConfig
    from olive_eval.engine.runner import ModelEvaluator
    from olive_eval.engine.unit import ModelEvaluation, ModelUnit


class LocalExecutor:
    """Runs each unit here, sharing the run's plan and data store across models."""

    def __init__(self, evaluator: ModelEvaluator) -> None:
        self.evaluator = evaluator

    def run(self, unit: ModelUnit) -> ModelEvaluation:
        from olive_eval.engine.unit import run_unit

        return run_unit(self.evaluator, unit)

    def run_all(self, units: list[ModelUnit]) -> Iterator[ModelEvaluation]:
        for unit in units:
            yield self.run(unit)

    def close(self) -> None:
        pass


@executor_builders.decorator("local")
def build_local(
    config: LocalConfig, run: RunConfig, evaluator: ModelEvaluator, output_dir: Path | None, progress: Progress
) -> LocalExecutor:
    """The run's own evaluator, its shards scored one after another in this process."""
    evaluator.shards = config.shards  # one after another, in this process
    return LocalExecutor(evaluator)
