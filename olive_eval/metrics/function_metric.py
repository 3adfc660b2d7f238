"""Metrics written as plain functions, wrapped into :class:`Metric` classes by ``@register_metric``.

* instance:   ``fn(prediction, reference, **metric_config) -> float``, called once per example;
* map_reduce: ``fn(prediction, reference, **metric_config) -> sequence of numbers`` (additive statistics),
              with ``reduce(totals, **metric_config) -> float`` over their column sums;
* global:     ``fn(predictions, references, **metric_config) -> float`` over the whole set, or
              ``(float, per_example)``: one number per example too, written to the instance file for error
              analysis (unless the metric config sets ``process_single_instances: false``).

The function's keyword parameters after the first two become the metric's ``metric_config`` schema,
so unknown keys are rejected as for built-ins. Returns are checked: a non-number names the example it came
from. ``prediction_type`` and ``single_reference_per_prediction`` check every example's inputs first
(:mod:`olive_eval.metrics.prediction_type`). A NaN is an undefined value (a correlation of a constant prediction), as a built-in's: the sub-type has
no value and says why (the example, for a per-example NaN), and the metric's other sub-types keep theirs.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from pydantic import create_model

from olive_eval.errors import EvaluationError
from olive_eval.metrics.base import Kind, Metric, Score, metric_registry
from olive_eval.metrics.prediction_type import InputChecks, parse_prediction_type
from olive_eval.strict_model import StrictModel


def config_model(name: str, func: Callable[..., Any], skip: int) -> type[StrictModel]:
    """A strict pydantic model of ``func``'s parameters after the first ``skip`` positional ones."""
    fields: dict[str, Any] = {}
    for param in list(inspect.signature(func).parameters.values())[skip:]:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = Any if param.annotation is inspect.Parameter.empty else param.annotation
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, default)
    return create_model(f"{name}_config", __base__=StrictModel, **fields)


def _python(value: Any) -> Any:
    """Numpy scalars and 0-d arrays become Python values; arrays stay arrays."""
    if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0):
        return value.item()
    return value


def _check_number(metric: str, value: Any, where: str | Callable[[], str]) -> float:
    """The value as a float (NaN passes: it is undefined, not wrong); a non-number names where it came from.
    ``where`` may be a function, called only then: describing an example whose prediction is an embedding (its
    repr) cost more than the metric itself."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        shown = where if isinstance(where, str) else where()
        raise EvaluationError(
            f"metric '{metric}' returned {type(value).__name__} {value!r} for {shown}; expected a number"
        )
    return float(value)


def _score(metric: str, value: float, where: str) -> Score:
    """A value of the metric, undefined (with the reason) where the function returned NaN."""
    return Score(value, undefined=f"metric '{metric}' returned NaN for {where}" if math.isnan(value) else None)


def _undefined_example(metric: str, statistics: np.ndarray) -> Score | None:
    """The metric undefined when an example's statistics hold a NaN its function returned (the first named)."""
    rows = np.asarray(statistics, dtype=np.float64).reshape(len(statistics), -1)
    nan = np.flatnonzero(np.isnan(rows).any(axis=1))
    if nan.size == 0:
        return None
    return Score(math.nan, undefined=f"metric '{metric}' returned NaN for instance {int(nan[0])}")


