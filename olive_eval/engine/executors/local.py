"""The ``local`` executor: each unit in this process, on the run's own evaluator (its plan and loaded data)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import model_validator

from olive_eval.config.components import nested_error
from olive_eval.engine.executors.base import ExecutorConfig, executor_registry
from olive_eval.progress import Progress

if TYPE_CHECKING:
    from olive_eval.config.run import RunConfig
    from olive_eval.engine.runner import ModelEvaluator
    from olive_eval.engine.unit import ModelEvaluation, ModelUnit


class LocalExecutor:
    """Runs each unit here, sharing the run's plan and data store across models."""

    concurrent = False

    def __init__(self, evaluator: ModelEvaluator, shards: int = 1) -> None:
        self.evaluator = evaluator
        #: each prediction pass in this many shards, one after another in this process
        self.shards = shards

    def run(self, unit: ModelUnit) -> ModelEvaluation:
        from olive_eval.engine.shards import Sharding
        from olive_eval.engine.unit import run_unit

        return run_unit(self.evaluator, unit, Sharding(self.shards) if self.shards > 1 else None)

    def run_all(self, units: list[ModelUnit]) -> Iterator[ModelEvaluation]:
        for unit in units:
            yield self.run(unit)

    def close(self) -> None:
        pass

    def node(self) -> dict[str, str]:
        from olive_eval.engine.executors.node import node_info

        return node_info()


@executor_registry.decorator("local")
class LocalConfig(ExecutorConfig):
    """In this process, one model after another (the default)."""

    type: Literal["local"] = "local"

    @model_validator(mode="after")
    def _no_timeout(self) -> LocalConfig:
        if self.timeout_s is not None:
            raise nested_error(
                "timeout_s",
                "the local executor cannot stop a model that hangs; use the 'process' or 'ray' executor for a timeout",
            )
        return self

    def build(
        self, run: RunConfig, evaluator: ModelEvaluator, output_dir: Path | None, progress: Progress
    ) -> LocalExecutor:
        return LocalExecutor(evaluator, self.shards)
