"""Metric configs, accepted verbatim from Olive: ``{name, type, data_config, sub_types, user_config, ...}``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from olive_eval.config.components import nested_error, reraise_nested
from olive_eval.config.errors import describe_error, json_path
from olive_eval.config.goal import MAX_RESAMPLES, Goal
from olive_eval.config.metric_fields import check_metric_fields, merged_fields, remapped
from olive_eval.config.olive_metric_options import drop_no_op_options, fold_olive_kwargs
from olive_eval.config.repeats import MAX_REPEATS, check_repeats
from olive_eval.data.filters import build_filters
from olive_eval.metrics.registry import get_metric, metric_registry
from olive_eval.metrics.stats import Method
from olive_eval.metrics.types import PREDICTION_PASS, TIMING, MetricType, metric_type_registry
from olive_eval.registry import RegistryError
from olive_eval.strict_model import LaxPath, StrictModel, unknown_choice_hint


class ConfidenceIntervalConfig(StrictModel):
    """A seeded bootstrap interval for a sub-type's value."""

    method: Method = "percentile"
    n_resamples: int = Field(1000, le=MAX_RESAMPLES, description=f"Bootstrap resamples (2 to {MAX_RESAMPLES:,}).")
    level: float = Field(0.95, gt=0, lt=1)
    seed: int = 42

    @model_validator(mode="after")
    def _enough_resamples(self) -> ConfidenceIntervalConfig:
        if self.n_resamples < 2:
            raise nested_error("n_resamples", f"n_resamples must be at least 2, got {self.n_resamples}")
        return self


class SubType(StrictModel):
    name: str
    priority: int = Field(-1, description="Rank of this sub-type (1 = most important); -1 = measured only.")
    goal: Goal | None = None
    higher_is_better: bool | None = None
    metric_config: dict[str, Any] | None = None
    aggregation: str | None = Field(None, description="Instance metrics: how scores combine (mean, median, ...).")
    confidence_interval: ConfidenceIntervalConfig | None = None
    score_name: str | None = Field(None, min_length=1, description="Its name in results in place of name.")
    fields: dict[str, str] | None = Field(None, description="As the metric's fields, over them, for this sub-type.")

    @property
    def score_key(self) -> str:
        """The sub-type's name in results: its score_name, else its name."""
        return self.score_name or self.name


class UserConfig(StrictModel):
    user_script: LaxPath | None = None
    script_dir: LaxPath | None = None
    evaluate_func: str | None = None
    evaluate_func_kwargs: dict[str, Any] = Field(default_factory=dict)
    metric_func: str | None = None
    metric_func_kwargs: dict[str, Any] = Field(default_factory=dict)
    inference_settings: dict[str, dict[str, Any]] | None = Field(
        None,
        description="Runtime settings for this metric's runs, keyed by framework as in Olive ('onnx', 'hf', ...); "
        "each runtime validates its own part",
    )
    io_bind: bool | None = None
    run_kwargs: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _names_need_script(self) -> UserConfig:
        for key in ("evaluate_func", "metric_func"):
            value = getattr(self, key)
            if value is not None and value != "None" and self.user_script is None:
                raise nested_error(key, f"{key} names a function, so user_config.user_script is required")
        if self.metric_func == "None":  # Olive's docs write "None" to mean "no metric_func"
            self.metric_func = None
        return self

    def settings_override(self) -> dict[str, Any] | None:
        """This metric's runtime settings by framework, with Olive's ``io_bind`` folded into the ONNX part."""
        settings = {key: dict(value) for key, value in (self.inference_settings or {}).items()}
        if self.io_bind is not None:
            settings.setdefault("onnx", {})["io_bind"] = self.io_bind
        return settings or None


