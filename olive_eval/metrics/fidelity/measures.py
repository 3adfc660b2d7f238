"""The fidelity measures: a candidate's raw output against the baseline's, per example, so every value has a
bootstrap interval and takes paired goals. Each reads the pass's ``logits`` (the output the post-process starts
from) and the baseline's, or, with ``output_name``, that named output of the model (``output.<name>``), or, with
``compare: "prediction"``, the post-process's result (a sentence embedding after ``mean_pooling``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, model_validator

from olive_eval.metrics.base import Kind, Metric, Score
from olive_eval.metrics.fidelity import kernels
from olive_eval.registry import Registry
from olive_eval.strict_model import StrictModel

#: The prefix of the fields a pass gives with the baseline's outputs (``baseline.logits``).
BASELINE = "baseline."
#: The kind of work of the token-level measures: each model fed the baseline's generated tokens.
TEACHER_FORCED = "teacher_forced"

#: Fidelity measures by name (the ``fidelity`` type's own sub-types).
fidelity_registry: Registry[type[Metric]] = Registry(
    "fidelity measure", packages=("olive_eval.metrics.fidelity.measures",), base=Metric
)


def register_measure(cls: type[Metric]) -> type[Metric]:
    fidelity_registry.register(cls.name, cls)
    return cls


class OutputConfig(StrictModel):
    output_name: str | None = Field(
        None, description="The model output to compare (multi-output models); default: the post-process's"
    )
    compare: Literal["output", "prediction"] = Field(
        "output",
        description="output: a raw model output (the post-process's, or output_name); prediction: the "
        "post-process's result (a pooled sentence embedding, probabilities)",
    )

    @model_validator(mode="after")
    def _one_source(self) -> OutputConfig:
        if self.compare == "prediction" and self.output_name is not None:
            raise ValueError(
                "output_name picks a raw model output and compare 'prediction' the post-process's result: give one"
            )
        return self


class SoftmaxConfig(OutputConfig):
    temperature: float = Field(1.0, gt=0, description="The softmax's temperature, applied to both outputs")


class TopKConfig(OutputConfig):
    k: int = Field(5, ge=1, description="How many of the largest classes are compared")


def output_field(config: Any) -> str:
    """The pass field a measure compares: the raw output the post-process starts from, the named one, or the
    post-process's result."""
    if getattr(config, "compare", "output") == "prediction":
        return "prediction"
    name = getattr(config, "output_name", None)
    return "logits" if name is None else f"output.{name}"


class FidelityMeasure(Metric):
    """A measure of the candidate's output (first field) against the baseline's (second)."""

    Config: ClassVar[type[StrictModel]] = OutputConfig
    kernel: ClassVar[Callable[..., np.ndarray]]

    def __init__(self, config: StrictModel | None = None, aggregation: str | None = None) -> None:
        super().__init__(config, aggregation)
        field = output_field(self.config)
        self.reads = (field, BASELINE + field)  # type: ignore[misc]  # per instance: the output it compares

    def statistics(self, candidate: Any, baseline: Any) -> np.ndarray:
        """The kernel on the two outputs, with the measure's own options (``k``, ``temperature``)."""
        options = self.config.model_dump(exclude={"output_name", "compare"})
        return type(self).kernel(candidate, baseline, **options)


@register_measure
class Top1Agreement(FidelityMeasure):
    """Share of examples (of positions, for sequence outputs) whose largest class is the baseline's."""

    name = "top1_agreement"
    higher_is_better = True
    kind = Kind.INSTANCE
    example_range = (0.0, 1.0)
    kernel = staticmethod(kernels.top1_agreement)


@register_measure
class TopKAgreement(FidelityMeasure):
    """Overlap of the candidate's and the baseline's ``k`` largest classes, as a share of ``k``."""

    name = "topk_agreement"
    higher_is_better = True
    kind = Kind.INSTANCE
    example_range = (0.0, 1.0)
    Config = TopKConfig
    kernel = staticmethod(kernels.topk_agreement)


