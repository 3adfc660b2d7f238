"""The ``local`` executor: each unit in this process, on the run's own evaluator (its plan and loaded data)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from olive_eval.engine.executors.base import executor_builders
from olive_eval.progress import Progress

if TYPE_CHECKING:
    from olive_eval.config.executor import LocalConfig
    from olive_eval.config.run import RunConfig
    from olive_eval.engine.model.runner import ModelEvaluator
    from olive_eval.engine.model.unit import ModelEvaluation, ModelUnit


class LocalExecutor:
    """Runs each unit here, sharing the run's plan and data store across models."""

    concurrent = False

    def __init__(self, evaluator: ModelEvaluator, shards: int = 1) -> None:
        self.evaluator = evaluator
        #: each prediction pass in this many shards, one after another in this process
        self.shards = shards

    def run(self, unit: ModelUnit) -> ModelEvaluation:
        from olive_eval.engine.model.unit import run_unit
        from olive_eval.engine.passes.shards import Sharding

        return run_unit(self.evaluator, unit, Sharding(self.shards) if self.shards > 1 else None)

    def run_all(self, units: list[ModelUnit]) -> Iterator[ModelEvaluation]:
        for unit in units:
            yield self.run(unit)

    def close(self) -> None:
        pass

    def node(self) -> dict[str, str]:
        from olive_eval.engine.executors.node import node_info

        return node_info()


@executor_builders.decorator("local")
def build_local(
    config: LocalConfig, run: RunConfig, evaluator: ModelEvaluator, output_dir: Path | None, progress: Progress
) -> LocalExecutor:
    """The run's own evaluator, its shards scored one after another in this process."""
    return LocalExecutor(evaluator, config.shards)
