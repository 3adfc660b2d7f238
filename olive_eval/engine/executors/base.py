"""The interface every executor implements, and the registry of executor builders.

An executor runs per-model units (:class:`olive_eval.engine.model.unit.ModelUnit`): in this process (``local``), each
in a fresh child process (``process``) or on Ray workers (``ray``). The run hands it units and takes back
:class:`~olive_eval.engine.model.unit.ModelEvaluation` objects; it never knows where they ran.

The contract:

- ``run(unit)`` blocks until the model is done. A model's own failure (a crash, a signal, an out-of-memory kill,
  ``timeout_s`` passed) is *returned* as a failed evaluation (``result.status == "failed"``, ``result.error``
  naming the exit status, the signal or the timeout), never raised: the run goes on with the other models.
- ``run_all(units)`` yields the evaluations as they finish (the order may differ from ``units``: read
  ``evaluation.result`` by the unit's name); ``local`` and ``process`` run one after another.
- ``close()`` releases workers and temporary files; the session calls it when it closes.
- ``concurrent`` says whether ``run_all`` evaluates units at the same time (the run submits a batch together);
  ``node()`` names the machine the run times its models on, beside a model's runtimes that name another.

The settings of each executor type are data, in :mod:`olive_eval.config.executor`. A module of this package
registers the builder of a type with ``executor_builders.decorator("<name>")``: a function
``(config, run, evaluator, output_dir, progress) -> Executor`` (``config``: the type's validated settings;
``run``: the validated :class:`RunConfig`; ``evaluator``: the run's :class:`ModelEvaluator`, holding its plan
and loaded data; ``output_dir``: where the instance files go, None for none; ``progress``: ``(model, message)``
lines). :func:`build_executor` looks it up by the settings' ``type`` and calls it.
A child process or a worker evaluates a unit with :func:`olive_eval.engine.executors.worker.evaluate_unit`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from olive_eval.progress import Progress
from olive_eval.registry import Registry

if TYPE_CHECKING:
    from olive_eval.config.executor import ExecutorConfig
    from olive_eval.config.run import RunConfig
    from olive_eval.engine.model.runner import ModelEvaluator
    from olive_eval.engine.model.unit import ModelEvaluation, ModelUnit


@runtime_checkable
class Executor(Protocol):
    """Where a run's per-model units are evaluated (see the module's contract)."""

    #: True when :meth:`run_all` evaluates units at the same time: the run then submits a batch together.
    concurrent: bool

    def node(self) -> dict[str, str]:
        """The machine the run times its models on, as results.json names it (host name and IP address)."""
        ...

    def run(self, unit: ModelUnit) -> ModelEvaluation:
        """Evaluate one unit; a model's crash or timeout comes back as a failed evaluation."""
        ...

    def run_all(self, units: list[ModelUnit]) -> Iterator[ModelEvaluation]:
        """Evaluate every unit, yielding each evaluation as it finishes."""
        ...

    def close(self) -> None:
        """Release workers and temporary files."""
        ...


#: ``(config, run, evaluator, output_dir, progress) -> Executor``: makes the executor its settings describe.
Builder = Callable[[Any, "RunConfig", "ModelEvaluator", "Path | None", Progress], Executor]

#: Executor builders, by executor type: each module of ``olive_eval.engine.executors`` registers its own.
executor_builders: Registry[Builder] = Registry(
    "executor builder", packages=("olive_eval.engine.executors",), group="olive_eval.executor_builders"
)


def build_executor(
    config: ExecutorConfig, run: RunConfig, evaluator: ModelEvaluator, output_dir: Path | None, progress: Progress
) -> Executor:
    """The executor ``config`` describes, for the run whose evaluator is ``evaluator``."""
    return executor_builders.get(config.type)(config, run, evaluator, output_dir, progress)


def failed_evaluation(unit: ModelUnit, error: str) -> ModelEvaluation:
    """A model that did not come back (its process died, it ran past its timeout): failed, with ``error``."""
    from olive_eval.engine.model.unit import ModelEvaluation
    from olive_eval.records.results import ModelResult

    return ModelEvaluation(ModelResult(status="failed", error=error, folder=unit.folder), {})