def _per_example(metric: str, values: Any, n: int) -> np.ndarray:
    """A global function's per-example values as ``[n]`` floats; anything else is a one-line error."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise EvaluationError(
            f"metric '{metric}' returned per-example values that are not numbers: {type(values).__name__}"
        ) from None
    if array.shape != (n,):
        raise EvaluationError(
            f"metric '{metric}' returned per-example values of shape {list(array.shape)} for {n} examples; "
            f"expected [{n}]"
        )
    return array


def _describe(index: int, prediction: Any, reference: Any) -> str:
    shown = f"prediction={_python(prediction)!r}, reference={_python(reference)!r}"
    return f"instance {index} ({shown if len(shown) <= 120 else shown[:117] + '...'})"


class _FunctionMetric(Metric):
    func: ClassVar[Callable[..., Any]]
    reduce_func: ClassVar[Callable[..., Any] | None] = None
    input_checks: ClassVar[InputChecks | None] = None  # prediction_type, single_reference_per_prediction

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled by name: the class is made at registration, so a process that unpickles the metric
        (an evaluation unit run elsewhere) rebuilds it from its registry, user scripts re-imported there."""
        return _rebuild, (self.name, self.config.model_dump(), self.aggregation if self.kind is Kind.INSTANCE else None)

    def _kwargs(self) -> dict[str, Any]:
        return self.config.model_dump()

    def _checked(self, fields: tuple[Any, ...]) -> tuple[Any, ...]:
        checks = type(self).input_checks
        return fields if checks is None else checks.apply(self.name, self.reads, fields)

    def statistics(self, *fields: Any) -> np.ndarray:
        lengths = {len(f) for f in fields}
        if len(lengths) > 1:
            shown = ", ".join(f"{len(f)} {name}" for name, f in zip(self.reads, fields, strict=True))
            raise EvaluationError(f"metric '{self.name}': fields of different lengths: {shown}")
        fields = self._checked(fields)
        kwargs, rows = self._kwargs(), []
        for i, values_i in enumerate(zip(*fields, strict=True)):
            row = [_python(v) for v in values_i]
            value = type(self).func(*row, **kwargs)
            where = functools.partial(_describe, i, *values_i[:2]) if len(values_i) >= 2 else f"instance {i}"
            if self.kind is Kind.INSTANCE:
                rows.append(_check_number(self.name, _python(value), where))
            else:
                values = np.atleast_1d(np.asarray(value, dtype=object))
                rows.append([_check_number(self.name, _python(v), where) for v in values])
        if self.kind is Kind.MAP_REDUCE and len({len(row) for row in rows}) > 1:
            raise EvaluationError(f"metric '{self.name}': statistics differ in length between examples")
        return np.asarray(rows, dtype=np.float64)

    def reduce(self, statistics: np.ndarray) -> Score:
        undefined = _undefined_example(self.name, statistics) if len(statistics) else None
        if undefined is not None:
            return undefined
        if self.kind is Kind.INSTANCE:
            return super().reduce(statistics)
        totals = np.asarray(statistics, dtype=np.float64).sum(axis=0)
        reduce_func = type(self).reduce_func
        assert reduce_func is not None
        value = _check_number(self.name, _python(reduce_func(totals, **self._kwargs())), "the reduced totals")
        return _score(self.name, value, "the reduced totals")

    def compute(self, *fields: Any) -> Score:
        if self.kind is not Kind.GLOBAL:
            return super().compute(*fields)
        return self.compute_with_instances(*fields)[0]

    def compute_with_instances(self, *fields: Any) -> tuple[Score, np.ndarray | None]:
        """A global function's value, with its per-example values when it returns ``(value, per_example)``."""
        if self.kind is not Kind.GLOBAL:
            return super().compute_with_instances(*fields)
        value, per_example = type(self).func(*self._checked(fields), **self._kwargs()), None
        if isinstance(value, tuple) and len(value) == 2:
            value, per_example = value[0], _per_example(self.name, value[1], len(fields[0]) if fields else 0)
        score = _score(self.name, _check_number(self.name, _python(value), "the whole set"), "the whole set")
        return score, per_example


def metric_from_function(
    func: Callable[..., Any],
    *,
    name: str,
    higher_is_better: bool,
    kind: Kind,
    aggregation: str = "mean",
    reads: tuple[str, ...] = ("prediction", "references"),
    reduce: Callable[..., Any] | None = None,
    requires: tuple[str, ...] = (),
    extra: str | None = None,
    output_type: str | None = None,
    prediction_type: Any = None,
    single_reference_per_prediction: bool = False,
) -> type[Metric]:
    if kind is Kind.MAP_REDUCE and reduce is None:
        raise ValueError(f"map_reduce metric '{name}' needs reduce=, a function of the summed statistics")
    if kind is not Kind.MAP_REDUCE and reduce is not None:
        raise ValueError(f"reduce= only applies to map_reduce metrics; '{name}' is {kind.value}")
    checks = None
    if prediction_type is not None or single_reference_per_prediction:
        wanted = None if prediction_type is None else parse_prediction_type(prediction_type, name)
        checks = InputChecks(wanted, bool(single_reference_per_prediction))
    attrs = {
        "name": name,
        "higher_is_better": higher_is_better,
        "kind": kind,
        "aggregation": aggregation,
        "reads": tuple(reads),
        "requires": requires,
        "extra": extra,
        "output_type": output_type,
        "Config": config_model(name, func, skip=len(reads)),
        "func": staticmethod(func),
        "gives_instance_values": kind is Kind.GLOBAL,
        "reduce_func": None if reduce is None else staticmethod(reduce),
        "input_checks": checks,
        "__doc__": func.__doc__,
        "__module__": func.__module__,
    }
    return type(f"{name}_metric", (_FunctionMetric,), attrs)


def _rebuild(name: str, config: dict[str, Any], aggregation: str | None) -> Metric:
    return metric_registry.get(name).from_config(config, aggregation)
