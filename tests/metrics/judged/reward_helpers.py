"""Scoring ``reward`` outside a full run but through the run's judges (planned and loaded as a run does), and
the reference: the reward model called directly, one pair at a time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from olive_eval.engine.run.context import RunContext
from olive_eval.engine.run.judges import RunJudges, plan_judge
from olive_eval.judges import judge_key
from olive_eval.metrics.judged.reward import scoring
from olive_eval.metrics.registry import get_metric

CPU = RunContext("cpu", (("CPUExecutionProvider", {}),), False, {}, None)


def reward_of(spec: dict[str, Any], queries: list[Any], predictions: list[Any]) -> tuple[float, np.ndarray, dict]:
    """The metric's value, its per-example scores and details, with ``spec`` planned and loaded as in a run."""
    planned = scoring(spec)
    judges = RunJudges({judge_key(planned): plan_judge(planned, Path.cwd(), False)}, CPU)
    metric = get_metric("reward", {"reward": spec})
    metric.bind_judges(judges)
    try:
        stats = metric.statistics(queries, predictions)
        result = metric.reduce(stats)
    finally:
        judges.close()
    return result.value, metric.instance_scores(stats), result.details


def direct_rewards(folder: Path, pairs: list[tuple[str, str]], max_length: int, label: int = 0, output: str = "logit"):
    """The reference: transformers' tokenizer and model from ``folder``, each pair alone (no padding), truncated
    longest first to ``max_length``; the label's logit, or its sigmoid (one label) or softmax probability."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    out = []
    with torch.no_grad():
        for prompt, response in pairs:
            # lists of one: the pair stays a pair with an empty response (``tokenizer(p, "")`` drops a falsy pair)
            enc = tokenizer([prompt], [response], truncation=True, max_length=max_length, return_tensors="pt")
            logits = model(**enc).logits[0].double()
            if output == "probability":
                logits = torch.sigmoid(logits) if len(logits) == 1 else torch.softmax(logits, dim=0)
            out.append(float(logits[label]))
    return np.array(out)
