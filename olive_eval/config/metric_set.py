"""A run's metrics taken together: their output keys, and the checks no single metric config can make.

Each check takes the run's metrics and the key they sit under (``metrics`` or ``evaluator.metrics``), so its
one-line error points at the config entry at fault. :class:`olive_eval.config.run.RunConfig` calls them when it
validates.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from olive_eval.config.components import nested_error
from olive_eval.config.data import DataConfig
from olive_eval.config.metric import MetricConfig, SubType
from olive_eval.config.metric_key import MetricKey
from olive_eval.runtimes.base import check_name
from olive_eval.tasks.base import check_task_metrics


def joint_key(metric: MetricConfig, sub: SubType) -> str:
    """The sub-type's output label (:class:`MetricKey`'s ``label``): for results and output, never split."""
    return MetricKey(metric.name, sub.score_key).label


def check_metric_names(metrics: Sequence[MetricConfig], metrics_key: str) -> None:
    """Every metric name is a valid name, used once."""
    names: set[str] = set()
    for i, metric in enumerate(metrics):
        try:
            check_name(metric.name)
        except ValueError as exc:
            raise nested_error(f"{metrics_key}[{i}].name", str(exc)) from None
        if metric.name in names:
            raise nested_error(f"{metrics_key}[{i}].name", f"metric name '{metric.name}' is used twice")
        names.add(metric.name)


def check_data_configs(data_configs: Sequence[DataConfig], metrics: Sequence[MetricConfig], metrics_key: str) -> None:
    """Data config names are unique, and each metric names one that is defined and suits it; a metric that
    needs data and names none gets the run's one dataset (in place)."""
    defined: list[str] = []
    for i, dc in enumerate(data_configs):
        if dc.name in defined:
            raise nested_error(f"data_configs[{i}].name", f"data config name '{dc.name}' is used twice")
        defined.append(dc.name)
    datasets = [dc.name for dc in data_configs if not dc.is_dummy]
    for i, metric in enumerate(metrics):
        where = f"{metrics_key}[{i}].data_config"
        if metric.data_config is not None:
            if metric.data_config not in defined:
                listed = ", ".join(defined) if defined else "none are defined (add a 'data_configs' list)"
                raise nested_error(where, f"data config '{metric.data_config}' is not defined; defined: {listed}")
            if metric.reads_data and metric.data_config not in datasets:
                raise nested_error(
                    where, f"'{metric.data_config}' holds dummy inputs; {metric.type} needs labelled data"
                )
        elif metric.reads_data:
            if len(datasets) != 1:
                listed = ", ".join(datasets) if datasets else "none"
                raise nested_error(
                    where, f"{metric.type} metric '{metric.name}' needs a data_config; datasets defined: {listed}"
                )
            metric.data_config = datasets[0]
        elif metric.timed and len(datasets) == 1:
            # Olive times dummy inputs from the model's static shapes; the one dataset there is works for
            # models with dynamic shapes too, and is what the user measures the model on.
            metric.data_config = datasets[0]
        if (
            metric.metric_type.sub_types_are_metrics
            and metric.backend == "torch_metrics"
            and metric.data_config in defined
        ):
            # Olive's vision task check: the sub-types a task restricts must suit the pre-process's task
            data_config = next(dc for dc in data_configs if dc.name == metric.data_config)
            task = getattr(data_config.pre_process_data_config, "task", None)
            try:
                check_task_metrics(task, [sub.name for sub in metric.sub_types])
            except ValueError as exc:
                raise nested_error(f"{metrics_key}[{i}].sub_types", str(exc)) from None


def check_shared_seeds(metrics: Sequence[MetricConfig], metrics_key: str) -> None:
    """Metrics that share a pass (one data config, one runtime settings) and ask for repeats give one
    ``repeat_seed``: the pass generates one set of samples, so two seeds cannot both hold."""
    first: dict[tuple[str | None, str], int] = {}
    for i, metric in enumerate(metrics):
        if metric.repeats is None or not metric.uses_predictions:
            continue
        settings = json.dumps(metric.user_config.settings_override() or {}, sort_keys=True, default=str)
        j = first.setdefault((metric.data_config, settings), i)
        other = metrics[j]
        if other.repeat_seed != metric.repeat_seed:
            raise nested_error(
                f"{metrics_key}[{i}].repeat_seed",
                f"metric '{metric.name}' (repeat_seed {metric.repeat_seed}) shares the pass over data config "
                f"'{metric.data_config}' with metric '{other.name}' at {metrics_key}[{j}].repeat_seed (repeat_seed "
                f"{other.repeat_seed}): one pass generates one set of samples; give them one repeat_seed",
            )


