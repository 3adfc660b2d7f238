"""What a kind of work is: it plans units of work from the metrics that name it, and each unit measures its
metrics' sub-types and records their values through the model's :class:`~olive_eval.engine.model.recorder.Recorder`.

Most kinds run per model, inside :class:`~olive_eval.engine.model.runner.ModelEvaluator`, on the model's loaded
runtimes (:class:`ModelUnit`); the timing kind's units are measured by the run's timing phase instead, in rounds
that interleave the models, so they are plain :class:`WorkUnit` values the phase reads.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, TypeVar

from olive_eval.config.metric import MetricConfig, SubType
from olive_eval.config.run import RunConfig
from olive_eval.engine.model.recorder import Recorder
from olive_eval.engine.model.runtime_settings import Settings, settings_key
from olive_eval.engine.passes.baseline_outputs import BaselineLink
from olive_eval.engine.passes.sequential import SequentialUnit
from olive_eval.engine.run.context import RunContext
from olive_eval.engine.run.data_store import DataStore
from olive_eval.judges.base import Judges
from olive_eval.progress import Progress
from olive_eval.records.writer import InstanceWriter
from olive_eval.registry import Registry
from olive_eval.runtimes.base import ModelConfig, Runtime

if TYPE_CHECKING:
    from olive_eval.engine.passes.shards import Sharding


@dataclass
class WorkUnit:
    """One piece of a run's work: the metrics it measures, under the runtime settings it needs."""

    metrics: list[MetricConfig]
    settings: Settings
    #: the data config the unit reads, if any
    data_config: str | None = None

    def measures(self) -> list[tuple[MetricConfig, SubType]]:
        """The (metric, sub-type) pairs whose values the unit records."""
        return [(m, s) for m in self.metrics for s in m.sub_types]


@dataclass
class UnitContext:
    """What a unit runs with for one model: the model, its loaded runtimes and the run's services."""

    run: RunConfig
    context: RunContext
    model: ModelConfig
    recorder: Recorder
    runtimes: Mapping[str, Runtime]
    data: DataStore
    progress: Progress
    writer: InstanceWriter | None
    base_dir: Path | None
    #: how the executor splits each prediction pass (None: one pass in this process)
    sharding: Sharding | None
    #: the run's judges, by spec key (loaded on first use, closed with the run)
    judges: Judges | None = None
    #: where the baseline keeps its outputs, for metrics that compare with them (fidelity)
    baseline: BaselineLink | None = None
    #: data config -> examples its last pass went over, shared by the model evaluations of one evaluator
    examples_seen: dict[str, int] = field(default_factory=dict)
    #: a sequential run's candidate: its goals, decided chunk by chunk (None: every pass runs in full)
    sequential: SequentialUnit | None = None

    def runtime(self, settings: Settings) -> Runtime:
        """The model loaded with ``settings`` (every distinct settings of the plan is loaded before units run)."""
        return self.runtimes[settings_key(settings)]

    def note(self, text: str) -> None:
        """A progress line for the model being evaluated."""
        self.progress(self.recorder.model_name, text)


@dataclass
class ModelUnit(WorkUnit, ABC):
    """A unit run once per model by the model's evaluator."""

    #: Whether the unit runs the model: its settings are then loaded before the model's units run.
    loads_model: ClassVar[bool] = True

    @abstractmethod
    def run(self, ctx: UnitContext) -> None:
        """Measure the unit's sub-types on ``ctx.model`` and record each through ``ctx.recorder``; an exception
        fails the unit's metrics (the others keep their values)."""

    def restricted(self, names: Sequence[str]) -> ModelUnit | None:
        """The unit measuring only the metrics ``names`` (an early-stop stage), or None when it has none of them."""
        kept = [m for m in self.metrics if m.name in names]
        if not kept:
            return None
        if len(kept) == len(self.metrics):
            return self
        return self.narrowed(kept)

    def narrowed(self, metrics: list[MetricConfig]) -> ModelUnit:
        """The same unit over a subset of its metrics (a unit whose metrics share one run measures all of them)."""
        return self


class WorkKind(ABC):
    """A registered kind of work, named by the metric types it measures (:attr:`MetricType.work`)."""

    name: ClassVar[str]
    #: Where a model's units of this kind run among the others: prediction passes first (every model loads
    #: once), then the cheaper per-model work.
    order: ClassVar[int] = 100

    @abstractmethod
    def plan(self, run: RunConfig, metrics: list[MetricConfig]) -> list[WorkUnit]:
        """The units measuring ``metrics`` (those of the run naming this kind, in config order); a config the
        kind cannot measure is a ConfigError here, before any model loads."""


def _adopt(name: str, cls: type[WorkKind], origin: str) -> None:
    """A kind of work from another package's entry point (group ``olive_eval.work``): its class, named ``name``."""
    cls.name = name
    work_registry.register(name, cls(), origin=origin)


#: Kinds of work by name; built-in ones in this package and lm-eval's beside the engine.
work_registry: Registry[WorkKind] = Registry(
    "kind of work",
    packages=("olive_eval.engine.work", "olive_eval.lm_eval_run.work"),
    group="olive_eval.work",
    base=WorkKind,
    adopt=_adopt,
)

K = TypeVar("K", bound=type[WorkKind])


def register_work(cls: K) -> K:
    """Register a kind of work (a :class:`WorkKind` subclass) under its ``name``."""
    work_registry.register(cls.name, cls())
    return cls
