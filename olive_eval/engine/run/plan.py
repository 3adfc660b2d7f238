"""Planning: the run's units of work, the same for every model, from the registered kinds of work.

Each metric's type names the kind of work that measures it (:attr:`MetricType.work`); each kind plans its
metrics into units (a prediction pass shared by the metrics of one data config and runtime settings, a timing
run, a user function...). Nothing here knows a kind by name: a new kind is a new registered module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from olive_eval.config.metric import MetricConfig
from olive_eval.config.run import RunConfig
from olive_eval.engine.model.runtime_settings import Settings, settings_key
from olive_eval.engine.run.judges import PlannedJudge, plan_judges
from olive_eval.engine.run.preflight import check_device
from olive_eval.engine.work.base import ModelUnit, WorkUnit, work_registry

U = TypeVar("U", bound=WorkUnit)


@dataclass
class Plan:
    units: list[WorkUnit] = field(default_factory=list)
    #: the judges the metrics name, by spec key (checked here, loaded by the engine: :mod:`olive_eval.engine.run.judges`)
    judges: dict[str, PlannedJudge] = field(default_factory=dict)

    def model_units(self) -> list[ModelUnit]:
        """The units each model's evaluator runs, in the kinds' order."""
        return [unit for unit in self.units if isinstance(unit, ModelUnit)]

    def units_of(self, cls: type[U]) -> list[U]:
        """The units of one type (the timing phase's timing runs; the prediction passes the run checks)."""
        return [unit for unit in self.units if isinstance(unit, cls)]

    def data_configs(self) -> list[str]:
        """The data configs the plan reads, in plan order."""
        return list(dict.fromkeys(unit.data_config for unit in self.units if unit.data_config))

    def settings_variants(self) -> list[tuple[Settings, list[str]]]:
        """Distinct runtime settings the per-model work needs (one loaded model each), with the metrics using
        each. Timing runs are not among them: the timing phase loads the models itself."""
        seen: dict[str, tuple[Settings, list[str]]] = {}
        for unit in self.model_units():
            if not unit.loads_model:
                continue
            names = seen.setdefault(settings_key(unit.settings), (unit.settings, []))[1]
            names.extend(m.name for m in unit.metrics if m.name not in names)
        return list(seen.values())


def make_plan(run: RunConfig) -> Plan:
    """The run's work for every model. A device no model can run on, or work a kind cannot do with the models
    and data given, is a config error here, before any loads."""
    check_device(run)
    by_kind: dict[str, list[MetricConfig]] = {}
    for metric in run.all_metrics:
        by_kind.setdefault(metric.work, []).append(metric)
    kinds = sorted((work_registry.get(name) for name in by_kind), key=lambda kind: kind.order)
    return Plan([unit for kind in kinds for unit in kind.plan(run, by_kind[kind.name])], plan_judges(run))
