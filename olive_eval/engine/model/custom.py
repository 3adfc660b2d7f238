"""Calling a user's evaluate_func / metric_func and checking what comes back (a NaN: that sub-type undefined)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from olive_eval.config.metric import MetricConfig
from olive_eval.errors import EvaluationError
from olive_eval.metrics import Score
from olive_eval.user_module import call_user, load_function


class ModelOutput(NamedTuple):
    """What ``metric_func`` receives, as in Olive: ``model_output[0]`` preds, ``model_output[1]`` logits."""

    preds: np.ndarray
    logits: np.ndarray


def user_function(metric: MetricConfig, which: str) -> tuple[str, Callable[..., Any]]:
    uc = metric.user_config
    name = getattr(uc, which)
    assert name is not None and uc.user_script is not None  # checked when the config loaded
    return name, load_function(uc.user_script, name, uc.script_dir)


def call_user_function(
    metric: MetricConfig, model_name: str, which: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> dict[str, Score]:
    """Run ``evaluate_func`` or ``metric_func`` and return ``{sub-type name: score}``.

    A NaN is that sub-type undefined, with the reason (a correlation of a constant prediction has no value), as a
    built-in metric's; the other sub-types keep their values. The user's ``kwargs`` travel as a dict, never mixed
    with our own parameters, so any key name works.
    """
    name, func = user_function(metric, which)
    returned = call_user(func, f"custom metric '{metric.name}' on model '{model_name}': {which} '{name}'", args, kwargs)
    values = _values(metric, model_name, f"{which} '{name}'", returned)
    return {
        n: Score(v, undefined=f"{which} '{name}' returned NaN for '{n}'" if math.isnan(v) else None)
        for n, v in values.items()
    }


def _number(value: Any) -> float | None:
    if isinstance(value, (np.ndarray, np.generic)) and np.ndim(value) == 0:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    return float(value)


def _values(metric: MetricConfig, model_name: str, func: str, returned: Any) -> dict[str, float]:
    names = [sub.name for sub in metric.sub_types]
    where = f"custom metric '{metric.name}' on model '{model_name}': {func}"
    number = _number(returned)
    if number is not None:
        if len(names) != 1:
            raise EvaluationError(f"{where} returned one number but the metric has sub-types {names}; return a dict")
        values = {names[0]: number}
    elif isinstance(returned, dict):
        missing = [n for n in names if n not in returned]
        if missing:
            raise EvaluationError(f"{where} returned keys {sorted(map(str, returned))} without sub-type '{missing[0]}'")
        unknown = sorted(str(k) for k in returned if k not in names)
        if unknown:
            raise EvaluationError(
                f"{where} returned keys that are not sub-types of the metric: {', '.join(unknown)}; "
                f"sub-types: {', '.join(names)}"
            )
        values = {}
        for n in names:
            v = _number(returned[n])
            if v is None:
                raise EvaluationError(
                    f"{where} returned {type(returned[n]).__name__} {returned[n]!r} for '{n}'; expected a number"
                )
            values[n] = v
    else:
        shown = repr(returned)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise EvaluationError(
            f"{where} returned {type(returned).__name__} {shown}; expected a number or a dict keyed by sub-type name"
        )
    non_finite = [f"'{n}' = {v}" for n, v in values.items() if math.isinf(v)]  # NaN: undefined, not an error
    if non_finite:
        raise EvaluationError(f"{where} returned a non-finite value: {', '.join(non_finite)}")
    return values
