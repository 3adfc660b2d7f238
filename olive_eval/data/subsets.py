"""Olive's ``limit`` of a pre-process (speech, vision): the first N rows, or a seeded random fraction."""

from __future__ import annotations

from random import Random


def olive_limit_indices(total: int, limit: float | None, seed: int) -> list[int] | None:
    """Row indices Olive keeps for ``limit`` (None: all): ``limit >= 1`` the first N, ``0 < limit < 1`` that
    fraction chosen with ``random.Random(seed)``, sorted, as Olive's pre-processing picks them."""
    if not limit:
        return None
    if limit < 1:
        n = max(1, int(total * limit))
        return sorted(Random(seed).sample(range(total), min(n, total)))
    return list(range(min(int(limit), total)))
