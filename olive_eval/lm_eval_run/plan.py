"""Planning lm_eval metrics: one lm-eval run per set of options, its tasks loaded and every sub-type resolved
before any model loads.

Metrics whose ``metric_config`` differs only in ``tasks`` (and that share runtime settings) share one lm-eval run
over the union of their tasks: each model answers each request once. A sub-type the tasks do not produce, a task
whose data is not local, or a model type that cannot serve the tasks' requests is a config error here, with the
JSON path; an lm_eval metric without sub-types measures everything its tasks report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from olive_eval.config.metric import MetricConfig, SubType
from olive_eval.errors import ConfigError, MissingDependencyError
from olive_eval.lm_eval.adapters import check_serves, requests_needed
from olive_eval.lm_eval.names import Produced, resolve
from olive_eval.lm_eval.options import LmEvalOptions
from olive_eval.lm_eval.serving import requests_of
from olive_eval.lm_eval.tasks import LoadedTasks, TaskProblem, load_tasks


@dataclass
class LmEvalRun:
    """One lm-eval run per model: the metrics it scores, their options with every task, and what planning found."""

    options: LmEvalOptions
    settings: dict[str, Any] | None
    metrics: list[MetricConfig] = field(default_factory=list)
    tasks: LoadedTasks | None = None
    #: (metric name, sub-type name) -> the lm-eval value it reads
    resolved: dict[tuple[str, str], Produced] = field(default_factory=dict)

    def add(self, metric: MetricConfig) -> None:
        self.metrics.append(metric)
        own = metric.lm_eval_options()
        self.options.tasks = list(dict.fromkeys([*self.options.tasks, *own.tasks]))

    def needed_requests(self) -> dict[str, list[str]]:
        assert self.tasks is not None
        return requests_needed(self.tasks.loaded["tasks"])


def new_run(metric: MetricConfig, settings: dict[str, Any] | None) -> LmEvalRun:
    run = LmEvalRun(metric.lm_eval_options().model_copy(deep=True), settings)
    run.metrics.append(metric)
    return run


def plan_lm_eval(run: Any, jobs: list[LmEvalRun]) -> None:
    """Load each run's tasks and resolve its metrics' sub-types (in place); ConfigError on the first problem."""
    index = {metric.name: i for i, metric in enumerate(run.all_metrics)}
    key = run._metrics_key
    for job in jobs:
        try:
            job.tasks = load_tasks(job.options, run.allow_download)
        except MissingDependencyError as exc:  # nothing of the run could be measured as asked: a config error
            raise ConfigError(str(exc), path=f"{key}[{index[job.metrics[0].name]}].type") from None
        except TaskProblem as exc:
            metric = _metric_of_task(job, exc.index)
            task_index = (
                metric.lm_eval_options().tasks.index(job.options.tasks[exc.index]) if exc.index is not None else None
            )
            where = f"{key}[{index[metric.name]}].metric_config" + (
                f".tasks[{task_index}]"
                if task_index is not None
                else ".include_path"
                if "include_path" in str(exc)
                else ""
            )
            raise ConfigError(str(exc), path=where) from None
        for metric in job.metrics:
            _resolve(job, metric, f"{key}[{index[metric.name]}]")
        _check_models(run, job, f"{key}[{index[job.metrics[0].name]}].metric_config.tasks")


def _metric_of_task(job: LmEvalRun, task_index: int | None) -> MetricConfig:
    if task_index is None:
        return job.metrics[0]
    task = job.options.tasks[task_index]
    return next(m for m in job.metrics if task in m.lm_eval_options().tasks)


def _resolve(job: LmEvalRun, metric: MetricConfig, where: str) -> None:
    assert job.tasks is not None
    own_tasks = set(metric.lm_eval_options().tasks)
    groups = job.tasks.loaded["groups"]
    produced = [p for p in job.tasks.produced if p.task in own_tasks or _in_group(p.task, own_tasks, groups)]
    if not metric.sub_types:
        metric.sub_types = [SubType(name=p.name, higher_is_better=p.higher_is_better) for p in produced]
    for i, sub in enumerate(metric.sub_types):
        try:
            value = resolve(sub.name, produced)
        except ValueError as exc:
            raise ConfigError(str(exc), path=f"{where}.sub_types[{i}].name") from None
        if sub.higher_is_better is None:
            sub.higher_is_better = value.higher_is_better
        if sub.goal is not None:
            try:
                sub.goal.check_range(sub.higher_is_better)
            except ValueError as exc:
                raise ConfigError(str(exc), path=f"{where}.sub_types[{i}].goal.value") from None
        job.resolved[(metric.name, sub.name)] = value


def _in_group(task: str, names: set[str], groups: dict[str, Any]) -> bool:
    """Whether ``task`` is a leaf of one of the groups ``names``."""
    return any(task in {t.task_name for t in groups[n].get_all_tasks()} for n in names if n in groups)


def _check_models(run: Any, job: LmEvalRun, where: str) -> None:
    """Each model whose runtime knows before loading what it serves can serve the tasks' requests."""
    needed = job.needed_requests()
    for i, model in enumerate(run.models()):
        served = requests_of(model)
        if served is None:
            continue  # known once loaded (a Python model's object)
        model_key = "input_model" if i == 0 else f"candidates[{i - 1}]"
        how = f"{model.type}, at {model_key}"
        if not served:
            how += "; lm-eval tasks run on HfModel (task text-generation), GenAIModel and PythonModel"
        try:
            check_serves(model.display_name(), served, needed, how)
        except Exception as exc:
            raise ConfigError(str(exc), path=where) from None
