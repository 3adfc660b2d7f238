"""ROC AUC, average precision and F1 on binary scores: olive-eval's kernels against scikit-learn.

Every figure is a ratio ours / scikit-learn measured in the same process, the best of ``--repeat``
interleaved runs (the machine is shared, the best run is the least disturbed one). Values must agree to
1e-12, or the script exits with status 1.

* ROC AUC            ``curves.binary_roc_auc``      vs ``sklearn.metrics.roc_auc_score``
* average precision  ``curves.binary_average_precision`` vs ``average_precision_score``
* F1 at 0.5          ``curves.binary_f1`` (``score >= 0.5``) vs ``f1_score(y, s >= 0.5)``
* all three          one ``binary_curve`` (one sort) feeding all three vs the three scikit-learn calls

For information, the existing registered kernels: ``auroc.binary_auroc`` and the
``stat_scores`` + ``reduce_stat_scores`` F1 path (torchmetrics' strict ``score > 0.5``).

``--multiclass``: one-vs-rest over ``[N, C]`` softmax scores (default 1M x 10), the median of ``--repeat``
interleaved runs, each against scikit-learn's multiclass call on the same scores:

* ``roc_auc`` (sweep)    ``macro_average(curves.roc_auc(s, y))`` vs ``roc_auc_score(y, s, multi_class="ovr")``
* ``auroc`` macro / weighted  ``auroc.auroc(s, y, task="multiclass", average=...)`` vs the same ``average``
* ``average_precision``  ``macro_average(curves.average_precision(s, y), undefined="zero")`` vs
  ``average_precision_score(one_hot(y), s, average="macro")``

The C class sums sort the columns on up to 4 threads; ``OLIVE_EVAL_CURVE_THREADS=1`` measures one.

Run: ``python bench/bench_curves.py`` (10M scores, a few minutes on 2 cores); ``--n 1000000`` to shrink,
``--ties`` for scores rounded to 3 decimals (many tied scores); ``--multiclass [--float32]``.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import sklearn.metrics as skm
from _timing import best_of, median_of

from olive_eval.metrics.classification import curves as CC
from olive_eval.metrics.classification import stat_scores as K
from olive_eval.metrics.classification.auroc import auroc, binary_auroc

TOL = 1e-12


def all_three(scores: np.ndarray, targets: np.ndarray) -> tuple[float, float, float]:
    curve = CC.binary_curve(scores, targets == 1)
    at = np.searchsorted(-curve.thresholds, -0.5, side="right") - 1  # last distinct score >= 0.5
    tp = int(curve.tps[at]) if at >= 0 else 0
    fp = int(curve.fps[at]) if at >= 0 else 0
    fn = curve.positives - tp
    f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return CC.curve_roc_auc(curve), CC.curve_average_precision(curve), f1


def sklearn_three(scores: np.ndarray, targets: np.ndarray) -> tuple[float, float, float]:
    return (
        skm.roc_auc_score(targets, scores),
        skm.average_precision_score(targets, scores),
        skm.f1_score(targets, scores >= 0.5),
    )


def multiclass(n: int, classes: int, repeat: int, seed: int, dtype: type) -> bool:
    """The one-vs-rest rows; True when every value agrees with scikit-learn."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    logits = rng.normal(size=(n, classes))
    logits[np.arange(n), y] += 1.0
    s = np.exp(logits)
    s /= s.sum(axis=1, keepdims=True)
    s = s.astype(dtype)
    one_hot = np.eye(classes, dtype=np.int64)[y]
    print(f"== multiclass scores: {n:,} x {classes} {np.dtype(dtype).name}, median of {repeat} interleaved")
    cases = {
        "roc_auc (sweep) macro": (
            lambda: CC.macro_average(CC.roc_auc(s, y)),
            lambda: skm.roc_auc_score(y, s, multi_class="ovr", average="macro"),
        ),
        "auroc macro": (
            lambda: auroc(s, y, task="multiclass", num_classes=classes, average="macro"),
            lambda: skm.roc_auc_score(y, s, multi_class="ovr", average="macro"),
        ),
        "auroc weighted": (
            lambda: auroc(s, y, task="multiclass", num_classes=classes, average="weighted"),
            lambda: skm.roc_auc_score(y, s, multi_class="ovr", average="weighted"),
        ),
        "average_precision macro": (
            lambda: CC.macro_average(CC.average_precision(s, y), undefined="zero"),
            lambda: skm.average_precision_score(one_hot, s, average="macro"),
        ),
    }
    ok = True
    print(f"{'metric':<24} {'ours [s]':>9} {'sklearn [s]':>11} {'ours/sklearn':>12}  {'|diff|':>8}")
    for name, (ours, reference) in cases.items():
        times, results = median_of({"ours": ours, "sklearn": reference}, repeat)
        diff = abs(results["ours"] - results["sklearn"])
        ok &= diff <= TOL
        ratio = times["ours"] / times["sklearn"]
        print(f"{name:<24} {times['ours']:>9.3f} {times['sklearn']:>11.3f} {ratio:>12.3f}  {diff:>8.1e}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000_000, help="number of scores (default 10M)")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds; the best time counts")
    parser.add_argument("--ties", action="store_true", help="round scores to 3 decimals (many ties)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--multiclass", action="store_true", help="one-vs-rest over [N, C] scores (default 1M x 10)")
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--float32", action="store_true", help="multiclass scores in float32")
    args = parser.parse_args()
    if args.multiclass:
        n = args.n if args.n != parser.get_default("n") else 1_000_000
        if not multiclass(n, args.classes, args.repeat, args.seed, np.float32 if args.float32 else np.float64):
            print("VALUES DIFFER from scikit-learn by more than 1e-12", file=sys.stderr)
            return 1
        return 0

    rng = np.random.default_rng(args.seed)
    targets = (rng.random(args.n) < 0.3).astype(np.int64)
    scores = 1.0 / (1.0 + np.exp(-rng.normal(0.8 * targets, 1.0)))
    if args.ties:
        scores = np.round(scores, 3)
    print(f"== binary scores: n={args.n:,}, {targets.mean():.1%} positive, ties={args.ties}, best of {args.repeat}")

    cases = {
        "ROC AUC": (lambda: CC.binary_roc_auc(scores, targets), lambda: skm.roc_auc_score(targets, scores)),
        "average precision": (
            lambda: CC.binary_average_precision(scores, targets),
            lambda: skm.average_precision_score(targets, scores),
        ),
        "F1 @ 0.5": (lambda: CC.binary_f1(scores, targets, 0.5), lambda: skm.f1_score(targets, scores >= 0.5)),
        "all three (one sort)": (lambda: all_three(scores, targets), lambda: sklearn_three(scores, targets)),
    }
    failed = False
    print(f"{'metric':<22} {'ours [s]':>9} {'sklearn [s]':>11} {'ours/sklearn':>12}  {'max |diff|':>10}")
    for name, (ours, reference) in cases.items():
        times, results = best_of({"ours": ours, "sklearn": reference}, args.repeat)
        diff = float(np.max(np.abs(np.subtract(results["ours"], results["sklearn"]))))
        failed |= not diff <= TOL
        ratio = times["ours"] / times["sklearn"]
        print(f"{name:<22} {times['ours']:>9.3f} {times['sklearn']:>11.3f} {ratio:>12.3f}  {diff:>10.1e}")

    print("-- for information: the existing registered kernels (classification.stat_scores, classification.auroc)")
    binary = lambda: K.reduce_stat_scores(  # noqa: E731
        K.stat_scores(scores, targets, task="binary", threshold=0.5), "f1", "micro", task="binary"
    )
    times, results = best_of(
        {
            "binary_auroc": lambda: binary_auroc(scores, targets),
            "stat_scores f1 (> 0.5)": binary,
            "sklearn f1 (> 0.5)": lambda: skm.f1_score(targets, scores > 0.5),
        },
        max(1, args.repeat - 1),
    )
    print(f"auroc.binary_auroc    {times['binary_auroc']:.3f} s (value {results['binary_auroc']:.15f})")
    f1_ratio = times["stat_scores f1 (> 0.5)"] / times["sklearn f1 (> 0.5)"]
    f1_diff = abs(results["stat_scores f1 (> 0.5)"] - results["sklearn f1 (> 0.5)"])
    print(
        f"stat_scores + reduce F1 (> 0.5)        {times['stat_scores f1 (> 0.5)']:.3f} s, ratio {f1_ratio:.3f}, |diff| {f1_diff:.1e}"
    )
    if failed:
        print("VALUES DIFFER from scikit-learn by more than 1e-12", file=sys.stderr)
    return int(failed)


if __name__ == "__main__":
    sys.exit(main())
