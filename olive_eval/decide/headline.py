"""Each model's headline score: one number and its name, as Unitxt's ``score`` and ``score_name``.

A reader comparing runs (or a script reading results.json) wants one number per model without knowing the
config's ranking: the run's ``score`` setting names the sub-type, else the one ranked first.
"""

from __future__ import annotations

from olive_eval.records.results import RunResult


def mark_headline(result: RunResult, score_name: str | None) -> None:
    """Set every model's ``score_name`` and ``score``: the sub-type's value, None where it was not measured
    (failed, undefined, not reached) or when the run has no headline (nothing ranked)."""
    for model in result.models.values():
        model.score_name = score_name
        sub = model.metrics.get(score_name) if score_name is not None else None
        model.score = sub.value if sub is not None and sub.measured else None
