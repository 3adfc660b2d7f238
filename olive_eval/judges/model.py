"""A judge that is a model olive-eval runs and that generates text (an ``HfModel`` text-generation model, a
``GenAIModel``), reached through the runtime interface: the runtime loads it, and its lm-eval adapter
(:func:`olive_eval.lm_eval.serving.adapter_for`, the interface every generating model type serves) generates the replies, with
lm-eval's own stop-string and length handling. This module is the only part of the judges that touches runtimes,
and it is imported only when a spec names ``"type": "model"``; judged metrics never import it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from olive_eval.judges.base import BatchCall, JudgeSource, JudgeSpec, JudgeSpecError, OneCall, judge_source_registry
from olive_eval.registry_spec import SpecError, SpecForm

__all__ = ["ModelJudgeSpec"]


class ModelJudgeSpec(JudgeSpec):
    """``{"type": "model", "model": {a model config, as input_model}, "max_new_tokens": 256, ...}``."""

    model: dict[str, Any] = Field(description="A model config, as input_model (e.g. an HfModel text-generation model)")
    device: Literal["cpu", "gpu"] = "cpu"
    batch_size: int = Field(8, ge=1, description="Prompts generated together")
    max_new_tokens: int = Field(256, ge=1)
    until: list[str] = Field(default_factory=list, description="Stop strings (the reply is cut at the first)")
    generation_kwargs: dict[str, Any] = Field(
        default_factory=dict, description="More generation options (transformers' names, e.g. temperature)"
    )


#: A judge's ``model``: a model config as input_model's, validated by its model type's ``Config`` (no default type).
MODEL_FORM = SpecForm(
    params=False,
    missing="missing required key: a judge model needs a type (HfModel, GenAIModel...)",
    model=lambda runtime: runtime.Config,
    make=lambda runtime, config: config,
    explain=None,
)


def _model_config(raw: dict[str, Any]) -> Any:
    """The judge's model config, its paths resolved against the current folder."""
    from olive_eval.runtimes.base import runtime_registry

    try:
        config = runtime_registry.build(raw, form=MODEL_FORM)
    except SpecError as exc:
        raise JudgeSpecError(f"model.{exc.key}", exc.message) from None
    config.resolve_paths(Path.cwd())
    return config


class ModelSource(JudgeSource):
    Spec: ClassVar[type[JudgeSpec]] = ModelJudgeSpec

    @classmethod
    def check(cls, spec: JudgeSpec) -> None:
        assert isinstance(spec, ModelJudgeSpec)
        config = _model_config(spec.model)
        problem = config.path_problem(False)
        if problem is not None:
            raise JudgeSpecError(f"model.{problem[0]}", problem[1])
        cls._check_generates(config)

    @staticmethod
    def _check_generates(config: Any) -> None:
        """A model whose type (or task) cannot generate text cannot judge: refused with the plan, not when the run
        builds the judge. A model that only knows once loaded (a Python model) is checked then."""
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
    def build(cls, spec: JudgeSpec) -> tuple[BatchCall | OneCall, bool, dict[str, Any]]:
        assert isinstance(spec, ModelJudgeSpec)
        from olive_eval.lm_eval import lm_eval_package

        lm_eval_package()  # a model judge generates through the lm-eval adapter: name the extra when it is missing
        from lm_eval.api.instance import Instance

        from olive_eval.errors import EvaluationError
        from olive_eval.lm_eval.adapters import GENERATE
        from olive_eval.lm_eval.options import AdapterOptions
        from olive_eval.lm_eval.serving import adapter_for, served_by
        from olive_eval.runtimes.base import create_runtime

        config = _model_config(spec.model)
        runtime = create_runtime(config, spec.device, [])
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
