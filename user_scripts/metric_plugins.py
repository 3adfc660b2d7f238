"""An example of metrics and aggregations a user registers for olive-eval.

Name this file as ``user_config.user_script`` of an accuracy metric (or ``evaluator.user_script``);
olive-eval imports it before checking the config, so the names below work as sub-types in JSON
(see ``configs/confidence.json``). Test your metric with ``olive_eval.testing.check_metric``.
"""

from __future__ import annotations

import numpy as np

from olive_eval import register_metric
from olive_eval.metrics.aggregations import register_aggregation


@register_aggregation("trimmed_mean")
def trimmed_mean(scores: np.ndarray) -> float:
    """The mean of the scores without the lowest and highest 10%."""
    ordered = np.sort(scores)
    cut = len(ordered) // 10
    return float(np.mean(ordered[cut : len(ordered) - cut]))


@register_metric(name="true_class_margin", higher_is_better=True, kind="instance", input="logits")
def true_class_margin(prediction: np.ndarray, reference: int, temperature: float = 1.0) -> float:
    """Softmax probability of the true class minus the best other class: < 0 means a wrong answer.

    A per-example score, so it gets instance files, confidence intervals and paired goals for free.
    """
    z = np.asarray(prediction, dtype=np.float64) / temperature
    p = np.exp(z - z.max())
    p /= p.sum()
    return float(p[reference] - np.delete(p, reference).max())
