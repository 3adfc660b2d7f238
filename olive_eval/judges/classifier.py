"""A scoring judge that is a sequence classifier olive-eval runs: a reward model (an ``HfModel`` of task
``text-classification``, an ``AutoModelForSequenceClassification``, or an ``ONNXModel`` export of one), scoring each
(prompt, response) pair by one of its logits (or that logit as a probability).

The engine loads the model with the run's context, as a model judge's (:mod:`olive_eval.engine.run.judges`); this
source tokenizes each pair as the model's tokenizer pairs two texts (``tokenizer(prompts, responses)``, truncated to
``max_length``), calls the runtime on ``batch_size`` pairs at a time and reads the ``logits`` output. A batch the
model refuses fails its pairs, not the run. Imported only when a spec names ``"type": "classifier"``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, field_validator

from olive_eval.data.batch import Batch
from olive_eval.errors import EvaluationError
from olive_eval.judges.base import (
    BatchCall,
    JudgeModel,
    JudgeSource,
    JudgeSpec,
    JudgeSpecError,
    OneCall,
    judge_source_registry,
)
from olive_eval.judges.model import located_model_config, model_config
from olive_eval.runtimes.providers import ProviderSpec, normalize_providers

__all__ = ["ClassifierJudgeSpec"]

#: Past this, a tokenizer's ``model_max_length`` is transformers' "no limit known" placeholder.
_NO_LIMIT = 1_000_000
_DEFAULT_MAX_LENGTH = 512


class ClassifierJudgeSpec(JudgeSpec):
    """``{"type": "classifier", "model": {an HfModel text-classification or ONNXModel config}, "label": ...}``."""

    model: dict[str, Any] = Field(description="The reward model: an HfModel of task text-classification, or ONNXModel")
    device: Literal["cpu", "gpu"] | None = Field(None, description="The model's device (default: the run's)")
    execution_providers: list[ProviderSpec] | None = Field(
        None, description="ONNX Runtime providers (default: the run's on the run's device, else the device's own)"
    )
    batch_size: int = Field(16, ge=1, description="Pairs scored together")
    max_length: int | None = Field(
        None, ge=2, description="Tokens per pair, truncated longest first (default: the tokenizer's limit, else 512)"
    )
    label: int | str | None = Field(
        None, description="The logit read: its index or its name in id2label (default: the only one)"
    )
    output: Literal["logit", "probability"] = Field(
        "logit", description="The logit itself, or its probability (sigmoid for one label, else softmax)"
    )

    @field_validator("execution_providers", mode="before")
    @classmethod
    def _providers(cls, value: Any) -> list[ProviderSpec] | None:
        return normalize_providers(value)


def _labels(folder: Path | None) -> dict[int, str] | None:
    """The model's labels by index, from the ``config.json`` beside its tokenizer (None where there is none)."""
    file = folder / "config.json" if folder is not None else None
    if file is None or not file.is_file():
        return None
    config = json.loads(file.read_text())
    if "id2label" in config:
        return {int(k): str(v) for k, v in config["id2label"].items()}
    return {i: f"LABEL_{i}" for i in range(int(config.get("num_labels", 2)))}


def label_index(label: int | str | None, labels: dict[int, str] | None, width: int | None) -> int:
    """The column of the logits read (``width``: their number, where known); ValueError with one line if none."""
    count = width if width is not None else len(labels) if labels is not None else None
    if label is None:
        if count is not None and count != 1:
            names = ", ".join(labels.values()) if labels else f"0 to {count - 1}"
            raise ValueError(f"the model gives {count} logits ({names}); name the one to read with label")
        return 0
    if isinstance(label, str):
        found = [i for i, name in (labels or {}).items() if name == label]
        if not found:
            known = ", ".join((labels or {}).values()) or "none (no config.json with id2label)"
            raise ValueError(f"no label '{label}'; the model's labels: {known}")
        return found[0]
    if count is not None and not 0 <= label < count:
        raise ValueError(f"label {label} is out of range: the model gives {count} logits")
    return label