class MetricConfig(StrictModel):
    name: str
    type: str = Field(description="accuracy, latency, throughput, size_on_disk or custom (Olive's metric types)")
    data_config: str | None = None
    sub_types: list[SubType] = Field(
        default_factory=list, description="At least one, except for lm_eval (none: every value its tasks report)."
    )
    metric_config: dict[str, Any] | None = Field(
        None, description="The metric's own options, for types that take them (lm_eval: tasks, limit, num_fewshot...)"
    )
    user_config: UserConfig = Field(default_factory=UserConfig)
    backend: Literal["torch_metrics", "huggingface_metrics"] = "torch_metrics"
    sample_log_num: int = Field(0, ge=0, description="Write the first N (prediction, target) records, as Olive does.")
    sample_log_dir: LaxPath | None = None
    process_single_instances: bool = Field(
        True,
        description="Write global sub-types' per-example values (roc_auc and average_precision's leave-one-out "
        "contributions, a user global function's returned values) to the instance file; false skips them "
        "(Unitxt's switch)",
    )
    confidence_interval: ConfidenceIntervalConfig | None = Field(
        None, description="Default interval settings for every sub-type of this metric."
    )
    filters: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Applied to the predictions before this metric scores them, in order (lm-evaluation-harness's "
        "filters: regex, lowercase, uppercase, strip, remove_punctuation, map, take_first, majority_vote, or one a "
        "user script registers)",
    )
    repeats: int | None = Field(
        None,
        ge=1,
        le=MAX_REPEATS,
        description=f"Sampled generations per example (pass@k, maj@k; at most {MAX_REPEATS}); the model must sample "
        "(do_sample). Given (1 too), each repeat is seeded and a PythonModel gets its seed in the batch column "
        "repeat_seed; left out, one unseeded generation.",
    )
    repeat_seed: int = Field(0, description="Repeat r is generated with seed repeat_seed + r.")
    reduction: str | dict[str, Any] | None = Field(
        None,
        description="How an example's repeats become one score, after the filters: take_first, majority_vote, "
        "mean, or {'type': 'pass_at_k', 'k': K} (K <= repeats)",
    )

    fields: dict[str, str] = Field(
        default_factory=dict,
        description="Pass fields its sub-types read in place of the names they read, e.g. {'references': 'context'} "
        "scores against the context column on the same pass (Unitxt's MetricPipeline)",
    )

    @model_validator(mode="after")
    def _check_filters(self) -> MetricConfig:
        try:
            build_filters(self.filters, "filters")
        except ValueError as exc:
            where, _, message = str(exc).partition(": ")
            raise nested_error(where, message) from None
        return self

    @model_validator(mode="after")
    def _check_repeats(self) -> MetricConfig:
        check_repeats(self)
        return self

    @field_validator("type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        if value not in metric_type_registry:
            raise ValueError(f"unknown metric type '{value}'{unknown_choice_hint(value, metric_type_registry.names())}")
        return value

    @property
    def metric_type(self) -> MetricType:
        return metric_type_registry.get(self.type)

    @model_validator(mode="after")
    def _check_options(self) -> MetricConfig:
        options = self.metric_type.options
        if options is None:
            if self.metric_config is not None:
                raise nested_error(
                    "metric_config",
                    f"{self.type} metrics take no metric-level metric_config; give it per sub-type "
                    "(sub_types[i].metric_config)",
                )
            if not self.sub_types:
                raise nested_error("sub_types", "at least one sub-type is required")
            return self
        own = self.metric_type.own_data
        given = {
            "data_config": self.data_config is not None,
            "filters": bool(self.filters),
            "repeats": (self.repeats or 1) != 1,
            "reduction": self.reduction is not None,
            "sample_log_num": self.sample_log_num != 0,
            "fields": bool(self.fields),
        }
        wrong = next((key for key, set_ in given.items() if set_), None)
        if own is not None and wrong is not None:
            raise nested_error(wrong, f"{self.type} metrics take no {wrong}: {own}")
        if self.metric_config is None:
            raise nested_error("metric_config", f"{self.type} metrics need a metric_config (e.g. their tasks)")
        try:
            options.model_validate(self.metric_config)
        except ValidationError as exc:
            raise reraise_nested(exc, "metric_config") from None
        return self

    def lm_eval_options(self) -> Any:
        """The validated metric-level options (paths resolved), for types that take them."""
        options = self.metric_type.options
        assert options is not None and self.metric_config is not None
        return options.model_validate(self.metric_config)

    @model_validator(mode="after")
    def _resolve_sub_types(self) -> MetricConfig:
        mtype = self.metric_type
        hf_backend = self.backend == "huggingface_metrics"
        if hf_backend and not mtype.sub_types_are_metrics:
            raise nested_error("backend", "the huggingface_metrics backend serves accuracy metrics only")
        seen: set[str] = set()
        for i, sub in enumerate(self.sub_types):
            where = f"sub_types[{i}]"
            if sub.score_key in seen:
                named = f"{where}.{'score_name' if sub.score_name else 'name'}"
                raise nested_error(named, f"sub-type '{sub.score_key}' appears twice in metric '{self.name}'")
            seen.add(sub.score_key)
            if not hf_backend:
                try:
                    mtype.check_sub_type(sub.name)
                except (ValueError, RegistryError) as exc:
                    raise nested_error(f"{where}.name", str(exc)) from None
            if not hf_backend and (sub.priority > 0 or sub.goal is not None) and not mtype.is_scalar(sub.name):
                raise nested_error(
                    f"{where}.{'priority' if sub.priority > 0 else 'goal'}",
                    f"sub-type '{sub.name}' is a structured value (a curve or a matrix), not a number, so it cannot "
                    "be ranked or carry a goal; leave out its priority and goal",
                )
            if sub.higher_is_better is None:
                sub.higher_is_better = True if hf_backend else mtype.default_higher_is_better(sub.name)
            deferred = sub.higher_is_better is None and not mtype.sub_types_known_at_load  # set when planned
            if sub.higher_is_better is None and (sub.priority > 0 or sub.goal is not None) and not deferred:
                raise nested_error(
                    f"{where}.higher_is_better", f"a ranked or goal-bearing {self.type} sub-type must state it"
                )
            if sub.goal is not None and not deferred:
                try:
                    sub.goal.check_range(bool(sub.higher_is_better))
                except ValueError as exc:
                    raise nested_error(f"{where}.goal.value", str(exc)) from None
            if sub.confidence_interval is None:
                sub.confidence_interval = self.confidence_interval
            wants_resampling = sub.confidence_interval is not None or (sub.goal is not None and sub.goal.confidence)
            if wants_resampling and not mtype.can_resample(sub.name):
                raise nested_error(
                    where,
                    f"confidence intervals and confidence goals need per-example or per-run data, which "
                    f"{self.type} sub-type '{sub.name}' does not have (use accuracy, or latency and throughput "
                    "statistics over the timed runs)",
                )
            self._check_metric_config(sub, where, hf_backend)
        problem = mtype.config_problem(self)
        if problem is not None:
            raise nested_error(*problem)
        check_metric_fields(self)
        return self

    def _check_metric_config(self, sub: SubType, where: str, hf_backend: bool) -> None:
        takes_kwargs = not hf_backend and "kwargs" in self.metric_type.config_keys(sub.name)
        sub.metric_config, from_kwargs = fold_olive_kwargs(sub.metric_config, f"{where}.metric_config", takes_kwargs)

        def located(key: str) -> str:
            """A metric_config key's path, under ``kwargs`` where the key came from there."""
            return f"{where}.metric_config." + (f"kwargs.{key}" if key.partition(".")[0] in from_kwargs else key)

        if not hf_backend:
            sub.metric_config = drop_no_op_options(
                sub.metric_config, self.metric_type.sub_types_are_metrics, sub.name, located
            )
        try:
            if hf_backend:
                from olive_eval.metrics.huggingface import HuggingFaceMetricConfig

                HuggingFaceMetricConfig.model_validate(sub.metric_config or {})
            else:
                self.metric_type.parse_metric_config(sub.name, sub.metric_config)
            if sub.aggregation is not None:
                if not self.metric_type.sub_types_are_metrics or hf_backend:
                    raise ValueError("aggregation applies to instance metrics of accuracy type")
                metric_registry.get(sub.name)(aggregation=sub.aggregation)
        except ValidationError as exc:
            err = exc.errors()[0]
            extra, message = describe_error(err)
            loc = ".".join(p for p in (json_path(err["loc"]), extra) if p)
            raise nested_error(located(loc) if loc else f"{where}.metric_config", message) from None
        except RegistryError as exc:
            raise nested_error(f"{where}.aggregation", str(exc)) from None
        except ValueError as exc:
            if sub.aggregation is not None and "aggregation" in str(exc):
                raise nested_error(f"{where}.aggregation", str(exc)) from None
            given = sorted(sub.metric_config or {})
            only_kwargs = bool(given) and set(given) <= from_kwargs
            raise nested_error(located(given[0]) if only_kwargs else f"{where}.metric_config", str(exc)) from None

    def scorer(self, sub: SubType, base_dir: Path | None = None) -> Any:
        """The metric object that scores ``sub`` (a registered metric, or a Hugging Face evaluate metric)."""
        own = self.metric_type.evidence_metric()
        if own is not None:
            return own
        built = self.metric_type.build_metric(sub.name, sub.metric_config, sub.aggregation)
        if built is not None:
            return built
        if self.backend == "huggingface_metrics":
            from olive_eval.metrics.huggingface import HuggingFaceMetric

            return HuggingFaceMetric.from_sub_type(sub.name, sub.metric_config, base_dir=base_dir)
        return get_metric(sub.name, sub.metric_config, sub.aggregation)

    def reads(self, sub: SubType) -> tuple[str, ...]:
        """The pass fields ``sub`` scores from (see :mod:`olive_eval.engine.passes.fields`), after its ``fields``."""
        return remapped(self.own_reads(sub), merged_fields(self.fields, sub.fields))

    def own_reads(self, sub: SubType) -> tuple[str, ...]:
        """The names ``sub``'s metric reads, before any ``fields`` remap."""
        if self.metric_type.scored_by_user:  # metric_func gets the predictions, the raw outputs and the references
            return ("prediction", "logits", "references")
        if self.backend == "huggingface_metrics":
            return ("prediction", "references", *self.parsed_config(sub).extra_fields)
        own = self.metric_type.reads_of(sub.name, sub.metric_config)
        if own is not None:
            return own
        return metric_registry.get(sub.name).reads if self.metric_type.sub_types_are_metrics else ()

    def parsed_config(self, sub: SubType) -> Any:
        """The sub-type's validated metric_config (what the planner asks of it: a timing config, the judges)."""
        if self.backend == "huggingface_metrics":
            from olive_eval.metrics.huggingface import HuggingFaceMetricConfig

            return HuggingFaceMetricConfig.model_validate(sub.metric_config or {})
        return self.metric_type.parse_metric_config(sub.name, sub.metric_config)

    @property
    def work(self) -> str:
        """The registered kind of work that measures this metric (:mod:`olive_eval.engine.work`)."""
        return self.metric_type.work_of(self)

    @property
    def reads_data(self) -> bool:
        """True when the metric runs the model over its data config (a pass, or the type's own way)."""
        return self.metric_type.reads_data(self)

    @property
    def uses_predictions(self) -> bool:
        """True when the metric scores outputs of an inference pass over its data config."""
        return self.work == PREDICTION_PASS

    @property
    def timed(self) -> bool:
        """True when the metric's values are statistics of timed calls (the run's timing phase measures them)."""
        return self.work == TIMING