@register_measure
class KLDivergence(FidelityMeasure):
    """KL(baseline ‖ candidate) of the softmaxes, natural log, mean over examples."""

    name = "kl_divergence"
    higher_is_better = False
    kind = Kind.INSTANCE
    Config = SoftmaxConfig
    kernel = staticmethod(kernels.kl_divergence)


@register_measure
class JSDivergence(FidelityMeasure):
    """Jensen-Shannon divergence of the softmaxes, natural log, mean over examples."""

    name = "js_divergence"
    higher_is_better = False
    kind = Kind.INSTANCE
    Config = SoftmaxConfig
    kernel = staticmethod(kernels.js_divergence)


@register_measure
class CosineSimilarity(FidelityMeasure):
    """Mean over examples of the cosine of the candidate's and the baseline's output vectors."""

    name = "cosine_similarity"
    higher_is_better = True
    kind = Kind.INSTANCE
    example_range = (-1.0, 1.0)  # each example's cosine (the kernel clips rounding past the ends)
    kernel = staticmethod(kernels.cosine_similarity)


@register_measure
class MaxAbsError(FidelityMeasure):
    """The largest absolute difference of any output element over all examples."""

    name = "max_abs_error"
    higher_is_better = False
    kind = Kind.INSTANCE
    aggregation = "max"
    kernel = staticmethod(kernels.max_abs_error)


@register_measure
class OutputMSE(FidelityMeasure):
    """Mean squared difference over all output elements (examples weighted by their elements)."""

    name = "output_mse"
    higher_is_better = False
    kind = Kind.MAP_REDUCE
    kernel = staticmethod(kernels.squared_error)

    def reduce(self, statistics: np.ndarray) -> Score:
        total, count = np.asarray(statistics, dtype=np.float64).reshape(-1, 2).sum(axis=0)
        return Score(float(total / count)) if count else Score(math.nan, undefined="no output elements")

    def finalize_totals(self, totals: np.ndarray) -> np.ndarray:
        totals = np.asarray(totals, dtype=np.float64).reshape(-1, 2)
        with np.errstate(invalid="ignore", divide="ignore"):
            return totals[:, 0] / totals[:, 1]


@register_measure
class SignalToNoise(FidelityMeasure):
    """10·log10 of the baseline's output energy over the energy of the difference, in dB."""

    name = "snr_db"
    higher_is_better = True
    kind = Kind.MAP_REDUCE
    kernel = staticmethod(kernels.signal_and_noise)

    def reduce(self, statistics: np.ndarray) -> Score:
        signal, noise = np.asarray(statistics, dtype=np.float64).reshape(-1, 2).sum(axis=0)
        if noise == 0:
            return Score(math.nan, undefined="the outputs are identical: there is no noise to measure")
        if signal == 0:
            return Score(math.nan, undefined="the baseline's output is all zeros: there is no signal to measure")
        return Score(float(10 * np.log10(signal / noise)))

    def finalize_totals(self, totals: np.ndarray) -> np.ndarray:
        totals = np.asarray(totals, dtype=np.float64).reshape(-1, 2)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = totals[:, 0] / totals[:, 1]
            return np.where((totals[:, 1] > 0) & (totals[:, 0] > 0), 10 * np.log10(ratio), np.nan)


class TokenMeasure(Metric):
    """A generation measure over the baseline's greedy continuation, teacher-forced through the candidate: its
    per-example values come from the ``teacher_forced`` kind of work, not from a pass's fields."""

    kind = Kind.INSTANCE
    reads: ClassVar[tuple[str, ...]] = ()


@register_measure
class TokenAgreement(TokenMeasure):
    """Share of the baseline's generated tokens that are the candidate's most likely next token."""

    name = "token_agreement"
    higher_is_better = True


@register_measure
class TokenKL(TokenMeasure):
    """Mean per-token KL(baseline ‖ candidate) of the next-token distributions on the baseline's continuation."""

    name = "token_kl"
    higher_is_better = False


#: The measures the ``teacher_forced`` kind of work measures.
TOKEN_MEASURES = ("token_agreement", "token_kl")
