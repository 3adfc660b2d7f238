"""The top-level run config: a baseline, candidates, data configs and Olive metrics."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, PrivateAttr, ValidationError, field_validator, model_validator

from olive_eval.config.components import Registered, nested_error, reraise_nested
from olive_eval.config.data import DataConfig
from olive_eval.config.executor import DEFAULT_EXECUTOR, ExecutorConfig, executor_config, executor_registry
from olive_eval.config.gate import FAIL_ON_MISS_HELP, FailOnMiss, gate_problem
from olive_eval.config.metric import MetricConfig, SubType
from olive_eval.config.metric_set import (
    check_data_configs,
    check_early_stop,
    check_metric_names,
    check_priorities,
    check_score,
    check_shared_seeds,
    joint_key,
)
from olive_eval.config.sequential import SequentialSettings, check_sequential
from olive_eval.lm_eval.options import olive_lm_evaluator_metrics
from olive_eval.runtimes.base import ModelConfig, check_name, runtime_registry
from olive_eval.runtimes.providers import ProviderSpec, device_providers, normalize_providers
from olive_eval.strict_model import LaxPath, StrictModel, shown_json

#: A model config: the class its runtime registered for the config's ``type``.
Model = Annotated[ModelConfig, Registered(runtime_registry, model_of=lambda runtime: runtime.Config, what="model type")]
#: Where the models run: the config class registered for the executor's ``type`` (local, process, ray).
ExecutorSetting = Annotated[ExecutorConfig, Registered(executor_registry)]


class EvaluatorConfig(StrictModel):
    """Olive's evaluator block: its metrics, and a user script imported first (to register metrics)."""

    name: str | None = None
    user_script: LaxPath | None = None
    script_dir: LaxPath | None = None
    metrics: list[MetricConfig] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _olive_lm_evaluator(cls, data: Any) -> Any:
        """Olive's ``{"type": "LMEvaluator", "tasks": [...], "limit": ...}`` block, as the lm_eval metric it means."""
        if not isinstance(data, dict) or data.get("type") != "LMEvaluator":
            return data
        try:
            metrics = olive_lm_evaluator_metrics(data)
        except ValueError as exc:
            key, _, message = str(exc).partition(": ")
            raise nested_error(key, message) from None
        return {"name": data.get("name"), "metrics": metrics}


class TimingSettings(StrictModel):
    """How the timing phase schedules the models' latency and throughput runs."""

    interleave: bool = Field(
        True,
        description="Time the baseline and the candidates in alternating rounds (A B C A B C ...) on the same "
        "inputs, so the drift of a shared machine hits them alike; false times one model after the other.",
    )
    rounds: int = Field(5, ge=1, le=1000, description="Rounds the timed runs are split into when interleaving.")
    keep_loaded: bool = Field(
        True,
        description="Keep every model loaded for the timing phase; false loads a model for each of its rounds "
        "(one model in memory at a time; the load is never timed as a run).",
    )


