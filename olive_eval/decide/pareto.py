"""The Pareto front on the ranked metrics: models no other model dominates."""

from __future__ import annotations

from collections.abc import Sequence

from olive_eval.decide.ranking import Objective
from olive_eval.records.results import ModelResult, RunResult


def dominates(a: Sequence[float], b: Sequence[float]) -> bool:
    """``a`` is at least as good as ``b`` on every objective and better on one; values oriented so that higher
    is better. Equal points do not dominate each other."""
    return not any(x < y for x, y in zip(a, b, strict=True)) and any(x > y for x, y in zip(a, b, strict=True))


def _dominates(a: ModelResult, b: ModelResult, objectives: list[Objective]) -> bool:
    def oriented(model: ModelResult) -> list[float]:
        return [(1.0 if o.higher_is_better else -1.0) * model.metrics[o.key].value for o in objectives]

    return dominates(oriented(a), oriented(b))


def mark_pareto(result: RunResult, objectives: list[Objective]) -> None:
    """Mark models no other model dominates on the ranked metrics (equal points do not dominate).

    An unfinished model's standing is unknown (None).
    """
    complete = [
        m
        for m in result.models.values()
        if m.evaluated and all(o.key in m.metrics and m.metrics[o.key].measured for o in objectives)
    ]
    complete_ids = {id(m) for m in complete}
    for model in result.models.values():
        if model.unfinished:
            model.pareto = None
        else:
            model.pareto = id(model) in complete_ids and not any(_dominates(o, model, objectives) for o in complete)
