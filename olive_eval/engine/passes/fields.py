"""The field contract between a prediction pass and its metrics: what a pass gives, and the check, made when the
run is planned, that every field a metric reads is given.

A pass gives :data:`PASS_FIELDS` always, ``references`` where the data config has a label column, and every
column its pre-process leaves (metadata such as ``audio_seconds``). A metric declares what it reads
(``Metric.reads``; :meth:`MetricConfig.reads` for any sub-type, after the metric's ``fields`` remap). What a runtime adds to a model's outputs
(``Runtime.emits``) is the post-process's to read, checked in :func:`olive_eval.engine.run.preflight.check_outputs`: it
reaches metrics only through ``prediction`` and ``logits``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from olive_eval.config.metric_fields import field_path
from olive_eval.config.run import RunConfig
from olive_eval.errors import ConfigError
from olive_eval.metrics.fidelity.measures import BASELINE

#: What every pass gives: ``prediction`` (the post-processed output, after the metric's filters), ``logits`` (the
#: raw output it came from), ``inference_seconds`` (the example's share of its batch's model call plus
#: post-processing), ``model_seconds`` (of the model call alone) and ``batch_index`` (its batch: warm-up batches
#: are told apart by it).
PASS_FIELDS = ("prediction", "logits", "inference_seconds", "model_seconds", "batch_index")
#: The pass fields that time each example: a pass builds them only when one of its consumers reads one.
TIMING_FIELDS = frozenset({"inference_seconds", "model_seconds", "batch_index"})
#: The prefix of a model's named outputs as pass fields (``output.last_hidden_state``), for the fidelity measures.
OUTPUT = "output."


def pass_fields(columns: Iterable[str], references: str | None) -> list[str]:
    """The fields of a pass over pre-processed data with these ``columns`` and label column ``references``."""
    fields = [*PASS_FIELDS, *columns, *(["references"] if references is not None else [])]
    return sorted(set(fields))


def row_columns(fields: Iterable[str]) -> list[str]:
    """The data's own columns among a pass's fields: not the pass's fields, the model's named outputs, the
    baseline's, nor ``references`` (the label column is there by its own name)."""
    return [
        name
        for name in fields
        if name not in PASS_FIELDS and name != "references" and not name.startswith((OUTPUT, BASELINE))
    ]


def example_rows(fields: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each example's row, ``{column: value}`` over :func:`row_columns` (numpy scalars as Python values), for the
    filters that take the documents as lm-eval's do."""
    columns = {name: fields[name] for name in row_columns(fields)}
    n = len(fields["prediction"])
    return [{name: _plain(column[i]) for name, column in columns.items()} for i in range(n)]


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def is_model_output(name: str) -> bool:
    """A named output of the model (``output.<name>``, or the baseline's): known only once the model answers."""
    return name.removeprefix(BASELINE).startswith(OUTPUT)


def check_reads(run: RunConfig, data_config: str, available: list[str]) -> None:
    """Every sub-type scored on a pass over ``data_config`` reads only ``available`` fields: else a config error
    at that sub-type, before any model loads."""
    prefix = "evaluator.metrics" if run.evaluator else "metrics"
    for i, metric in enumerate(run.all_metrics):
        if not metric.uses_predictions or metric.data_config != data_config:
            continue
        for j, sub in enumerate(metric.sub_types):
            given = {*available, *(BASELINE + name for name in available)}
            missing = [name for name in metric.reads(sub) if name not in given and not is_model_output(name)]
            if not missing:
                continue
            raise ConfigError(
                f"{metric.type} sub-type '{sub.name}' reads {', '.join(missing)}, which data config '{data_config}' "
                f"does not give; it gives: {', '.join(available)}",
                path=f"{prefix}[{i}].{field_path(metric, j, missing[0])}",
            )
