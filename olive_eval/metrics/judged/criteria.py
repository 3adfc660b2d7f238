"""A judged metric whose criteria the user writes (Unitxt's LLM-as-judge with a criteria, DeepEval's G-Eval): the
config gives the criteria and the integer scale; the prompt, the parsing and the per-example statistics are the
judged metrics' own (``criteria`` template, :func:`~olive_eval.metrics.judged.parsing.parse_score`)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from olive_eval.metrics.judged.base import Failed, Issue, JudgedConfig, JudgedMetric, text_of
from olive_eval.metrics.judged.parsing import parse_score
from olive_eval.metrics.registry import register_metric


class CriteriaConfig(JudgedConfig):
    criteria: str = Field(min_length=1, description="What a good response does, in the judge's words")
    scale: list[int] = Field(
        default_factory=lambda: [1, 5],
        min_length=2,
        max_length=2,
        description="[lowest, highest] score the judge gives",
    )

    @model_validator(mode="after")
    def _scale(self) -> CriteriaConfig:
        low, high = self.scale
        if low >= high:
            raise ValueError(f"scale: the lowest score must be below the highest, got [{low}, {high}]")
        return self


@register_metric
class CriteriaScore(JudgedMetric):
    """The judge's integer score of each prediction against the config's criteria, averaged over the examples
    it scored (unparseable replies and failed calls are counted apart, not scored)."""

    name = "criteria_score"
    higher_is_better = True
    reads = ("prediction",)
    uses = ("criteria",)
    Config = CriteriaConfig

    def judge_examples(self, *columns: list[Any]) -> list[float | Issue]:
        (predictions,) = columns
        config: CriteriaConfig = self.config  # type: ignore[assignment]
        low, high = config.scale
        texts = [text_of(p, "prediction") for p in predictions]
        prompts = [
            None
            if isinstance(t, Failed)
            else self.prompt("criteria", criteria=config.criteria, low=low, high=high, response=t)
            for t in texts
        ]
        replies = self.ask(prompts, lambda reply: parse_score(reply, low, high))
        return [
            t if isinstance(t, Failed) else r if isinstance(r, Issue) else float(r)  # type: ignore[arg-type, misc]
            for t, r in zip(texts, replies, strict=True)
        ]
