"""Leave-one-out ROC AUC and average precision for every example, against scikit-learn recomputing the metric
without each example (on a subset, scaled by n: the loop is n calls) and against one scikit-learn call.

``python bench/bench_leave_one_out.py``: prints ours/reference ratios measured in this run.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.metrics import average_precision_score, roc_auc_score

from olive_eval.metrics.classification.leave_one_out import loo_average_precision, loo_roc_auc


def seconds(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    rng = np.random.default_rng(0)
    n, loop = 100_000, 50
    s, y = rng.random(n).round(3), rng.integers(0, 2, n)
    keep = np.arange(n) != 0
    for name, ours, reference in (
        ("roc_auc", loo_roc_auc, roc_auc_score),
        ("average_precision", loo_average_precision, average_precision_score),
    ):
        t_ours = seconds(lambda ours=ours: ours(s, y == 1))
        t_one = seconds(lambda reference=reference: reference(y, s))
        t_loop = seconds(lambda reference=reference: [reference(y[keep], s[keep]) for _ in range(loop)], 1) * n / loop
        print(
            f"{name}: n={n} ours {t_ours * 1e3:.1f} ms; ours/one sklearn call {t_ours / t_one:.2f}; "
            f"ours/sklearn n recomputations (extrapolated from {loop}) {t_ours / t_loop:.2e}"
        )


if __name__ == "__main__":
    main()