class RunConfig(StrictModel):
    schema_: str | None = Field(None, alias="$schema", description="Path or URL of run.schema.json, for editors.")
    input_model: Model = Field(description="The baseline every candidate is compared with.")
    candidates: list[Model] = Field(default_factory=list)
    device: Literal["cpu", "gpu"] = "cpu"
    execution_providers: list[ProviderSpec] | None = Field(
        None, description="Default ONNX Runtime providers; CPU on cpu, CUDA then CPU on gpu."
    )
    data_configs: list[DataConfig] = Field(default_factory=list)
    evaluator: EvaluatorConfig | None = None
    metrics: list[MetricConfig] | None = None
    output_dir: LaxPath | None = None
    timing: TimingSettings = Field(default_factory=TimingSettings)
    allow_download: bool = Field(
        False, description="Let datasets, models and tokenizers not in the local cache be downloaded (default: never)."
    )
    early_stop: bool = Field(
        False,
        description="Stop measuring a candidate once a cheap metric misses a ranked goal: its expensive metrics "
        "(latency, throughput, or those late in 'order') are not measured. Needs a ranked goal.",
    )
    order: list[str] | None = Field(
        None,
        description="With early_stop: metric names, cheapest first (default: every metric other than latency "
        "and throughput, then those). Unlisted metrics follow the listed ones.",
    )
    sequential: SequentialSettings | None = Field(
        None,
        description="Decide each candidate's ranked goals with a confidence on as few examples as the evidence "
        "needs, in growing chunks of a seeded random order, with anytime-valid bounds (docs/sequential.md).",
    )
    cache_timings: bool = Field(
        False,
        description="Cache latency and throughput results with the others; by default they are measured again "
        "each run (they depend on the machine's state).",
    )
    executor: ExecutorSetting = Field(
        default_factory=lambda: executor_config(DEFAULT_EXECUTOR),
        description="Where each model is evaluated: 'local' (this process, the default), 'process' (a fresh child "
        "process per model: a crash fails only that model) or 'ray' (Ray workers).",
    )
    fail_on_miss: FailOnMiss = Field(False, description=FAIL_ON_MISS_HELP)
    score: str | None = Field(
        None,
        description="The sub-type ('metric-sub_type') results.json gives as each model's headline score and "
        "score_name; default: the sub-type with priority 1.",
    )
    _source_dir: Path | None = PrivateAttr(None)
    _source: str = PrivateAttr("<config>")

    @property
    def source_dir(self) -> Path | None:
        """The folder relative paths were resolved against (the config file's, when loaded from one)."""
        return self._source_dir

    @property
    def source(self) -> str:
        """The config file's path (``<config>`` for a dict), which errors found when the run is planned name."""
        return self._source

    @field_validator("fail_on_miss", mode="before")
    @classmethod
    def _gate_type(cls, v: Any) -> Any:
        """One line for a value of the wrong type, not one per member of the union."""
        if not isinstance(v, bool) and not (isinstance(v, list) and all(isinstance(n, str) for n in v)):
            raise nested_error("", f"give true, false or a list of candidate names, not {shown_json(v)}")
        return v

    @field_validator("execution_providers", mode="before")
    @classmethod
    def _providers(cls, v: Any) -> list[ProviderSpec] | None:
        return normalize_providers(v)

    # ---------------------------------------------------------------- accessors
    @property
    def all_metrics(self) -> list[MetricConfig]:
        return self.evaluator.metrics if self.evaluator is not None else (self.metrics or [])

    @property
    def _metrics_key(self) -> str:
        return "evaluator.metrics" if self.evaluator is not None else "metrics"

    def models(self) -> list[ModelConfig]:
        return [self.input_model, *self.candidates]

    @property
    def baseline_name(self) -> str:
        return self.input_model.display_name()

    def data_config(self, name: str) -> DataConfig:
        return next(dc for dc in self.data_configs if dc.name == name)

    def default_providers(self) -> list[ProviderSpec]:
        if self.execution_providers is not None:
            return self.execution_providers
        return device_providers(self.device)

    def seeds(self) -> dict[str, int]:
        """Every seed the run uses, by where it is set (recorded in results.json's environment)."""
        out: dict[str, int] = {}
        for metric in self.all_metrics:
            for sub in metric.sub_types:
                if sub.confidence_interval is not None:
                    out[f"{joint_key(metric, sub)}.confidence_interval"] = sub.confidence_interval.seed
                if sub.goal is not None and sub.goal.confidence is not None:
                    out[f"{joint_key(metric, sub)}.goal"] = sub.goal.seed
        for dc in self.data_configs:
            seed = getattr(dc.load_dataset_config, "seed", None)
            if isinstance(seed, int):
                out[f"data_configs.{dc.name}"] = seed
        return out

    @property
    def has_goals(self) -> bool:
        return any(sub.goal is not None for metric in self.all_metrics for sub in metric.sub_types)

    def with_fail_on_miss(self, setting: FailOnMiss) -> RunConfig:
        """A copy gated by ``setting`` in place of the config's own ``fail_on_miss`` (the CLI's flag wins);
        ValueError says why ``setting`` cannot gate this run."""
        problem = self._gate_problem(setting)
        if problem is not None:
            raise ValueError(problem[1])
        return self.model_copy(update={"fail_on_miss": setting})

    def _gate_problem(self, setting: object) -> tuple[str, str] | None:
        names = [model.display_name() for model in self.candidates]
        return gate_problem(setting, names, self.baseline_name, self.has_goals)

    @property
    def score_name(self) -> str | None:
        """The headline sub-type's key: ``score`` when set, else the one ranked first (None: nothing ranked)."""
        return self.score or next((joint_key(m, s) for m, s in self.ranked() if s.priority == 1), None)

    def ranked(self) -> Iterator[tuple[MetricConfig, SubType]]:
        for metric in self.all_metrics:
            for sub in metric.sub_types:
                if sub.priority > 0:
                    yield metric, sub

    # ---------------------------------------------------------------- cross-field checks
    @model_validator(mode="after")
    def _check(self) -> RunConfig:
        if self.evaluator is not None and self.metrics is not None:
            raise nested_error("metrics", "give metrics either at the top level or under evaluator, not both")
        if not self.all_metrics:
            raise nested_error(
                "metrics", "at least one metric is required (top-level 'metrics' or 'evaluator.metrics')"
            )
        self._check_model_names()
        check_metric_names(self.all_metrics, self._metrics_key)
        check_data_configs(self.data_configs, self.all_metrics, self._metrics_key)
        check_shared_seeds(self.all_metrics, self._metrics_key)
        check_priorities(self.all_metrics, self._metrics_key)
        check_score(self.score, self.all_metrics)
        self._check_inference_settings()
        check_early_stop(self.early_stop, self.order, self.all_metrics)
        check_sequential(self.sequential, self.all_metrics)
        if self.sequential is not None and self.executor.shards > 1:
            raise nested_error("sequential", "a sequential run scores each pass in one go: give executor.shards 1")
        problem = self._gate_problem(self.fail_on_miss)
        if problem is not None:
            raise nested_error(f"fail_on_miss{problem[0]}", problem[1])
        return self

    def _check_inference_settings(self) -> None:
        """Each framework's part of a metric's ``inference_settings`` is validated by the runtime that takes it;
        a part no model of the run would use is an error, not ignored."""
        runtimes = {runtime_registry.get(m.type) for m in self.models()}
        by_key = {r.settings_key: r for r in runtimes}
        for i, metric in enumerate(self.all_metrics):
            for key, part in (metric.user_config.settings_override() or {}).items():
                where = f"{self._metrics_key}[{i}].user_config.inference_settings.{key}"
                runtime = by_key.get(key)
                if runtime is None:
                    used = ", ".join(sorted(by_key)) or "none"
                    raise nested_error(where, f"no model of this run takes '{key}' settings; frameworks here: {used}")
                if runtime.Settings is None:
                    raise nested_error(where, f"{runtime.model_type} models take no inference settings")
                try:
                    runtime.Settings.model_validate(part)
                except ValidationError as exc:
                    raise reraise_nested(exc, where) from None

    def _check_model_names(self) -> None:
        seen: dict[str, str] = {}
        for i, model in enumerate(self.models()):
            where = "input_model" if i == 0 else f"candidates[{i - 1}]"
            name = model.display_name()
            try:
                check_name(name)
            except ValueError as exc:
                raise nested_error(f"{where}.name", str(exc)) from None
            if name in seen:
                raise nested_error(
                    f"{where}.name",
                    f"model name '{name}' is already used by {seen[name]}; give each model a unique name",
                )
            seen[name] = where

    # ---------------------------------------------------------------- paths
    def resolve_paths(self, base_dir: Path, source: str | None = None) -> RunConfig:
        """Make every relative path absolute against the config file's directory (in place); ``source`` names
        the config in the errors found later, when the run is planned."""

        def fix(path: Path | None) -> Path | None:
            return path if path is None or path.is_absolute() else (base_dir / path)

        for model in self.models():
            model.resolve_paths(base_dir)
        for dc in self.data_configs:
            dc.user_script, dc.script_dir = fix(dc.user_script), fix(dc.script_dir)
            _resolve_dataset_paths(dc.load_dataset_config, base_dir)
        for metric in self.all_metrics:
            uc = metric.user_config
            uc.user_script, uc.script_dir = fix(uc.user_script), fix(uc.script_dir)
            metric.sample_log_dir = fix(metric.sample_log_dir)
            if metric.metric_config is not None and metric.metric_type.options is not None:
                metric.metric_config = metric.metric_type.options.resolve_paths(metric.metric_config, base_dir)
        self.output_dir = fix(self.output_dir)
        self._source_dir = base_dir
        if source is not None:
            self._source = source
        return self


def _resolve_dataset_paths(load: Any, base_dir: Path) -> None:
    """Relative ``data_files`` and a relative local ``data_name`` folder, against the config's folder."""

    def fix(value: str) -> str:
        return value if Path(value).is_absolute() or "://" in value else str(base_dir / value)

    files = getattr(load, "data_files", None)
    if files is not None:
        if isinstance(files, str):
            load.data_files = fix(files)
        elif isinstance(files, list):
            load.data_files = [fix(f) for f in files]
        else:
            load.data_files = {k: fix(v) if isinstance(v, str) else [fix(f) for f in v] for k, v in files.items()}
    name = getattr(load, "data_name", None)
    if isinstance(name, str) and files is None and (base_dir / name).exists():
        load.data_name = str(base_dir / name)
