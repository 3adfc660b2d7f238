"""How many threads the C ranking-curve sums (``_curves.c``'s ``class_curve_sums``) sort columns on.

One column per thread, each with enough keys to pay for its start; ``OLIVE_EVAL_CURVE_THREADS`` forces a count
(``1``: the calling thread alone). The sums do not depend on the count: the tests hold 1, 2 and 4 threads equal.
"""

from __future__ import annotations

import os

from olive_eval.cores import usable_cores

__all__ = ["ENV_VAR", "KEYS_PER_THREAD", "MAX_THREADS", "curve_threads"]

#: Keys (rows x columns) per thread: smaller inputs are sorted on the calling thread alone.
KEYS_PER_THREAD = 200_000
#: The most threads the C sums run on.
MAX_THREADS = 4
#: The environment variable that forces a thread count.
ENV_VAR = "OLIVE_EVAL_CURVE_THREADS"


def _forced() -> int | None:
    value = os.environ.get(ENV_VAR, "").strip()
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"environment variable {ENV_VAR} must be a whole number >= 1, got {value!r}")
    return min(int(value), 16)


def curve_threads(rows: int, columns: int) -> int:
    """Threads for ``rows`` x ``columns`` scores: one per usable core, at most :data:`MAX_THREADS`, no more than
    the columns, each with :data:`KEYS_PER_THREAD` keys; or what ``OLIVE_EVAL_CURVE_THREADS`` says."""
    forced = _forced()
    if forced is not None:
        return forced
    return max(1, min(usable_cores(), MAX_THREADS, columns, rows * columns // KEYS_PER_THREAD))
