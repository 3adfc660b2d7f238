"""The formulas of Valor's LLM-guided metrics over parsed verdicts: pure functions, no judge, no config."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["any_yes", "context_precision", "correctness_f1", "proportion"]


def proportion(verdicts: Sequence[bool], empty: float) -> float:
    """The share of "yes" verdicts; ``empty`` when there are none (bias and toxicity: 0 with no opinions)."""
    return sum(verdicts) / len(verdicts) if verdicts else empty


def correctness_f1(prediction_supported: Sequence[bool], reference_present: Sequence[bool]) -> float:
    """Answer correctness: tp / (tp + (fp + fn) / 2), 0 without a true positive.

    tp: prediction statements the reference supports; fp: those it does not; fn: reference statements the
    prediction does not contain."""
    tp = sum(prediction_supported)
    fp = len(prediction_supported) - tp
    fn = len(reference_present) - sum(reference_present)
    return tp / (tp + 0.5 * (fp + fn)) if tp else 0.0


def context_precision(verdicts: Sequence[bool]) -> float:
    """sum_k precision@k * v_k / sum_k v_k, with precision@k the share of "yes" among the first k; 0 if no "yes"."""
    hits, total = 0, 0.0
    for k, useful in enumerate(verdicts, start=1):
        if useful:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


def any_yes(rows: Sequence[Sequence[bool]]) -> list[bool]:
    """Per position, "yes" if any row says yes (context precision over several references)."""
    return [any(column) for column in zip(*rows, strict=True)] if rows else []
