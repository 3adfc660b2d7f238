"""Calibration metrics on 1M examples: olive-eval's ``ece``, ``mce`` and ``brier_score`` against their references.

Every figure is a ratio ours / reference measured in the same process, the best of ``--repeat`` interleaved runs
(the machine is shared: the best run is the least disturbed one). Ours is the registered metric as a pass runs it,
``reduce(statistics(scores, labels))`` (inputs checked, confidences, bins, the reliability diagram); the
references run with their defaults (torchmetrics validates its arguments):

* ece  ``get_metric("ece")``  vs torchmetrics ``CalibrationError(task="multiclass", norm="l1")``: update + compute
* mce  ``get_metric("mce")``  vs the same with ``norm="max"``
* brier_score                 vs scikit-learn ``brier_score_loss(labels, probabilities)``, the probabilities from
  scipy's ``softmax`` where ours is given logits (scikit-learn takes probabilities only)

on float32 logits ``[N, C]`` (what the metrics read from a pass) and on float32 probabilities. Values must
agree (torchmetrics bins in float32, scikit-learn sums float32 probabilities in float32: to 1e-4 and 1e-6), or the
script exits with status 1. torch uses its default threads (``--torch-threads`` to change); ours runs on one.
``--adaptive`` adds equal-mass ECE (no reference: its time against uniform ECE's).

Run: ``python bench/bench_calibration.py`` (about a minute on 2 cores); ``--n``, ``--classes`` to change the size.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.special
import torch
from _timing import best_of
from sklearn.metrics import brier_score_loss
from torchmetrics.classification import CalibrationError

from olive_eval.metrics import get_metric


def ours(name: str, scores: np.ndarray, labels: np.ndarray, **config: Any) -> Callable[[], float]:
    metric = get_metric(name, config)
    return lambda: metric.reduce(metric.statistics(scores, labels)).value


def torchmetrics_error(scores: torch.Tensor, labels: torch.Tensor, classes: int, norm: str) -> Callable[[], float]:
    def run() -> float:
        metric = CalibrationError(task="multiclass", num_classes=classes, norm=norm)
        metric.update(scores, labels)
        return float(metric.compute())

    return run


def brier_reference(scores: np.ndarray, labels: np.ndarray, classes: int, logits: bool) -> Callable[[], float]:
    def run() -> float:
        probabilities = scipy.special.softmax(scores, axis=1) if logits else scores
        return brier_score_loss(labels, probabilities, labels=list(range(classes)))

    return run


def softmax(logits: np.ndarray) -> np.ndarray:
    z = np.exp(logits - logits.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1_000_000, help="number of examples (default 1M)")
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5, help="interleaved rounds; the best time counts")
    parser.add_argument("--adaptive", action="store_true", help="also time equal-mass (adaptive) ECE")
    parser.add_argument("--torch-threads", type=int, default=None, help="torch's intra-op threads (default: its own)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    # float32 probabilities sum to one only to float32 precision: scikit-learn says so once per call
    warnings.filterwarnings("ignore", message="The y_prob values do not sum to one")

    rng = np.random.default_rng(args.seed)
    labels = rng.integers(0, args.classes, args.n)
    logits = (rng.normal(size=(args.n, args.classes)) * 2.0).astype(np.float32)
    logits[np.arange(args.n), labels] += 2.0  # a model right about half the time, overconfident
    probabilities = softmax(logits.astype(np.float64)).astype(np.float32)
    target = torch.from_numpy(labels)
    print(
        f"== n={args.n:,} examples, {args.classes} classes, float32, torch threads {torch.get_num_threads()}, "
        f"best of {args.repeat}"
    )
    failed = False
    for what, scores in (("logits", logits), ("probabilities", probabilities)):
        tensor = torch.from_numpy(scores)
        funcs = {
            "ece": ours("ece", scores, labels),
            "ece ref": torchmetrics_error(tensor, target, args.classes, "l1"),
            "mce": ours("mce", scores, labels),
            "mce ref": torchmetrics_error(tensor, target, args.classes, "max"),
            "brier": ours("brier_score", scores, labels),
            "brier ref": brier_reference(scores, labels, args.classes, what == "logits"),
        }
        if args.adaptive:
            funcs["adaptive ece"] = ours("ece", scores, labels, binning="adaptive")
        times, results = best_of(funcs, args.repeat)
        print(f"-- {what}")
        for name, tol in (("ece", 1e-4), ("mce", 1e-4), ("brier", 1e-6)):
            ref = f"{name} ref"
            ratio = times[name] / times[ref]
            agree = abs(results[name] - results[ref]) <= tol
            failed |= not agree
            print(
                f"{name:6s} ours {times[name] * 1e3:8.1f} ms  reference {times[ref] * 1e3:8.1f} ms  "
                f"ratio {ratio:5.2f}  values {results[name]:.6f} / {results[ref]:.6f}{'' if agree else '  DIFFER'}"
            )
        if args.adaptive:
            print(
                f"adaptive ece {times['adaptive ece'] * 1e3:8.1f} ms ({times['adaptive ece'] / times['ece']:.2f}x uniform)"
            )
    if failed:
        print("values differ beyond tolerance", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
