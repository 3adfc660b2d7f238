"""Olive's metric types as registered objects: accuracy, size_on_disk and custom here, latency and throughput in
:mod:`olive_eval.metrics.timing_types`.

Each type says which sub-types it has, their default direction, how to read their metric_config,
and which registered kind of work measures it (:mod:`olive_eval.engine.work`: a prediction pass, timing rounds,
the model's files, a user function). The planner and the scorer ask these objects; nothing branches on type or
sub-type names.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel

from olive_eval.metrics.base import Score
from olive_eval.metrics.registry import metric_registry
from olive_eval.registry import Registry
from olive_eval.strict_model import closest

#: The built-in kinds of work a type can name (each registered in :mod:`olive_eval.engine.work`; a plugin's type
#: may name its own). Config validation asks only whether a metric scores a prediction pass or is timed.
PREDICTION_PASS = "prediction_pass"
TIMING = "timing"
MODEL_FILES = "model_files"
USER_FUNCTION = "user_function"


class MetricOptions(Protocol):
    """A metric-level ``metric_config`` model (lm-eval's tasks and options): validated, its paths resolved."""

    @classmethod
    def model_validate(cls, obj: Any) -> Any: ...

    @staticmethod
    def resolve_paths(raw: dict[str, Any], base: Path) -> dict[str, Any]: ...


class ModelFiles(Protocol):
    """A model config, as far as the size on disk reads it."""

    def no_files_reason(self) -> str | None: ...

    def files(self) -> list[Path]: ...


class MetricType:
    name: ClassVar[str]
    #: The registered kind of work that measures the type's metrics (see :meth:`work_of`).
    work: ClassVar[str]
    unit: ClassVar[str | None] = None
    #: Whether values can be bootstrapped (per-example statistics or repeated timings exist).
    resamplable: ClassVar[bool] = False
    #: The metric-level ``metric_config`` the type takes (None: it takes none; sub-types have their own).
    options: ClassVar[type[MetricOptions] | None] = None
    #: False when sub-types and their directions are known only once the run is planned (lm-eval's tasks say).
    sub_types_known_at_load: ClassVar[bool] = True
    #: What a type that brings its own data (lm-eval's tasks) says to a metric-level data option it cannot honour.
    own_data: ClassVar[str | None] = None

    #: Whether the sub-types are registered metrics (the ``torch_metrics`` / ``huggingface_metrics`` backends,
    #: aggregations and per-example reductions apply to them).
    sub_types_are_metrics: ClassVar[bool] = False
    #: Whether a user function (``user_config.metric_func``) scores the pass, not the sub-types' metrics.
    scored_by_user: ClassVar[bool] = False

    #: Whether the sub-types compare each model's outputs with the baseline's (the baseline's pass keeps them).
    reads_baseline: ClassVar[bool] = False

    def build_metric(self, sub_type: str, raw: dict[str, Any] | None, aggregation: str | None) -> Any:
        """The metric object that scores ``sub_type`` with its metric_config ``raw``, for a type whose sub-types
        are its own (None: the registered metric of that name, or the type's :meth:`evidence_metric`)."""
        return None

    def reads_of(self, sub_type: str, raw: dict[str, Any] | None) -> tuple[str, ...] | None:
        """The pass fields ``sub_type`` reads, for a type that decides them (None: the registered metric's)."""
        return None

    def work_of(self, config: Any) -> str:
        """The kind of work that measures metric ``config`` of this type (a type may choose by the config)."""
        return self.work

    def config_problem(self, config: Any) -> tuple[str, str] | None:
        """A problem of metric ``config`` as a whole that only the type knows: (JSON path below the metric, message)."""
        return None

    def reads_data(self, config: Any) -> bool:
        """Whether metric ``config`` runs the model over its data config (which then must hold real data)."""
        return self.work_of(config) == PREDICTION_PASS

    def sub_type_names(self) -> list[str] | None:
        """The valid sub-type names, or None when any name is allowed."""
        raise NotImplementedError

    def default_higher_is_better(self, sub_type: str) -> bool | None:
        raise NotImplementedError

    def can_resample(self, sub_type: str) -> bool:
        """Whether the sub-type's value rests on data a bootstrap can resample."""
        return self.resamplable

    def unit_of(self, sub_type: str) -> str | None:
        return self.unit

    def is_scalar(self, sub_type: str) -> bool:
        """False for a sub-type whose value is a structure (a curve, a matrix): it cannot be ranked."""
        return True

    def config_keys(self, sub_type: str) -> set[str]:
        """The keys a sub-type's metric_config takes (none by default)."""
        return set()

    def parse_metric_config(self, sub_type: str, raw: dict[str, Any] | None) -> Any:
        """Validate a sub-type's metric_config; raises ValueError / pydantic.ValidationError."""
        if raw:
            raise ValueError(f"{self.name} sub-types take no metric_config")
        return None

    def evidence_metric(self) -> Any:
        """The metric object its per-example evidence is restored with (from the results cache), when the type's
        sub-types are not registered metrics; None for the others."""
        return None

    def check_sub_type(self, sub_type: str) -> None:
        names = self.sub_type_names()
        if names is not None and sub_type not in names:
            guess = closest(sub_type, names)
            hint = f"did you mean '{guess}'? " if guess else ""
            raise ValueError(f"unknown {self.name} sub-type '{sub_type}'; {hint}valid: {', '.join(names)}")


def _adopt(name: str, cls: type[MetricType], origin: str) -> None:
    """A metric type from another package's entry point (group ``olive_eval.metric_types``): its class, named
    ``name``, registered as the one instance the planner and the scorer ask."""
    cls.name = name
    metric_type_registry.register(name, cls(), origin=origin)


#: Olive's metric types, lm-eval's (registered by the lm-eval package, beside its options), and plugins'.
metric_type_registry: Registry[MetricType] = Registry(
    "metric type",
    packages=(
        "olive_eval.metrics.types",
        "olive_eval.metrics.timing_types",
        "olive_eval.metrics.fidelity.fidelity_type",
        "olive_eval.lm_eval.metric_type",
    ),
    group="olive_eval.metric_types",
    base=MetricType,
    adopt=_adopt,
)


def model_keys(model: type[BaseModel]) -> set[str]:
    """The keys a config model takes, by field name and by alias."""
    return {key for name, field in model.model_fields.items() for key in (name, field.alias) if key}


def register_metric_type(cls: type[MetricType]) -> type[MetricType]:
    """Register a built-in metric type (a :class:`MetricType` subclass) as its one instance, under its name."""
    metric_type_registry.register(cls.name, cls())
    return cls


@register_metric_type
class AccuracyType(MetricType):
    """Sub-types are the registered metrics; they score the model's predictions on a data config."""

    name = "accuracy"
    work = PREDICTION_PASS
    resamplable = True
    sub_types_are_metrics = True

    def sub_type_names(self) -> list[str]:
        return metric_registry.names()

    def check_sub_type(self, sub_type: str) -> None:
        if sub_type not in metric_registry:  # a built-in name imports its module alone; listing imports them all
            super().check_sub_type(sub_type)
        metric_registry.get(sub_type)  # a plugin's metric loads here: a bad entry point is this sub-type's error

    def default_higher_is_better(self, sub_type: str) -> bool:
        return metric_registry.get(sub_type).higher_is_better

    def config_keys(self, sub_type: str) -> set[str]:
        return model_keys(metric_registry.get(sub_type).Config)

    def parse_metric_config(self, sub_type: str, raw: dict[str, Any] | None) -> Any:
        return metric_registry.get(sub_type).Config.model_validate(raw or {})

    def is_scalar(self, sub_type: str) -> bool:
        return metric_registry.get(sub_type).scalar


@register_metric_type
class SizeOnDiskType(MetricType):
    """Bytes of the model's files, external data included."""

    name = "size_on_disk"
    work = MODEL_FILES
    unit = "bytes"

    def score_model(self, model: ModelFiles) -> Score:
        """Total bytes of the model's files (a directory counts every file below it); undefined, with the
        model's reason, when it has no files."""
        reason = model.no_files_reason()
        if reason is not None:
            return Score(math.nan, undefined=reason)
        total = 0
        for path in model.files():
            if path.is_dir():
                total += sum(os.path.getsize(p) for p in path.rglob("*") if p.is_file())
            else:
                total += os.path.getsize(path)
        return Score(float(total))

    def sub_type_names(self) -> list[str]:
        return ["bytes"]

    def default_higher_is_better(self, sub_type: str) -> bool:
        return False


@register_metric_type
class CustomType(MetricType):
    """A user function: ``evaluate_func`` (runs the model itself) or ``metric_func`` (scores predictions)."""

    name = "custom"
    work = USER_FUNCTION
    scored_by_user = True

    def work_of(self, config: Any) -> str:
        """``evaluate_func`` runs the model itself; ``metric_func`` scores a prediction pass."""
        return USER_FUNCTION if config.user_config.evaluate_func is not None else PREDICTION_PASS

    def config_problem(self, config: Any) -> tuple[str, str] | None:
        user = config.user_config
        if user.evaluate_func is None and user.metric_func is None:
            return "user_config", "a custom metric needs user_config.evaluate_func or metric_func"
        return None

    def sub_type_names(self) -> None:
        return None

    def default_higher_is_better(self, sub_type: str) -> None:
        return None

    def parse_metric_config(self, sub_type: str, raw: dict[str, Any] | None) -> Any:
        if raw:
            raise ValueError("custom sub-types take no metric_config; pass arguments in user_config.*_func_kwargs")
        return None
