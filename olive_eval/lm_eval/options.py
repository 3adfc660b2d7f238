"""An lm_eval metric's ``metric_config``: which tasks, and how lm-eval runs them; and what an lm-eval adapter over
a loaded model takes from it. Validated without lm-eval."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationInfo, field_validator

from olive_eval.strict_model import LaxPath, StrictModel

#: lm-eval's own seeds (``lm_eval.defaults``): python's ``random``, then numpy, torch and the few-shot sampler.
LM_EVAL_RANDOM_SEED = 0
LM_EVAL_OTHER_SEED = 1234


@dataclass(frozen=True)
class AdapterOptions:
    """What every adapter takes from the metric's ``metric_config``."""

    batch_size: int = 1
    max_length: int | None = None


class LmEvalGeneration(StrictModel):
    """``gen_kwargs``: the generation keys every model type honours, checked before any model loads.

    lm-eval hands a transformers model every key (an unknown one fails inside ``generate()``, after the load)
    while its GenAI backend reads only these and ignores the rest; so any other key is refused, for both."""

    until: list[str] | None = Field(None, description="Stop sequences (or one, as a string).")
    max_gen_toks: int | None = Field(None, gt=0, description="Tokens to generate.")
    max_new_tokens: int | None = Field(None, gt=0, description="transformers' name of max_gen_toks.")
    do_sample: bool | None = None
    temperature: float | None = Field(None, ge=0, description="0: greedy.")
    top_p: float | None = Field(None, gt=0, le=1)
    top_k: int | None = Field(None, ge=0)

    @field_validator("until", mode="before")
    @classmethod
    def _one_stop(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("temperature")
    @classmethod
    def _samples_warm(cls, value: float | None, info: ValidationInfo) -> float | None:
        if info.data.get("do_sample") and not value:
            raise ValueError(
                "do_sample true needs a temperature above 0 (lm-eval's default 0 means greedy: a transformers model "
                "refuses it and lm-eval's GenAI backend decodes greedily); give one, or leave do_sample out"
            )
        return value

    @field_validator("max_new_tokens")
    @classmethod
    def _one_length(cls, value: int | None, info: ValidationInfo) -> int | None:
        if value is not None and info.data.get("max_gen_toks") is not None:
            raise ValueError("max_new_tokens is another name of max_gen_toks; give one")
        return value

    def for_lm_eval(self) -> dict[str, Any]:
        """The keys as every lm-eval backend reads them: the length as ``max_gen_toks``."""
        out = self.model_dump(exclude_none=True)
        if "max_new_tokens" in out:
            out["max_gen_toks"] = out.pop("max_new_tokens")
        return out


class LmEvalOptions(StrictModel):
    """``metric_config`` of an ``lm_eval`` metric (the keys of Olive's ``LMEvaluator`` where they exist)."""

    tasks: list[str] = Field(min_length=1, description="lm-eval task or group names.")
    include_path: list[LaxPath] = Field(
        default_factory=list,
        description="Folders (or YAML files) of local task definitions, relative to the config file.",
    )
    limit: float | None = Field(
        None,
        description="Examples per task: a count when >= 1, a fraction of the task when < 1 (lm-eval's meaning); "
        "default: the whole task.",
    )
    num_fewshot: int | None = Field(None, ge=0, description="Few-shot examples; default: each task's own.")
    batch_size: int = Field(1, ge=1)
    max_length: int | None = Field(None, ge=1, description="Context length of the model's lm-eval adapter.")
    apply_chat_template: bool | str = False
    fewshot_as_multiturn: bool = Field(
        True, description="lm-eval's default: few-shot examples as chat turns (with a chat template)."
    )
    system_instruction: str | None = None
    gen_kwargs: LmEvalGeneration | None = Field(
        None, description="Overrides every generate_until task's generation (the keys every model type honours)."
    )
    seed: int | None = Field(
        None,
        description=f"Every lm-eval seed (python, numpy, torch, few-shot); default: lm-eval's "
        f"({LM_EVAL_RANDOM_SEED}, {LM_EVAL_OTHER_SEED}).",
    )
    bootstrap_iters: int = Field(
        100_000, ge=0, description="lm-eval's bootstrap for the stderr of non-mean metrics (0: no stderr)."
    )

    @field_validator("include_path", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, (str, Path)) else value

    @field_validator("limit")
    @classmethod
    def _positive_limit(cls, value: float | None) -> float | None:
        if value is not None and value <= 0:
            raise ValueError(
                f"limit must be positive: a count of examples (>= 1) or a fraction of each task (< 1), got {value}; "
                "leave it out for the whole task"
            )
        if value is not None and value >= 1 and value != int(value):
            raise ValueError(f"a limit of 1 or more is a count of examples and must be whole, got {value}")
        return value

    def seeds(self) -> dict[str, int]:
        """lm-eval's four seeds, as ``simple_evaluate`` takes them."""
        first, other = (LM_EVAL_RANDOM_SEED, LM_EVAL_OTHER_SEED) if self.seed is None else (self.seed, self.seed)
        return {
            "random_seed": first,
            "numpy_random_seed": other,
            "torch_random_seed": other,
            "fewshot_random_seed": other,
        }

    def limit_value(self) -> int | float | None:
        """lm-eval's ``limit``: an int for a count, a float for a fraction."""
        if self.limit is None:
            return None
        return int(self.limit) if self.limit >= 1 else self.limit

    def run_key(self) -> str:
        """What one lm-eval run shares: metrics whose options differ only in their tasks run together."""
        return json.dumps(self.model_dump(mode="json", exclude={"tasks"}), sort_keys=True)

    @staticmethod
    def resolve_paths(raw: dict[str, Any], base: Path) -> dict[str, Any]:
        """``raw`` with each relative ``include_path`` made absolute against the config's folder."""
        paths = raw.get("include_path")
        if paths is None:
            return raw
        listed = [paths] if isinstance(paths, (str, Path)) else paths
        if not isinstance(listed, list):
            return raw  # validation names the problem
        fixed = [str(p if Path(p).is_absolute() else base / p) if isinstance(p, (str, Path)) else p for p in listed]
        return {**raw, "include_path": fixed}


#: Olive ``LMEvaluator`` keys that olive-eval takes from the model and the run instead, and where to set them.
OLIVE_MODEL_KEYS = {
    "model_class": "the model's type (HfModel, GenAIModel) decides it",
    "execution_provider": "set the run's execution_providers or the model's",
    "provider_options": "set the run's execution_providers with their options",
    "device": "set the run's device",
    "model_args": "set them on the model config",
}
#: Olive ``LMEvaluator`` keys that are lm_eval metric_config keys under the same name.
OLIVE_OPTION_KEYS = (
    "tasks",
    "limit",
    "batch_size",
    "max_length",
    "num_fewshot",
    "apply_chat_template",
    "system_instruction",
    "fewshot_as_multiturn",
    "bootstrap_iters",
)


def olive_lm_evaluator_metrics(block: dict[str, Any]) -> list[dict[str, Any]]:
    """The metrics an Olive ``{"type": "LMEvaluator", "tasks": [...], ...}`` evaluator block means: one lm_eval
    metric ``lm_eval`` measuring every value its tasks report, and Olive's ``size_on_disk`` pseudo-task as a
    size metric. ValueError for a key that belongs on the model or the run here."""
    for key, where in OLIVE_MODEL_KEYS.items():
        if block.get(key) is not None and not (key == "model_class" and block[key] in ("hf", "ortgenai")):
            raise ValueError(f"{key}: olive-eval does not take it from the evaluator block; {where}")
    unknown = sorted(set(block) - set(OLIVE_OPTION_KEYS) - set(OLIVE_MODEL_KEYS) - {"type", "name"})
    if unknown:
        raise ValueError(f"{unknown[0]}: not a key of Olive's LMEvaluator that olive-eval takes")
    options = {k: block[k] for k in OLIVE_OPTION_KEYS if block.get(k) is not None}
    tasks = list(options.get("tasks") or [])
    metrics: list[dict[str, Any]] = []
    if "size_on_disk" in tasks:
        tasks.remove("size_on_disk")
        metrics.append({"name": "size_on_disk", "type": "size_on_disk", "sub_types": [{"name": "bytes"}]})
    if tasks or not metrics:
        metrics.insert(0, {"name": "lm_eval", "type": "lm_eval", "metric_config": {**options, "tasks": tasks}})
    return metrics
