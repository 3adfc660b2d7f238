"""Checks made when the run is planned, before any model loads. What would stop every model alike is one line and
exit 2, not the same failure recorded for each model after it loaded.

* The device: ``gpu`` on a machine (or a runtime build) without one, asked of each model's runtime.
* Each data config the plan reads: its source opens (a malformed or blank JSON lines file fails here, by line)
  and has rows (a ``limit`` can keep none); its pre-process finds its columns, and a tokenizer source where text
  needs one, for each model's processor; data read as stored has its first batch built (a missing label shows).
* The fields each metric reads are given by the pass over its data config (:mod:`olive_eval.engine.passes.fields`).
* Each model's runtime can give the outputs each post-process of its passes requires (``Runtime.emits``), and
  each metric registered with an lm-eval ``output_type`` fits the pass's call mode (:mod:`olive_eval.metrics.output_types`).

A pre-process is stopped where it would load a tokenizer or processor (:class:`ProcessorDeferred`): what it
makes with one depends on the model, and is checked batch by batch when the model's pass runs. A failure that is
not one of ours (a user's pre-process function raising) is left for that pass to report, with its location.
"""

from __future__ import annotations

from collections.abc import Callable

from olive_eval.config.data import DataConfig
from olive_eval.config.run import RunConfig
from olive_eval.data.components import build
from olive_eval.data.prepared import PrepareContext, ProcessorDeferred
from olive_eval.data.sources import Source
from olive_eval.engine.passes.fields import check_reads, pass_fields
from olive_eval.errors import ConfigError, DataError, EvaluationError, OliveEvalError
from olive_eval.metrics import metric_registry
from olive_eval.metrics.output_types import output_type_problem
from olive_eval.runtimes.base import ModelConfig, runtime_registry
from olive_eval.tasks.call_mode import CallMode


def check_device(run: RunConfig) -> None:
    """Every model's runtime can run on the run's device."""
    for model in run.models():
        runtime = runtime_registry.get(model.type)
        problem = runtime.device_problem(model, run.device, run.default_providers())
        if problem:
            raise ConfigError(
                f"'{run.device}' is asked for, but model '{model.display_name()}' ({model.type}) cannot run there: "
                f'{problem}; run on a machine with a GPU, or set "device": "cpu"',
                path="device",
            )


def check_outputs(run: RunConfig, data_configs: list[str], models: list[tuple[str, ModelConfig]] | None = None) -> None:
    """Each model (``(JSON path, config)``; the run's own by default) can give the output the post-process of each
    of ``data_configs`` starts from."""
    if models is None:
        models = [("input_model" if i == 0 else f"candidates[{i - 1}]", m) for i, m in enumerate(run.models())]
    for name in data_configs:
        index, config = next((i, dc) for i, dc in enumerate(run.data_configs) if dc.name == name)
        post = build("post-process", config.post_process_data_config)
        for where, model in models:
            runtime = runtime_registry.get(model.type)
            try:
                mode = model.call_mode(post.generates)
            except ValueError as exc:  # a post-process decoding generated tokens of a model that never generates
                raise ConfigError(
                    f"post-process '{config.post_process_data_config.type}' of data config '{name}' decodes generated "
                    f"tokens, but model '{model.display_name()}' ({where}): {exc}",
                    path=f"data_configs[{index}].post_process_data_config.type",
                ) from None
            generates = mode is CallMode.GENERATE
            _check_output_types(run, name, None if mode is CallMode.CALL else generates, model, where)
            emits = runtime.emits(model, generates)
            missing = next((output for output in post.requires() if emits.lacks(output)), None)
            if missing is None:
                continue
            how = "generating" if generates else "on a forward pass"
            raise ConfigError(
                f"post-process '{config.post_process_data_config.type}' of data config '{name}' starts from output "
                f"'{missing}', which model '{model.display_name()}' ({where}, {model.type}) does not give {how}: "
                f"it gives {', '.join(emits.names)}",
                path=f"data_configs[{index}].post_process_data_config.output_name",
            )


def _check_output_types(
    run: RunConfig, data_config: str, generates: bool | None, model: ModelConfig, where: str
) -> None:
    """Each registered sub-type scored on ``data_config`` whose ``output_type`` says how the model must be called
    fits the pass (``generates``: None where a plain callable decides)."""
    prefix = "evaluator.metrics" if run.evaluator else "metrics"
    for i, metric in enumerate(run.all_metrics):
        registered = metric.metric_type.sub_types_are_metrics and metric.backend != "huggingface_metrics"
        if not (registered and metric.uses_predictions and metric.data_config == data_config):
            continue
        for j, sub in enumerate(metric.sub_types):
            problem = output_type_problem(getattr(metric_registry.get(sub.name), "output_type", None), generates)
            if problem is None:
                continue
            how = "generating" if generates else "on a forward pass"
            raise ConfigError(
                f"metric '{sub.name}' has {problem}, but data config '{data_config}' calls model "
                f"'{model.display_name()}' ({where}) {how}",
                path=f"{prefix}[{i}].sub_types[{j}].name",
            )


def check_data(run: RunConfig, names: list[str], source_of: Callable[[str], Source]) -> None:
    """The data configs ``names``, each opened with ``source_of`` (which keeps the source for the run)."""
    for name in names:
        config = run.data_config(name)
        if config.is_dummy:
            continue
        try:
            source = source_of(name)
            if not source.needs_model:
                _has_rows(config, source)
            _prepares(run, config, source)
        except EvaluationError as exc:
            raise DataError(str(exc)) from exc


def _has_rows(config: DataConfig, source: Source) -> None:
    if any(chunk.num_rows for chunk in source.chunks()):  # reads up to the first chunk with rows
        return
    params = config.load_dataset_config
    chosen = [f"{key} {getattr(params, key)}" for key in ("limit", "col_filters") if getattr(params, key, None)]
    after = f" after load_dataset_config.{' and '.join(chosen)}" if chosen else ""
    raise DataError(f"data config '{config.name}' has no rows{after}: there is nothing to evaluate on")


def _prepares(run: RunConfig, config: DataConfig, source: Source) -> None:
    """Pre-process for each distinct processor the models bring, up to where it would load it."""
    pre = build("pre-process", config.pre_process_data_config)
    seen: set[str | None] = set()
    for model in run.models():
        context = PrepareContext(config.name, model.processor_folder(), run.allow_download, planning=True)
        key = pre.processor_source(context)
        if key in seen:
            continue
        seen.add(key)
        try:
            prepared = pre.prepare(source, context)
            check_reads(run, config.name, pass_fields(prepared.columns, prepared.references))
            if prepared.as_stored:  # building the first batch checks it (its labels, among others)
                next(iter(build("dataloader", config.dataloader_config).batches(prepared)), None)
        except ProcessorDeferred:
            continue
        except OliveEvalError:
            raise
        except Exception:  # not one of ours (a user's function raising): the pass reports it, with where
            return
