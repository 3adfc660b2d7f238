"""Remapping the fields a metric reads (Unitxt's MetricPipeline), so one pass serves metrics that read other columns.

A metric reads pass fields by name (``prediction``, ``references``, ...). A metric's or a sub-type's ``fields``
maps such a name to the pass field read in its place: ``{"references": "context"}`` scores the predictions against
the data's ``context`` column, on the same pass as the metric's other sub-types, with no second data config. A
sub-type's ``fields`` go over its metric's. Whether the named column exists is known once the data is prepared:
the plan checks it (:func:`olive_eval.engine.passes.fields.check_reads`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from olive_eval.config.components import nested_error


def merged_fields(metric_fields: Mapping[str, str], sub_fields: Mapping[str, str] | None) -> dict[str, str]:
    """What a sub-type reads in place of each name: its own ``fields`` over its metric's."""
    return {**metric_fields, **(sub_fields or {})}


def remapped(reads: tuple[str, ...], sources: Mapping[str, str]) -> tuple[str, ...]:
    """The pass fields read for ``reads`` (names the metric reads), in the same order."""
    return tuple(sources.get(name, name) for name in reads)


def check_metric_fields(config: Any) -> None:
    """Every remapped name is one its sub-types read, on a metric that scores a pass: else a config error at it.

    ``config`` is a :class:`olive_eval.config.metric.MetricConfig` whose sub-types are resolved."""
    remaps = bool(config.fields) or any(sub.fields for sub in config.sub_types)
    if not remaps:
        return
    if not config.uses_predictions:
        where = (
            "fields"
            if config.fields
            else next(f"sub_types[{j}].fields" for j, s in enumerate(config.sub_types) if s.fields)
        )
        raise nested_error(where, f"{config.type} metrics do not score a prediction pass: there are no fields to remap")
    if config.metric_type.scored_by_user:
        where = next((f"sub_types[{j}].fields" for j, s in enumerate(config.sub_types) if s.fields), None)
        if where is not None:
            raise nested_error(where, "a metric_func scores every sub-type at once: set fields on the metric")
    own = [config.own_reads(sub) for sub in config.sub_types]
    for key, source in config.fields.items():
        _check_source(f"fields.{key}", source)
        if not any(key in reads for reads in own):
            read = sorted({name for reads in own for name in reads})
            raise nested_error(
                f"fields.{key}", f"no sub-type of this metric reads '{key}'; they read: {', '.join(read)}"
            )
    for j, sub in enumerate(config.sub_types):
        for key, source in (sub.fields or {}).items():
            _check_source(f"sub_types[{j}].fields.{key}", source)
            if key not in own[j]:
                raise nested_error(
                    f"sub_types[{j}].fields.{key}",
                    f"sub-type '{sub.name}' does not read '{key}'; it reads: {', '.join(own[j])}",
                )


def _check_source(where: str, source: str) -> None:
    if not source.strip():
        raise nested_error(where, "names no field: give the column to read, e.g. 'context'")


def field_path(config: Any, sub_index: int, field: str) -> str:
    """Where, in the metric's config, the pass field a sub-type reads was named (its remap, or its name)."""
    sub = config.sub_types[sub_index]
    for key, source in (sub.fields or {}).items():
        if source == field:
            return f"sub_types[{sub_index}].fields.{key}"
    for key, source in config.fields.items():
        if source == field and key not in (sub.fields or {}):
            return f"fields.{key}"
    if config.backend == "huggingface_metrics":  # an extra field the sub-type's metric_config names
        parsed = config.parsed_config(sub)
        for key in ("additional_input_fields", "additional_input_fields_one_value"):
            if field in getattr(parsed, key):
                return f"sub_types[{sub_index}].metric_config.{key}[{getattr(parsed, key).index(field)}]"
    return f"sub_types[{sub_index}].name"
