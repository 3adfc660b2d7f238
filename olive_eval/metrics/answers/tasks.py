"""Olive's vision task check: a metric's answer sub-types must suit the data config's ``task``.

Olive (``_validate_vision_task_metric``) reads the task from ``pre_process_data_config.params["task"]`` and, when it
is set, refuses an unknown vision task and a sub-type the task does not allow, with the messages below. Which
tasks a metric suits is the metric's own ``vision_tasks`` (a registered metric declares it), so a new answer metric
joins the check by declaring its tasks; nothing here lists metric names.

Olive: vision-vqa -> exact_match; vision-chart-qa -> relaxed_accuracy; vision-ocr -> word_sort_ratio. Here
vqa_accuracy joins vision-vqa and anls joins vision-ocr. Olive also refuses a metric that mixes vision and other
sub-types (its vision inference path differs); here one pass feeds every metric, so a vision metric may also hold,
e.g., ``samples_per_second``, which no task check concerns.
"""

from __future__ import annotations

from collections.abc import Sequence

from olive_eval.metrics.registry import metric_registry

__all__ = ["check_vision_task", "vision_task_metrics"]


def _tasks_of(name: str) -> tuple[str, ...]:
    if name not in metric_registry:
        return ()
    return tuple(getattr(metric_registry.get(name), "vision_tasks", ()))


def vision_task_metrics() -> dict[str, list[str]]:
    """Each vision task -> the registered metrics that suit it (sorted), from the metrics' ``vision_tasks``."""
    out: dict[str, list[str]] = {}
    for name in metric_registry.names():
        for task in _tasks_of(name):
            out.setdefault(task, []).append(name)
    return dict(sorted(out.items()))


def check_vision_task(sub_types: Sequence[str], task: str | None) -> None:
    """ValueError with Olive's message when a vision sub-type does not suit ``task`` (no task: no check)."""
    vision = [name for name in sub_types if _tasks_of(name)]
    if task is None or not vision:
        return
    allowed = vision_task_metrics()
    if task not in allowed:
        raise ValueError(f"Unknown vision task type '{task}'. Supported task types: {list(allowed)}.")
    for name in vision:
        if name not in allowed[task]:
            raise ValueError(
                f"Metric sub-type '{name}' is not compatible with task type '{task}'. "
                f"Allowed metrics for '{task}': {allowed[task]}."
            )