def read_scores(logits: np.ndarray, column: int, output: str) -> np.ndarray:
    """One score per row of ``[n, labels]`` logits: the column's logit or its probability."""
    logits = np.asarray(logits, dtype=np.float64).reshape(len(logits), -1)
    if output == "logit":
        return logits[:, column]
    if logits.shape[1] == 1:
        return 1.0 / (1.0 + np.exp(-logits[:, column]))
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return (shifted / shifted.sum(axis=1, keepdims=True))[:, column]


class ClassifierSource(JudgeSource):
    Spec: ClassVar[type[JudgeSpec]] = ClassifierJudgeSpec
    gives: ClassVar[tuple[str, ...]] = ("score",)

    @classmethod
    def check(cls, spec: JudgeSpec) -> None:
        assert isinstance(spec, ClassifierJudgeSpec)
        config = model_config(spec.model)
        if config.type == "HfModel" and config.task != "text-classification":
            raise JudgeSpecError(
                "model.task", f"a reward model is a sequence classifier: task text-classification, not {config.task}"
            )
        if config.type not in ("HfModel", "ONNXModel"):
            raise JudgeSpecError(
                "model.type",
                f"{config.type} is not a sequence classifier; a reward model is an HfModel of task "
                "text-classification or an ONNXModel export of one",
            )

    @classmethod
    def model(cls, spec: JudgeSpec, base_dir: Path, allow_download: bool) -> JudgeModel:
        assert isinstance(spec, ClassifierJudgeSpec)
        config = located_model_config(spec.model, base_dir, allow_download)
        folder = config.processor_folder()
        if folder is None:
            raise JudgeSpecError("model.processor_path", "a reward model needs its tokenizer: give its folder here")
        if not folder.is_dir():
            key = "model.processor_path" if config.type == "ONNXModel" else "model.model_path"
            raise JudgeSpecError(key, f"folder not found: {folder}")
        try:
            label_index(spec.label, _labels(folder), None)
        except ValueError as exc:
            raise JudgeSpecError("label", str(exc)) from None
        return JudgeModel(config, spec.device, spec.execution_providers)

    @classmethod
    def build(
        cls, spec: JudgeSpec, model: JudgeModel | None = None, runtime: Any = None
    ) -> tuple[BatchCall | OneCall, bool, dict[str, Any]]:
        assert isinstance(spec, ClassifierJudgeSpec)
        if model is None or runtime is None:
            raise EvaluationError(
                "a classifier reward runs on a model the run loads (its device, providers and download policy); "
                "evaluate the reward in a run, or score with a function outside one"
            )
        from olive_eval.data.processor import load_processor, tokenizer_of

        folder = model.config.processor_folder()
        tokenizer = tokenizer_of(load_processor(folder))
        labels = _labels(folder)
        limit = getattr(tokenizer, "model_max_length", None) or _NO_LIMIT
        max_length = spec.max_length or (int(limit) if limit < _NO_LIMIT else _DEFAULT_MAX_LENGTH)
        takes = {s.name for s in runtime.input_specs()}

        def score(pairs: list[Any]) -> list[Any]:
            out: list[Any] = []
            for start in range(0, len(pairs), spec.batch_size):
                chunk = pairs[start : start + spec.batch_size]
                try:
                    out.extend(_score_chunk(chunk).tolist())
                except Exception as exc:  # the model refused this batch: its pairs fail, the others go on
                    out.extend([exc] * len(chunk))
            return out

        def _score_chunk(chunk: list[Any]) -> np.ndarray:
            encoded = tokenizer(
                [p for p, _ in chunk],
                [r for _, r in chunk],
                truncation=True,
                max_length=max_length,
                padding=True,
                return_tensors="np",
            )
            columns = {k: np.asarray(v, dtype=np.int64) for k, v in encoded.items() if not takes or k in takes}
            outputs = runtime.predict(Batch(columns, list(columns)))
            logits = np.asarray(outputs["logits"] if "logits" in outputs else next(iter(outputs.values())))
            logits = logits.reshape(len(chunk), -1)
            return read_scores(logits, label_index(spec.label, labels, logits.shape[1]), spec.output)

        identity = {
            "source": "classifier",
            "model": model.config.model_dump(mode="json"),
            "runtime": runtime.describe(),
            "label": spec.label,
            "output": spec.output,
            "max_length": max_length,
        }
        return score, True, identity


judge_source_registry.register("classifier", ClassifierSource)
