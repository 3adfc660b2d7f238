"""Which of a run's values are fidelity (a candidate against the baseline's own outputs) and which score the
model's outputs on their own (accuracy and its kin), so the page can put them side by side: a small accuracy
change can hide many answers that changed both ways.

results.json names no metric types: they are read from the run config it records (``environment.config``), and
each type asked what it measures. A results.json without the config (an older olive-eval's) has no fidelity view.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from olive_eval.records.output_dir import folder_names
from olive_eval.records.results import RunResult
from olive_eval.report.html.data_run import metric_keys, numeric_series

#: Kinds of metric for this view.
FIDELITY, ACCURACY, OTHER = "fidelity", "accuracy", "other"


@dataclass
class FidelityMetric:
    """One fidelity metric of the config: its instance file's name and its sub-types' keys in results.json."""

    name: str
    stem: str
    #: sub-type name (the instance file's score column) -> results.json key
    keys: dict[str, str] = field(default_factory=dict)


@dataclass
class FidelityView:
    metrics: list[FidelityMetric]
    #: keys of the sub-types that score the outputs on their own, with a number on some model
    accuracy_keys: list[str]
    fidelity_keys: list[str]


def _kind(type_name: Any) -> str:
    """What a metric type measures: the baseline's outputs (fidelity), timings and files (other), else outputs."""
    from olive_eval.metrics.types import MODEL_FILES, TIMING, metric_type_registry

    try:
        metric_type = metric_type_registry.get(str(type_name))
    except Exception:  # a plugin's type that is not installed where the page is made: not placed
        return OTHER
    if metric_type.reads_baseline:
        return FIDELITY
    return OTHER if metric_type.work in (TIMING, MODEL_FILES) else ACCURACY


def _config_metrics(result: RunResult) -> list[dict[str, Any]]:
    config = result.environment.get("config")
    if not isinstance(config, dict):
        return []
    evaluator = config.get("evaluator")  # Olive's block holds the metrics where a config has one
    metrics = evaluator.get("metrics") if isinstance(evaluator, dict) else config.get("metrics")
    if not isinstance(metrics, list):
        return []
    return [m for m in metrics if isinstance(m, dict) and isinstance(m.get("name"), str)]


def _owner(key: str, names: list[str]) -> str | None:
    """The metric a results key belongs to (``<metric>-<sub-type>``): the longest name it starts with."""
    owners = [n for n in names if key.startswith(n + "-")]
    return max(owners, key=len) if owners else None


def fidelity_view(result: RunResult, names: list[str]) -> FidelityView | None:
    """The run's fidelity metrics and the values to show beside them; None when it has no fidelity metric (or
    records no config to tell)."""
    metrics = _config_metrics(result)
    kinds = {m["name"]: _kind(m.get("type")) for m in metrics}
    if FIDELITY not in kinds.values():
        return None
    stems = folder_names([m["name"] for m in metrics])  # as the run named the instance files
    keys = metric_keys(result)
    fidelity = []
    for m in metrics:
        if kinds[m["name"]] != FIDELITY:
            continue
        subs = [s.get("name") for s in m.get("sub_types") or [] if isinstance(s, dict)]
        found = {s: f"{m['name']}-{s}" for s in subs if isinstance(s, str) and f"{m['name']}-{s}" in keys}
        fidelity.append(FidelityMetric(m["name"], stems[m["name"]], found))
    numeric = numeric_series(result, names)
    accuracy = [k for k in keys if k in numeric and kinds.get(_owner(k, list(kinds)) or "") == ACCURACY]
    return FidelityView(fidelity, accuracy, [k for m in fidelity for k in m.keys.values()])
