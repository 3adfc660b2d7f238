"""A judge that is a model olive-eval runs and that generates text (an ``HfModel`` text-generation model, a
``GenAIModel``, a ``PythonModel``), reached through the runtime interface: the engine loads it with the run's
context (:mod:`olive_eval.engine.run.judges`), and its lm-eval adapter (:func:`olive_eval.lm_eval.serving.adapter_for`,
the interface every generating model type serves) generates the replies, with lm-eval's own stop-string and length
handling. This module is the only part of the judges that touches runtimes, and it is imported only when a spec
names ``"type": "model"``; judged metrics never import it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from olive_eval.errors import ConfigError, EvaluationError
from olive_eval.judges.base import (
    BatchCall,
    JudgeModel,
    JudgeSource,
    JudgeSpec,
    JudgeSpecError,
    OneCall,
    judge_source_registry,
)
from olive_eval.registry_spec import SpecError, SpecForm
from olive_eval.runtimes.providers import ProviderSpec, normalize_providers
from olive_eval.user_module import load_function

__all__ = ["ModelJudgeSpec"]


class ModelJudgeSpec(JudgeSpec):
    """``{"type": "model", "model": {a model config, as input_model}, "max_new_tokens": 256, ...}``."""

    model: dict[str, Any] = Field(description="A model config, as input_model (e.g. an HfModel text-generation model)")
    device: Literal["cpu", "gpu"] | None = Field(None, description="The judge's device (default: the run's)")
    execution_providers: list[ProviderSpec] | None = Field(
        None, description="ONNX Runtime providers (default: the run's on the run's device, else the device's own)"
    )
    batch_size: int = Field(8, ge=1, description="Prompts generated together")
    max_new_tokens: int = Field(256, ge=1)
    until: list[str] = Field(default_factory=list, description="Stop strings (the reply is cut at the first)")
    generation_kwargs: dict[str, Any] = Field(
        default_factory=dict, description="More generation options (transformers' names, e.g. temperature)"
    )

    @field_validator("execution_providers", mode="before")
    @classmethod
    def _providers(cls, value: Any) -> list[ProviderSpec] | None:
        return normalize_providers(value)


#: A judge's ``model``: a model config as input_model's, validated by its model type's ``Config`` (no default type).
MODEL_FORM = SpecForm(
    params=False,
    missing="missing required key: a judge model needs a type (HfModel, GenAIModel...)",
    model=lambda runtime: runtime.Config,
    make=lambda runtime, config: config,
    explain=None,
)


def model_config(raw: dict[str, Any]) -> Any:
    """The judge's model config, validated by its model type (paths as written)."""
    from olive_eval.runtimes.base import runtime_registry

    try:
        return runtime_registry.build(raw, form=MODEL_FORM)
    except SpecError as exc:
        raise JudgeSpecError(f"model.{exc.key}", exc.message) from None


def located_model_config(raw: dict[str, Any], base_dir: Path, allow_download: bool) -> Any:
    """The judge's model config with its paths resolved beside the run's config; a missing file, or a name that
    needs a download the run does not allow, is a spec error at its key."""
    config = model_config(raw)
    config.resolve_paths(base_dir)
    problem = config.path_problem(allow_download)
    if problem is not None:
        raise JudgeSpecError(f"model.{problem[0]}", problem[1])
    return config


class ModelSource(JudgeSource):
    Spec: ClassVar[type[JudgeSpec]] = ModelJudgeSpec

    @classmethod
    def check(cls, spec: JudgeSpec) -> None:
        """The model's type and keys, and that it generates text; its files are checked with the plan, against
        the config's folder and under the run's download policy (:meth:`model`)."""
        assert isinstance(spec, ModelJudgeSpec)
        cls._check_generates(model_config(spec.model))

    @staticmethod
    def _check_generates(config: Any) -> None:
        """A model whose type (or task) cannot generate text cannot judge: refused with the config, not when the
        run builds the judge. A model that only knows once loaded (a Python model) is checked then."""
        from olive_eval.lm_eval.adapters import GENERATE
        from olive_eval.lm_eval.serving import requests_of

        served = requests_of(config)
        if served is None or GENERATE in served:
            return
        task = getattr(config, "task", None)
        key, what = ("task", f"{config.type} with task {task} does") if task else ("type", f"{config.type} models do")
        raise JudgeSpecError(
            f"model.{key}",
            f"{what} not generate text; a judge model must generate text "
            "(an HfModel of task text-generation, a GenAIModel, a PythonModel)",
        )

    @classmethod
    def model(cls, spec: JudgeSpec, base_dir: Path, allow_download: bool) -> JudgeModel:
        assert isinstance(spec, ModelJudgeSpec)
        config = located_model_config(spec.model, base_dir, allow_download)
        for key, script, name, script_dir in config.user_functions():
            try:
                load_function(script, name, script_dir)
            except ConfigError as exc:
                raise JudgeSpecError(f"model.{key}", exc.message) from None
        return JudgeModel(config, spec.device, spec.execution_providers)

    @classmethod
    def build(
        cls, spec: JudgeSpec, model: JudgeModel | None = None, runtime: Any = None
    ) -> tuple[BatchCall | OneCall, bool, dict[str, Any]]:
        assert isinstance(spec, ModelJudgeSpec)
        if model is None or runtime is None:
            raise EvaluationError(
                "a model judge runs on a model the run loads (its device, providers and download policy); "
                "evaluate the judged metric in a run, or judge with a function outside one"
            )
        from olive_eval.lm_eval import lm_eval_package

        lm_eval_package()  # a model judge generates through the lm-eval adapter: name the extra when it is missing
        from lm_eval.api.instance import Instance

        from olive_eval.lm_eval.adapters import GENERATE
        from olive_eval.lm_eval.options import AdapterOptions
        from olive_eval.lm_eval.serving import adapter_for, served_by

        config = model.config
        if GENERATE not in served_by(runtime):
            raise EvaluationError(f"judge model '{config.display_name()}' does not generate text")
        adapter = adapter_for(runtime, AdapterOptions(batch_size=spec.batch_size))
        gen = {"until": list(spec.until), "max_gen_toks": spec.max_new_tokens, **spec.generation_kwargs}
        gen.setdefault("do_sample", False)

        def call(prompts: list[str]) -> list[str]:
            requests = [
                Instance(request_type=GENERATE, doc={}, arguments=(p, dict(gen)), idx=i) for i, p in enumerate(prompts)
            ]
            return list(adapter.generate_until(requests))

        identity = {
            "source": "model",
            "model": config.model_dump(mode="json"),
            "runtime": runtime.describe(),
            "generation": gen,
        }
        return call, True, identity


judge_source_registry.register("model", ModelSource)
