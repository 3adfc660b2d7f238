"""Planning: which inference passes, timing runs, file sizes and user functions a run needs.

The same plan applies to every model. Metrics that read predictions from the same data config
with the same runtime settings share one pass; timing sub-types with the same data, settings and
timing config share one timing run (latency and throughput included).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from olive_eval.config.metric import MetricConfig, SubType
from olive_eval.config.run import RunConfig
from olive_eval.engine.judges import PlannedJudge, plan_judges
from olive_eval.engine.preflight import check_device, check_outputs
from olive_eval.lm_eval_run.plan import LmEvalRun, new_run, plan_lm_eval
from olive_eval.metrics.performance import TimingConfig
from olive_eval.metrics.types import Need

#: A metric's runtime settings by framework (``user_config.inference_settings``), or None for the model's own.
Settings = dict[str, Any] | None


def settings_key(settings: Settings) -> str:
    """Identity of runtime settings: a pass or a timing run per distinct settings, whatever the runtime."""
    return "" if not settings else json.dumps(settings, sort_keys=True, default=str)


@dataclass
class PredictionPass:
    """One pass of a model over a labelled data config; every listed metric scores its output."""

    data_config: str
    settings: Settings
    metrics: list[MetricConfig] = field(default_factory=list)


@dataclass
class TimingRun:
    """Repeated calls on one batch; ``data_config`` None means dummy inputs from the model's own shapes."""

    data_config: str | None
    settings: Settings
    timing: TimingConfig
    sub_types: list[tuple[MetricConfig, SubType]] = field(default_factory=list)


@dataclass
class Plan:
    passes: list[PredictionPass] = field(default_factory=list)
    timings: list[TimingRun] = field(default_factory=list)
    file_sizes: list[tuple[MetricConfig, SubType]] = field(default_factory=list)
    user_functions: list[MetricConfig] = field(default_factory=list)
    lm_eval_runs: list[LmEvalRun] = field(default_factory=list)
    #: the judges the metrics name, by spec key (checked here, loaded by the engine: :mod:`olive_eval.engine.judges`)
    judges: dict[str, PlannedJudge] = field(default_factory=dict)

    def data_configs(self) -> list[str]:
        """The data configs the plan reads, in plan order."""
        names = [p.data_config for p in self.passes] + [t.data_config for t in self.timings if t.data_config]
        return list(dict.fromkeys(names))

    def settings_variants(self) -> list[tuple[Settings, list[str]]]:
        """Distinct runtime settings the per-model work needs (one loaded model each), with the metrics using
        each. Timing runs are not among them: the timing phase loads the models itself."""
        seen: dict[str, tuple[Settings, list[str]]] = {}
        uses = [
            *((p.settings, [m.name for m in p.metrics]) for p in self.passes),
            *((m.user_config.settings_override(), [m.name]) for m in self.user_functions),
            *((job.settings, [m.name for m in job.metrics]) for job in self.lm_eval_runs),
        ]
        for settings, metrics in uses:
            names = seen.setdefault(settings_key(settings), (settings, []))[1]
            names.extend(n for n in metrics if n not in names)
        return list(seen.values())


def make_plan(run: RunConfig) -> Plan:
    """The run's work for every model. A device no model can run on, or a post-process needing an output a model
    cannot give, is a config error here, before any loads."""
    check_device(run)
    plan = Plan()
    passes: dict[tuple[str, str], PredictionPass] = {}
    timings: dict[tuple[str | None, str, str], TimingRun] = {}
    lm_eval_runs: dict[tuple[str, str], LmEvalRun] = {}
    for metric in run.all_metrics:
        override = metric.user_config.settings_override()
        need = metric.metric_type.need
        if metric.uses_predictions:
            assert metric.data_config is not None  # resolved by RunConfig validation
            key = (metric.data_config, settings_key(override))
            passes.setdefault(key, PredictionPass(metric.data_config, override)).metrics.append(metric)
        elif need is Need.TIMINGS:
            for sub in metric.sub_types:
                timing = metric.parsed_config(sub)
                tkey = (metric.data_config, settings_key(override), timing.model_dump_json())
                timings.setdefault(tkey, TimingRun(metric.data_config, override, timing)).sub_types.append(
                    (metric, sub)
                )
        elif need is Need.MODEL_FILES:
            plan.file_sizes.extend((metric, sub) for sub in metric.sub_types)
        elif need is Need.LM_EVAL:
            lkey = (metric.lm_eval_options().run_key(), settings_key(override))
            if lkey in lm_eval_runs:
                lm_eval_runs[lkey].add(metric)
            else:
                lm_eval_runs[lkey] = new_run(metric, override)
        else:
            plan.user_functions.append(metric)
    plan.passes = list(passes.values())
    check_outputs(run, [p.data_config for p in plan.passes])
    plan.timings = list(timings.values())
    plan.lm_eval_runs = list(lm_eval_runs.values())
    if plan.lm_eval_runs:
        plan_lm_eval(run, plan.lm_eval_runs)
    plan.judges = plan_judges(run)
    return plan