def check_priorities(metrics: Sequence[MetricConfig], metrics_key: str) -> None:
    """Ranked priorities are exactly 1..n across every metric; a run's only sub-type is ranked first (in place)."""
    subs = [(metric, sub) for metric in metrics for sub in metric.sub_types]
    ranked = [(m, s) for m, s in subs if s.priority != -1]
    if not ranked:
        if not subs:  # lm_eval metrics measuring every value their tasks report: nothing is ranked
            return
        if len(subs) == 1:
            subs[0][1].priority = 1
            return
        first = next(i for i, metric in enumerate(metrics) if metric.sub_types)
        names = ", ".join(joint_key(m, s) for m, s in subs)
        raise nested_error(
            f"{metrics_key}[{first}].sub_types[0].priority",
            f"none of the {len(subs)} sub-types ({names}) has a priority; with more than one, rank at least one: "
            '"priority": 1 for the most important (then 2, 3... for others you rank; -1 or none: measured, '
            "not ranked)",
        )
    by_priority: dict[int, list[str]] = {}
    for metric, sub in ranked:
        by_priority.setdefault(sub.priority, []).append(joint_key(metric, sub))
    expected = set(range(1, len(ranked) + 1))
    problems = []
    for priority, keys in sorted(by_priority.items()):
        if len(keys) > 1:
            problems.append(f"{' and '.join(keys)} share priority {priority}")
        elif priority not in expected:
            problems.append(f"{keys[0]} has priority {priority}")
    missing = sorted(expected - set(by_priority))
    if missing:
        problems.append(f"missing {', '.join(map(str, missing))}")
    if problems:
        raise nested_error(
            metrics_key,
            f"ranked priorities must be exactly 1..{len(ranked)} across all metrics (-1 = not ranked): "
            + "; ".join(problems),
        )


def check_early_stop(early_stop: bool, order: list[str] | None, metrics: Sequence[MetricConfig]) -> None:
    """``early_stop`` stops on a ranked goal; ``order`` names each metric once, timing metrics last (they
    are measured in rounds beside the baseline, after the others)."""
    ranked_goal = any(sub.goal is not None for metric in metrics for sub in metric.sub_types if sub.priority > 0)
    if early_stop and not ranked_goal:
        raise nested_error(
            "early_stop", "early_stop needs a ranked goal to stop on: give a sub-type with a priority a goal"
        )
    names = [metric.name for metric in metrics]
    timed = {m.name for m in metrics if m.timed}
    seen_timing: str | None = None
    for i, name in enumerate(order or []):
        if name not in names:
            raise nested_error(f"order[{i}]", f"no metric '{name}'; metrics: {', '.join(names)}")
        if name in (order or [])[:i]:
            raise nested_error(f"order[{i}]", f"metric '{name}' is listed twice")
        if name in timed:
            seen_timing = seen_timing or name
        elif seen_timing is not None:
            raise nested_error(
                f"order[{i}]",
                f"'{name}' cannot come after '{seen_timing}': latency and throughput are measured after the "
                "other metrics, in rounds beside the baseline",
            )


def check_score(score: str | None, metrics: Sequence[MetricConfig]) -> None:
    """The run's ``score`` names one numeric sub-type of the run's metrics (``"metric-sub_type"``)."""
    if score is None:
        return
    subs = {joint_key(metric, sub): (metric, sub) for metric in metrics for sub in metric.sub_types}
    if score not in subs:
        shown = ", ".join(subs) or "none (every value of the lm_eval metrics is measured, none named)"
        raise nested_error("score", f"no sub-type '{score}' in this run; sub-types: {shown}")
    metric, sub = subs[score]
    if metric.backend != "huggingface_metrics" and not metric.metric_type.is_scalar(sub.name):
        raise nested_error("score", f"sub-type '{score}' is a structured value (a curve or a matrix), not a number")
