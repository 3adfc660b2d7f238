"""A goal decided at chunk ends: met once the confidence sequence's lower bound on mean(z) reaches 0, missed once
its upper bound falls below 0, open otherwise. Valid however many chunk ends are looked at."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from olive_eval.decide.sequential.confidence_sequence import check_inputs, excludes, mean_confidence_sequence
from olive_eval.decide.sequential.goal_margins import Margins

#: Codes of :func:`decide_many`.
MET, OPEN, MISSED = 1, 0, -1
STATES = {MET: "met", OPEN: "open", MISSED: "missed"}


@dataclass(frozen=True)
class Decision:
    """``state``: "met" | "missed" | "open"; ``examples`` seen when decided (or at the last checkpoint);
    ``lower``/``upper``: the confidence sequence's bounds on mean(z) at that point."""

    state: str
    examples: int
    lower: float
    upper: float


def check_checkpoints(checkpoints: Sequence[int], n: int) -> np.ndarray:
    ends = np.asarray(list(checkpoints), dtype=np.int64)
    if ends.ndim != 1 or len(ends) == 0:
        raise ValueError("checkpoints must be a non-empty list of example counts")
    if ends[0] < 1 or np.any(np.diff(ends) <= 0) or ends[-1] > n:
        raise ValueError(f"checkpoints must increase strictly within 1..{n} (the examples given), got {ends.tolist()}")
    return ends


def decide_many(
    z: np.ndarray, low: float, high: float, alpha: float, checkpoints: Sequence[int], method: str = "betting"
) -> tuple[np.ndarray, np.ndarray]:
    """Vectorized over sequences (rows of ``z``): each row's state code (MET / MISSED / OPEN) at the first
    checkpoint that decides it, and the examples seen then (the last checkpoint when open)."""
    values = check_inputs(z, low, high, alpha, method)
    ends = check_checkpoints(checkpoints, values.shape[-1])
    above, below = excludes(values[..., : ends[-1]], low, high, alpha, 0.0, method)
    met = above[..., ends - 1] & ~below[..., ends - 1]
    missed = below[..., ends - 1] & ~above[..., ends - 1]
    decided = met | missed
    first = np.where(decided.any(axis=-1), np.argmax(decided, axis=-1), len(ends) - 1)
    at = np.take_along_axis(met, first[..., None], axis=-1)[..., 0]
    gone = np.take_along_axis(missed, first[..., None], axis=-1)[..., 0]
    state = np.where(at, MET, np.where(gone, MISSED, OPEN))
    return state, ends[first]


def decide(margins: Margins, alpha: float, checkpoints: Sequence[int], method: str = "betting") -> Decision:
    """Look only at the checkpoints (chunk ends); met when lower >= 0, missed when upper < 0, else open.

    An empty intersection (lower >= 0 > upper, a probability-alpha event) stays open.
    """
    z = np.asarray(margins.z, dtype=np.float64)
    if z.ndim != 1:
        raise ValueError(f"decide takes one sequence of margins, got shape {z.shape}")
    state, examples = decide_many(z, margins.low, margins.high, alpha, checkpoints, method)
    seen = int(examples)
    lower, upper = mean_confidence_sequence(z[:seen], margins.low, margins.high, alpha, method, points=(0.0,))
    low_at, high_at = float(lower[-1]), float(upper[-1])
    code = int(state)
    if code == MET:
        low_at = max(low_at, 0.0)
    elif code == MISSED:
        high_at = min(high_at, float(np.nextafter(0.0, -1.0)))
    return Decision(STATES[code], seen, low_at, high_at)


def doubling_checkpoints(n: int, first: int) -> list[int]:
    """Chunk ends ``first, 2 first, 4 first, ...`` and ``n``: few looks early, each chunk as big as all before."""
    if first < 1 or n < 1:
        raise ValueError(f"need at least one example per chunk and in all, got first={first}, n={n}")
    ends, end = [], min(first, n)
    while end < n:
        ends.append(end)
        end *= 2
    return [*ends, n]
