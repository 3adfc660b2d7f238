"""``reward``: Unitxt's Reward, a reward model's score of each (prompt, response) pair, averaged (seed 000's
BulkInstanceMetric: scored in batches, the mean of the instance scores).

The reward model is a scoring judge (:mod:`olive_eval.judges.base`, ``returns: "score"``): a user's function, a
sequence classifier the run loads (``classifier``), or an HTTP endpoint, planned, loaded and closed with the run as
every judge is, and shared with every sub-type naming the same spec. Per-example statistics are the judged metrics'
``[score, scored, unparseable, failed]`` rows, so intervals and paired goals resample examples and a failed pair
stays out of every resample.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from olive_eval.judges.base import JudgeFailure, parse_spec
from olive_eval.metrics.judged.base import Failed, Issue, JudgedMetric, text_of
from olive_eval.metrics.registry import register_metric
from olive_eval.registry import RegistryError
from olive_eval.registry_spec import SpecError
from olive_eval.strict_model import StrictModel

__all__ = ["Reward", "RewardConfig", "scoring"]


def scoring(raw: dict[str, Any]) -> dict[str, Any]:
    """The reward spec as planned: a judge that returns scores (the key it is found by in the run's judges)."""
    return {**raw, "returns": "score"}


class RewardConfig(StrictModel):
    """metric_config of ``reward``."""

    reward: dict[str, Any] = Field(
        description='The reward model: {"function": NAME, "user_script": PATH}, {"type": "classifier", "model": {...}}'
        ' or {"type": "endpoint", "url": ...}'
    )

    @field_validator("reward")
    @classmethod
    def _reward(cls, value: dict[str, Any]) -> dict[str, Any]:
        if value.get("returns", "score") != "score":
            raise PydanticCustomError(
                "nested", "{message}", {"subpath": "returns", "message": "a reward source returns scores"}
            )
        try:
            parse_spec(scoring(value))
        except RegistryError as exc:
            raise PydanticCustomError("nested", "{message}", {"subpath": "type", "message": str(exc)}) from None
        except SpecError as exc:  # located below reward (the source's type, a key): the error names the full path
            raise PydanticCustomError("nested", "{message}", {"subpath": exc.key, "message": exc.message}) from None
        return value

    def judge_specs(self) -> dict[str, dict[str, Any]]:
        """The reward source the run plans and loads (:class:`olive_eval.judges.base.AsksJudges`)."""
        return {"reward": scoring(self.reward)}


@register_metric
class Reward(JudgedMetric):
    """The reward model's score of (``query``, ``prediction``), the mean over the pairs it scored; a pair whose
    score failed is counted apart, not scored. Remap ``query`` with ``fields`` to read the prompt elsewhere."""

    name = "reward"
    higher_is_better = True
    reads = ("query", "prediction")
    Config = RewardConfig

    def judge_spec(self) -> dict[str, Any]:
        return scoring(self.config.reward)  # type: ignore[attr-defined]

    def judge_examples(self, *columns: list[Any]) -> list[float | Issue]:
        queries, predictions = columns
        pairs = [(text_of(q, "query"), text_of(p, "prediction")) for q, p in zip(queries, predictions, strict=True)]
        bad = [next((t for t in pair if isinstance(t, Failed)), None) for pair in pairs]
        wanted = [pair for pair, b in zip(pairs, bad, strict=True) if b is None]
        scores = iter(self.judge(wanted)) if wanted else iter(())  # type: ignore[arg-type]
        out: list[float | Issue] = []
        for b in bad:
            if b is not None:
                out.append(b)
                continue
            score = next(scores)
            out.append(Failed(score.message) if isinstance(score, JudgeFailure) else float(score))
        return out

    def describe(self, rows: np.ndarray, totals: np.ndarray) -> dict[str, Any]:
        """The reward source's identity, and how many pairs were scored or failed (and why, the first few)."""
        return {
            "reward": self.judge_identity(),
            "examples": len(rows),
            "scored": int(totals[1]),
            "failed": int(totals[3]),
            **({"messages": messages} if (messages := self.failure_messages()) else {}),
        }
