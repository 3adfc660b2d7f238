"""Bootstrap benchmarks: olive-eval's seeded bootstrap against the references it replaces.

Every figure is a ratio measured in the same process and run (median of a few repeats):

* bootstrap speed   a 1000-resample percentile CI (95 %, seed 42) of a mean over 1,000,000 float64
                     instance scores, through the path a user instance metric takes
                     (``resampling.confidence_interval(ExampleStats(metric, statistics=scores), ...)``), over
                     ``scipy.stats.bootstrap(..., vectorized=True, batch=B)`` for B in 10/50/100, the
                     fastest of which is the reference (target ours/ref <= 0.5). ``batch=None`` is
                     skipped: it would hold 1000 x 1e6 int64 indices plus the gathered float64 values,
                     about 16 GB. Both draw the same indices, so the intervals should be identical.
* global-metric CI  binary F1 over 100,000 instances, 1000 resamples: the map/reduce path (statistics
                     computed once, then summed per resample) over recomputing F1 from scratch on each
                     resample (what a global metric costs), and over sklearn.metrics.f1_score per
                     resample (timed on 100 resamples, scaled to 1000). Target speed-up >= 20x.

Run: ``python bench/bench_bootstrap.py`` (about two to three minutes on 2 cores).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.stats
import sklearn.metrics as skm

from olive_eval.metrics import get_metric, metric_registry, register_metric, resampling, stats
from olive_eval.metrics.resampling import ExampleStats

N_SCORES = 1_000_000
N_F1 = 100_000
N_RESAMPLES = 1000
SEED = 42
LEVEL = 0.95
SCIPY_BATCHES = (10, 50, 100)
SKLEARN_RESAMPLES = 100
SCORE_METRIC = "bench_bootstrap_score"


def timed(func: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Median wall time of ``repeat`` calls, and the last call's result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def fmt(ci: tuple[float, float]) -> str:
    return f"[{ci[0]:.17g}, {ci[1]:.17g}]"


def bench_mean_ci(repeat: int = 2) -> None:
    print(f"== bootstrap speed: percentile CI of a mean, n={N_SCORES:,}, {N_RESAMPLES} resamples, seed {SEED}")
    scores = np.random.default_rng(0).lognormal(0.0, 1.0, N_SCORES)

    def score(prediction: Any, reference: Any) -> float:  # never called: the scores are given
        return float(prediction == reference)

    register_metric(name=SCORE_METRIC, higher_is_better=True, kind="instance")(score)
    try:
        metric = get_metric(SCORE_METRIC)
        value = metric.reduce(scores).value

        def ours() -> tuple[float, float]:
            sample = ExampleStats(metric, statistics=scores)
            return resampling.confidence_interval(sample, value, "percentile", N_RESAMPLES, LEVEL, SEED)

        t_ours, ci_ours = timed(ours, repeat)
    finally:
        metric_registry.unregister(SCORE_METRIC)

    def kernel() -> tuple[float, float]:  # the 1-column fast path of the same kernel, for comparison
        theta_b = stats.additive_distribution(scores[:, None], lambda t: t[:, 0] / N_SCORES, N_RESAMPLES, SEED)
        return stats.interval(theta_b, value, LEVEL, "percentile")

    t_kernel, ci_kernel = timed(kernel, repeat)

    scipy_runs = {}
    for batch in SCIPY_BATCHES:

        def reference(batch: int = batch) -> tuple[float, float]:
            result = scipy.stats.bootstrap(
                (scores,),
                np.mean,
                vectorized=True,
                n_resamples=N_RESAMPLES,
                confidence_level=LEVEL,
                method="percentile",
                random_state=np.random.default_rng(SEED),
                batch=batch,
            )
            return float(result.confidence_interval.low), float(result.confidence_interval.high)

        scipy_runs[batch] = timed(reference, repeat)
        print(f"scipy.stats.bootstrap batch={batch:<4} {scipy_runs[batch][0]:7.2f} s  CI {fmt(scipy_runs[batch][1])}")
    print("scipy.stats.bootstrap batch=None skipped: 1000 x 1e6 int64 indices + gathered float64 = ~16 GB")
    best = min(scipy_runs, key=lambda b: scipy_runs[b][0])
    t_ref, ci_ref = scipy_runs[best]
    print(f"ours (resampling.confidence_interval, instance metric, mean) {t_ours:7.2f} s  CI {fmt(ci_ours)}")
    print(f"kernel only (stats.additive_distribution, 1 column)          {t_kernel:7.2f} s  CI {fmt(ci_kernel)}")
    print(f"reference = scipy batch={best}: {t_ref:.2f} s")
    print(f"ratio ours/ref   = {t_ours / t_ref:.2f}  (target <= 0.5)")
    print(f"ratio kernel/ref = {t_kernel / t_ref:.2f}")
    diff = max(abs(a - b) for a, b in zip(ci_ours, ci_ref, strict=True))
    diff_kernel = max(abs(a - b) for a, b in zip(ci_kernel, ci_ref, strict=True))
    print(f"|ours - scipy| endpoints: {diff:.3g}; |kernel - scipy|: {diff_kernel:.3g} (same draws)")


def bench_global_f1(repeat: int = 2) -> None:
    print(f"\n== global-metric CI cost: binary F1, n={N_F1:,}, {N_RESAMPLES} resamples, seed {SEED}")
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 2, N_F1)
    scores = np.clip(0.5 * labels + 0.6 * rng.random(N_F1) - 0.05, 0.0, 1.0)  # an informative classifier
    metric = get_metric("f1_score", {"task": "binary"})
    value = metric.compute(scores, labels).value

    def map_reduce() -> np.ndarray:  # statistics computed once (included), then summed per resample
        sample = ExampleStats(metric, fields=(scores, labels))
        return resampling.distribution(sample, N_RESAMPLES, SEED)

    def from_scratch() -> np.ndarray:
        return stats.resampled_calls(
            N_F1, lambda idx: metric.compute(scores[idx], labels[idx]).value, N_RESAMPLES, SEED
        )

    t_map, theta_map = timed(map_reduce, 3)
    t_scratch, theta_scratch = timed(from_scratch, repeat)

    draws = next(stats.index_chunks(N_F1, SKLEARN_RESAMPLES, SEED))
    decisions = scores > 0.5

    def sklearn_calls() -> np.ndarray:
        return np.array([skm.f1_score(labels[idx], decisions[idx]) for idx in draws])

    t_sklearn, theta_sklearn = timed(sklearn_calls, repeat)
    t_sklearn_scaled = t_sklearn * N_RESAMPLES / SKLEARN_RESAMPLES
    agree = np.max(np.abs(theta_sklearn - theta_scratch[:SKLEARN_RESAMPLES]))

    ci_map = stats.interval(theta_map, value, LEVEL, "percentile")
    ci_scratch = stats.interval(theta_scratch, value, LEVEL, "percentile")
    print(f"F1 = {value:.6f}")
    print(f"map/reduce (ExampleStats + resampling.distribution)        {t_map:8.3f} s  percentile CI {fmt(ci_map)}")
    print(f"from scratch (stats.resampled_calls, metric.compute) {t_scratch:8.3f} s  percentile CI {fmt(ci_scratch)}")
    print(
        f"sklearn.metrics.f1_score per resample                {t_sklearn_scaled:8.3f} s  "
        f"({t_sklearn:.3f} s for {SKLEARN_RESAMPLES} resamples x {N_RESAMPLES // SKLEARN_RESAMPLES})"
    )
    print(f"speed-up vs from scratch = {t_scratch / t_map:.1f}x  (target >= 20x)")
    print(f"speed-up vs sklearn      = {t_sklearn_scaled / t_map:.1f}x")
    print(f"ratio map/reduce / from scratch = {t_map / t_scratch:.4f}")
    diff = max(abs(a - b) for a, b in zip(ci_map, ci_scratch, strict=True))
    print(f"|map/reduce - from scratch| CI endpoints: {diff:.4f} (different draws: Monte Carlo)")
    print(f"from scratch vs sklearn on the same {SKLEARN_RESAMPLES} resamples: max |diff| {agree:.3g}")


def main() -> None:
    start = time.perf_counter()
    bench_mean_ci()
    bench_global_f1()
    print(f"\ntotal {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
