"""The interface every executor implements, and the registry of executor types.

An executor runs per-model units (:class:`olive_eval.engine.unit.ModelUnit`): in this process (``local``), each
in a fresh child process (``process``) or on Ray workers (``ray``). The run hands it units and takes back
:class:`~olive_eval.engine.unit.ModelEvaluation` objects; it never knows where they ran.

The contract:

- ``run(unit)`` blocks until the model is done. A model's own failure (a crash, a signal, an out-of-memory kill,
  ``timeout_s`` passed) is *returned* as a failed evaluation (``result.status == "failed"``, ``result.error``
  naming the exit status, the signal or the timeout), never raised: the run goes on with the other models.
- ``run_all(units)`` yields the evaluations as they finish (the order may differ from ``units``: read
  ``evaluation.result`` by the unit's name); ``local`` and ``process`` run one after another.
- ``close()`` releases workers and temporary files; the session calls it when it closes.
- ``concurrent`` says whether ``run_all`` evaluates units at the same time (the run submits a batch together);
  ``node()`` names the machine the run times its models on, beside a model's runtimes that name another.

A module of this package registers an executor type by decorating its config class, a :class:`ExecutorConfig`
subclass with ``type: Literal["<name>"]``, with ``executor_registry.decorator("<name>")``. The config builds the
executor: ``config.build(run, evaluator, output_dir, progress)`` (``run``: the validated :class:`RunConfig`;
``evaluator``: the run's :class:`ModelEvaluator`, holding its plan and loaded data; ``output_dir``: where the
instance files go, None for none; ``progress``: ``(model, message)`` lines). :func:`build_executor` is that
call. ``timeout_s`` is every executor's key; ``local`` refuses it (it cannot stop the interpreter it runs in).
A child process or a worker evaluates a unit with :func:`olive_eval.engine.executors.worker.evaluate_unit`.
The ``ray`` type (``executors/ray_executor.py``) takes ``address``, ``num_workers``, ``resources_per_model``.
This module stays light: the run config imports it to validate the ``executor`` key.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from olive_eval.progress import Progress
from olive_eval.registry import Registry
from olive_eval.strict_model import StrictModel

if TYPE_CHECKING:
    from olive_eval.config.run import RunConfig
    from olive_eval.engine.runner import ModelEvaluator
    from olive_eval.engine.unit import ModelEvaluation, ModelUnit


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


class ExecutorConfig(StrictModel):
    """The keys every executor type takes; a registered subclass adds its own and a ``type`` literal."""

    type: str
    timeout_s: float | None = Field(
        None,
        gt=0,
        description="Seconds one model may take before its process or worker is ended and the model recorded as "
        "failed (process and ray only).",
    )
    shards: int = Field(
        1,
        ge=1,
        description="Each prediction pass of a model split into this many contiguous ranges of its data, scored "
        "apart (in as many child processes with 'process', Ray tasks with 'ray') and merged: the values are those of "
        "one pass.",
    )

    @model_serializer(mode="wrap")
    def _with_type(self, handler: SerializerFunctionWrapHandler) -> Any:
        """The type always written, even where it is the class's default: a dump without it (results.json's
        recorded config is dumped with ``exclude_defaults``) would read back as the ``local`` executor."""
        data = handler(self)
        return {"type": self.type, **data} if isinstance(data, dict) else data

    def build(self, run: RunConfig, evaluator: ModelEvaluator, output_dir: Path | None, progress: Progress) -> Executor:
        raise NotImplementedError(f"executor type '{self.type}' does not build an executor")


#: Executor types: each module of ``olive_eval.engine.executors`` registers its config class.
executor_registry: Registry[type[ExecutorConfig]] = Registry(
    "executor type", packages=("olive_eval.engine.executors",), base=ExecutorConfig
)

DEFAULT_EXECUTOR = "local"


def build_executor(
    config: ExecutorConfig, run: RunConfig, evaluator: ModelEvaluator, output_dir: Path | None, progress: Progress
) -> Executor:
    """The executor ``config`` describes, for the run whose evaluator is ``evaluator``."""
    return config.build(run, evaluator, output_dir, progress)


def executor_config(value: Any) -> ExecutorConfig:
    """``"process"``, ``{"type": "process", ...}`` or a config, validated by its registered type's model."""
    if isinstance(value, ExecutorConfig):
        return value
    if isinstance(value, str):
        value = {"type": value}
    if not isinstance(value, dict):
        raise ValueError(f"an executor is a type name or an object with a 'type', not {type(value).__name__}")
    name = value.get("type", DEFAULT_EXECUTOR)
    if not isinstance(name, str) or name not in executor_registry.names():
        raise ValueError(f"unknown executor type {name!r}; executor types: {', '.join(executor_registry.names())}")
    return executor_registry.get(name).model_validate({**value, "type": name})


def failed_evaluation(unit: ModelUnit, error: str) -> ModelEvaluation:
    """A model that did not come back (its process died, it ran past its timeout): failed, with ``error``."""
    from olive_eval.engine.unit import ModelEvaluation
    from olive_eval.records.results import ModelResult

    return ModelEvaluation(ModelResult(status="failed", error=error, folder=unit.folder), {})
