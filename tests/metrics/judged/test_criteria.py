"""The custom-criteria judge (criteria_score): the config's criteria and scale reach the prompt, the judge's
integer score is parsed within the scale, and the value is the mean of the scored examples."""

from __future__ import annotations

import re

import numpy as np
import pytest
from pydantic import ValidationError

from olive_eval.judges import judges_of, register_judge
from olive_eval.metrics.registry import get_metric

PROMPTS: list[str] = []


@register_judge("criteria_politeness", batched=True)
def politeness(prompts: list[str]) -> list[str]:
    """Scores by the words of the response, and says in the reply the highest score the prompt allows."""
    out = []
    for prompt in prompts:
        PROMPTS.append(prompt)
        response = prompt.split("Response:\n", 1)[1]
        high = int(re.search(r"integer from (\d+) to (\d+)", prompt).group(2))
        score = high if "please" in response else 2 if "thanks" in response else 1
        out.append("not json" if "garbled" in response else f'{{"score": {score}}}')
    return out


def score(texts: list[str], **config) -> tuple[float, np.ndarray, dict]:
    spec = {"function": "criteria_politeness"}
    metric = get_metric("criteria_score", {"judge": spec, "criteria": "The response is polite.", **config})
    judges = judges_of(spec)
    metric.bind_judges(judges)
    try:
        stats = metric.statistics(texts)
        result = metric.reduce(stats)
    finally:
        for judge in judges.values():
            judge.close()
    return result.value, metric.instance_scores(stats), result.details


def test_the_criteria_and_scale_reach_the_prompt_and_the_mean_is_over_scored_examples():
    PROMPTS.clear()
    value, each, details = score(["please sit", "thanks", "go away", "garbled please"])
    assert "The response is polite." in PROMPTS[0] and "scale of 1 to 5" in PROMPTS[0]
    assert value == pytest.approx(np.mean([5, 2, 1]))  # the garbled reply is excluded, not scored
    assert list(each[:3]) == [5, 2, 1] and np.isnan(each[3])
    assert (details["scored"], details["unparseable"]) == (3, 1)


def test_the_scale_takes_effect():
    value, each, _ = score(["please sit", "go away"], scale=[0, 10])
    assert list(each) == [10.0, 1.0] and value == 5.5


def test_a_scale_upside_down_and_a_missing_criteria_are_config_errors():
    with pytest.raises((ValidationError, ValueError), match="lowest score must be below"):
        get_metric("criteria_score", {"judge": {"function": "criteria_politeness"}, "criteria": "x", "scale": [5, 1]})
    with pytest.raises((ValidationError, ValueError), match="criteria"):
        get_metric("criteria_score", {"judge": {"function": "criteria_politeness"}})
