"""Regression, agreement and STS sub-types on 1M examples: olive-eval's metrics against their references.

Every figure is a ratio ours / reference measured in the same process, the best of ``--repeat`` interleaved runs
(the machine is shared; the best run is the least disturbed one). Values must agree to 1e-9, or the script exits
with status 1. "ours" is the registered metric as a run uses it, from Python columns to the value:

* ``compute``: the metric over the whole set (``get_metric(name).compute(predictions, references)``);
* ``stream``: what a pass does, per-example statistics of each batch of 1000 joined, then reduced.

References: scikit-learn's ``mean_squared_error``, ``root_mean_squared_error``, ``mean_absolute_error``,
``r2_score``, ``matthews_corrcoef``, ``cohen_kappa_score``; scipy.stats' ``pearsonr``, ``spearmanr``,
``kendalltau``; for STS, MTEB's computation: ``1 - paired_cosine_distances`` of the two embeddings, then scipy's
``spearmanr`` / ``pearsonr`` against the gold scores. The rank kernels run in C when the extension is built (it is
in a dev install); a last table times their numpy forms (the fallback without a compiler) against scipy.

Run: ``python bench/bench_regression.py`` (1M examples, about a minute on 2 cores); ``--ties`` for values rounded
to one decimal (many tied pairs).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.stats
import sklearn.metrics as skm
from _timing import best_of
from sklearn.metrics.pairwise import paired_cosine_distances

from olive_eval.metrics import get_metric
from olive_eval.metrics.regression import moments, ranks
from olive_eval.metrics.regression.native import moments_extension, ranks_extension

TOL = 1e-9
BATCH = 1000


def streamed(name: str, config: dict | None, columns: tuple[Any, ...]) -> float:
    """The value as a pass makes it: statistics per batch, joined, reduced."""
    metric = get_metric(name, config)
    n = len(columns[0])
    parts = [metric.statistics(*(c[lo : lo + BATCH] for c in columns)) for lo in range(0, n, BATCH)]
    return metric.reduce(metric.concat_statistics(parts)).value


def cases(n: int, ties: bool, seed: int) -> list[tuple[str, dict | None, tuple[Any, ...], Callable[[], float]]]:
    rng = np.random.default_rng(seed)
    truth = rng.normal(3.0, 2.0, n)
    predicted = truth + rng.normal(0.0, 1.5, n)
    if ties:
        truth, predicted = truth.round(1), predicted.round(1)
    labels = rng.integers(0, 10, n)
    guessed = np.where(rng.random(n) < 0.7, labels, rng.integers(0, 10, n))
    first = rng.normal(size=(n, 8)).astype(np.float32)
    second = (first + rng.normal(size=(n, 8)).astype(np.float32)).astype(np.float32)
    gold = (first * second).sum(axis=1).astype(np.float64) + rng.normal(size=n)
    pairs = np.stack([first, second], axis=1)

    def mteb(statistic: Callable[..., Any]) -> Callable[[], float]:
        return lambda: statistic(gold, 1.0 - paired_cosine_distances(first, second)).statistic

    regression = (predicted, truth)
    return [
        ("mse", None, regression, lambda: skm.mean_squared_error(truth, predicted)),
        ("rmse", None, regression, lambda: skm.root_mean_squared_error(truth, predicted)),
        ("mae", None, regression, lambda: skm.mean_absolute_error(truth, predicted)),
        ("r2_score", None, regression, lambda: skm.r2_score(truth, predicted)),
        ("pearson", None, regression, lambda: scipy.stats.pearsonr(predicted, truth).statistic),
        ("spearman", None, regression, lambda: scipy.stats.spearmanr(predicted, truth).statistic),
        ("kendall_tau", None, regression, lambda: scipy.stats.kendalltau(predicted, truth).statistic),
        ("matthews_corrcoef", None, (guessed, labels), lambda: skm.matthews_corrcoef(labels, guessed)),
        ("cohen_kappa", None, (guessed, labels), lambda: skm.cohen_kappa_score(labels, guessed)),
        (
            "cohen_kappa",
            {"weights": "quadratic"},
            (guessed, labels),
            lambda: skm.cohen_kappa_score(labels, guessed, weights="quadratic", labels=np.arange(10)),
        ),
        ("sts_spearman", None, (pairs, gold), mteb(scipy.stats.spearmanr)),
        ("sts_pearson", None, (pairs, gold), mteb(scipy.stats.pearsonr)),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1_000_000, help="examples (default 1M)")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds; the best time counts")
    parser.add_argument("--ties", action="store_true", help="regression values rounded to one decimal")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(
        f"== n={args.n:,}, ties={args.ties}, kernels in {'C' if ranks_extension and moments_extension else 'numpy'}, best of {args.repeat}"
    )
    print(f"{'sub-type':<28}{'reference s':>12}{'compute s':>11}{'ratio':>8}{'stream s':>10}{'ratio':>8}")
    failed = False
    for name, config, columns, reference in cases(args.n, args.ties, args.seed):
        funcs = {
            "reference": reference,
            "compute": lambda name=name, config=config, columns=columns: (
                get_metric(name, config).compute(*columns).value
            ),
            "stream": lambda name=name, config=config, columns=columns: streamed(name, config, columns),
        }
        times, values = best_of(funcs, args.repeat)
        label = name + (f" {config['weights']}" if config else "")
        ref = times["reference"]
        print(
            f"{label:<28}{ref:>12.4f}{times['compute']:>11.4f}{times['compute'] / ref:>8.2f}"
            f"{times['stream']:>10.4f}{times['stream'] / ref:>8.2f}"
        )
        for path in ("compute", "stream"):
            if not abs(values[path] - values["reference"]) <= TOL * max(1.0, abs(values["reference"])):
                print(f"   MISMATCH {path}: {values[path]!r} vs {values['reference']!r}")
                failed = True
    failed |= numpy_forms(args)
    return 1 if failed else 0


def numpy_forms(args: argparse.Namespace) -> bool:
    """The kernels' numpy forms on the same samples against scipy; True on a mismatch."""
    _, _, (x, y), _ = cases(args.n, args.ties, args.seed)[0]
    print(f"\n{'numpy form':<28}{'scipy s':>12}{'numpy s':>11}{'ratio':>8}")
    failed = False
    for name, ours, reference in (
        ("pearson", lambda: moments.pearson(x, y, use_compiled=False), lambda: scipy.stats.pearsonr(x, y).statistic),
        ("spearman", lambda: ranks.spearman(x, y, use_compiled=False), lambda: scipy.stats.spearmanr(x, y).statistic),
        (
            "kendall_tau",
            lambda: ranks.kendall_tau_b(x, y, use_compiled=False),
            lambda: scipy.stats.kendalltau(x, y).statistic,
        ),
    ):
        times, values = best_of({"reference": reference, "numpy": ours}, args.repeat)
        print(
            f"{name:<28}{times['reference']:>12.4f}{times['numpy']:>11.4f}{times['numpy'] / times['reference']:>8.2f}"
        )
        if not abs(values["numpy"] - values["reference"]) <= TOL:
            print(f"   MISMATCH numpy: {values['numpy']!r} vs {values['reference']!r}")
            failed = True
    return failed


if __name__ == "__main__":
    sys.exit(main())
