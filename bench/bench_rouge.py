"""ROUGE benchmark: olive-eval's ``rouge1``, ``rouge2`` and ``rougeL`` sub-types against rouge-score's scorer in a
loop, same texts, same run; ``rougeLsum`` beside them.

The corpus is generated, seeded: 100,000 pairs of 8-40 words drawn from 20,000 pseudo-words with Zipf weights;
the reference is capitalized here and there and punctuated, the prediction keeps 70% of its words (the others
redrawn) and is shuffled in 30% of the pairs. Timed:

* rouge-score: ``RougeScorer(["rouge1", "rouge2", "rougeL"]).score(reference, prediction)`` for every pair (one
  tokenization per pair for the three types);
* ours: the three registered sub-types as a prediction pass calls them (``statistics``: type checks, the
  tokenization of the column, the kernel; then ``reduce``), one after the other, each tokenizing again.

``rougeLsum`` (reference lines: the words in 3 lines) is timed on ``--lsum-pairs`` pairs, against
``RougeScorer(["rougeLsum"])``. The per-example F-scores must be identical (the script asserts it). Each figure
is the median of ``--repeat`` runs (wall clock), the timed runs taking turns.

Run: ``python bench/bench_rouge.py`` (a few minutes on 2 cores), ``--quick`` for a smoke run.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from _models import zipf_word_pairs
from rouge_score import rouge_scorer

from olive_eval.metrics import get_metric

SEED = 20261124
TYPES = ("rouge1", "rouge2", "rougeL")


def make_corpus(n: int, seed: int = SEED, lines: bool = False) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    preds, refs = [], []
    for pred, ref in zipf_word_pairs(rng, n):
        third = max(len(ref) // 3, 1)
        sep = ".\n" if lines else ", "
        preds.append(" ".join(pred[:third]) + sep + " ".join(pred[third:]) + ".")
        refs.append(" ".join(ref[:third]) + sep + " ".join(ref[third : 2 * third]) + sep + " ".join(ref[2 * third :]))
    return preds, refs


def reference(preds: list[str], refs: list[str], types: tuple[str, ...]) -> dict[str, np.ndarray]:
    scorer = rouge_scorer.RougeScorer(list(types))
    scores = [scorer.score(r, p) for p, r in zip(preds, refs, strict=True)]
    return {t: np.array([s[t].fmeasure for s in scores]) for t in types}


def ours(preds: list[str], refs: list[str], types: tuple[str, ...]) -> dict[str, np.ndarray]:
    out = {}
    for t in types:
        metric = get_metric(t)
        out[t] = metric.statistics(preds, refs)
        metric.reduce(out[t])
    return out


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def compare(label: str, preds: list[str], refs: list[str], types: tuple[str, ...], repeat: int) -> float:
    times: dict[str, list[float]] = {"ours": [], "rouge-score": []}
    results: dict[str, Any] = {}
    for _ in range(repeat):
        for name, fn in (("ours", ours), ("rouge-score", reference)):
            seconds, results[name] = timed(lambda fn=fn: fn(preds, refs, types))
            times[name].append(seconds)
    for t in types:
        np.testing.assert_array_equal(results["ours"][t], results["rouge-score"][t])
    a, b = statistics.median(times["ours"]), statistics.median(times["rouge-score"])
    print(f"{label}: ours {a:.2f} s, rouge-score {b:.2f} s, ours / rouge-score = {a / b:.3f} (values identical)")
    return a / b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--lsum-pairs", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="2,000 pairs, one run")
    args = parser.parse_args()
    if args.quick:
        args.pairs, args.lsum_pairs, args.repeat = 2000, 500, 1
    preds, refs = make_corpus(args.pairs)
    compare(f"rouge1+rouge2+rougeL on {args.pairs:,} pairs", preds, refs, TYPES, args.repeat)
    preds, refs = make_corpus(args.lsum_pairs, lines=True)
    compare(f"rougeLsum on {args.lsum_pairs:,} pairs (3 lines each)", preds, refs, ("rougeLsum",), args.repeat)


if __name__ == "__main__":
    main()
