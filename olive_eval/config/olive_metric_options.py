"""What Olive's ``metric_config`` passes through to the metric besides the metric's own keys.

Olive builds each of its ``accuracy`` sub-types as a torchmetrics object from the whole ``metric_config``, its
``kwargs`` merged in (:func:`fold_olive_kwargs`). So a config written for Olive may carry torchmetrics options
that olive-eval has no use for (:func:`drop_no_op_options`): ``Metric``'s ``compute_on_cpu``,
``dist_sync_on_step``, ``sync_on_compute`` and ``compute_with_cache`` say where states live, how processes sync
and whether ``compute()`` is cached, none of which changes a value computed in one process; the classification
classes' ``validate_args: false`` skips torchmetrics' input checks, which olive-eval always runs. Each is
accepted as a boolean and dropped. torchmetrics' other options (``dist_sync_fn``, ``process_group``, ...) are
Python objects that JSON cannot give, and stay unknown keys, as does any of these where Olive's sub-type is not
a torchmetrics class (latency, ...) or its class does not take it (``validate_args`` of ``perplexity``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from olive_eval.config.components import nested_error
from olive_eval.strict_model import shown_json

#: Options of torchmetrics' ``Metric`` base class that are no-ops in one process.
METRIC_OPTIONS = ("compute_on_cpu", "dist_sync_on_step", "sync_on_compute", "compute_with_cache")
#: Olive's ``accuracy`` sub-types computed by a torchmetrics class → whether that class takes ``validate_args``.
TORCHMETRICS_SUB_TYPES = {
    "accuracy_score": True,
    "f1_score": True,
    "precision": True,
    "recall": True,
    "auroc": True,
    "perplexity": False,
    "wer": False,
}


def fold_olive_kwargs(
    raw: dict[str, Any] | None, where: str, takes_kwargs: bool
) -> tuple[dict[str, Any] | None, set[str]]:
    """Olive's ``metric_config.kwargs`` merged into ``metric_config``, and the keys that came from it.

    Olive passes ``kwargs`` on to the metric with the other keys. A key given both ways with different
    values is an error here (Olive lets ``kwargs`` win without a word); a sub-type whose own config has a
    ``kwargs`` key keeps it as it is.
    """
    if raw is None or "kwargs" not in raw or takes_kwargs:
        return raw, set()
    extra = raw["kwargs"]
    if extra is None:
        extra = {}
    if not isinstance(extra, dict):
        raise nested_error(f"{where}.kwargs", f"expected an object, got {shown_json(extra)}")
    merged = {key: value for key, value in raw.items() if key != "kwargs"}
    for key, value in extra.items():
        if key in merged and (type(merged[key]), merged[key]) != (type(value), value):
            raise nested_error(
                f"{where}.kwargs.{key}",
                f"'{key}' is also given as metric_config.{key} with a different value ({shown_json(merged[key])} "
                f"vs {shown_json(value)}); Olive would use the kwargs one silently: give it once",
            )
        merged[key] = value
    return merged, set(extra) - (set(raw) - {"kwargs"})


def no_op_options(is_metric: bool, sub_type: str) -> tuple[str, ...]:
    """The pass-through options a sub-type accepts as no-ops (none outside Olive's torchmetrics sub-types, which
    are registered metrics: ``is_metric``)."""
    if not is_metric or sub_type not in TORCHMETRICS_SUB_TYPES:
        return ()
    return (*METRIC_OPTIONS, *(("validate_args",) if TORCHMETRICS_SUB_TYPES[sub_type] else ()))


def drop_no_op_options(
    config: dict[str, Any] | None, is_metric: bool, sub_type: str, located: Callable[[str], str]
) -> dict[str, Any] | None:
    """``config`` (merged with its ``kwargs``) without the no-op options, each checked to be a boolean;
    ``located`` gives a key's JSON path for the error."""
    options = no_op_options(is_metric, sub_type)
    if not config or not options:
        return config
    for key in options:
        if key in config and not isinstance(config[key], bool):
            raise nested_error(located(key), f"expected true or false, got {shown_json(config[key])}")
    return {key: value for key, value in config.items() if key not in options}
