"""Sequential goal decisions, calibrated: candidates exactly at a max-degradation threshold, and clear ones.

Paired 0/1 accuracy, baseline 0.90, goal ``max-degradation 0.01`` (threshold 0.89), margins ``z = c - b + 0.01``
in [-0.99, 1.01] (``goal_margins``). Each of ``--runs`` simulated candidates runs over ``--n`` examples in chunks
as the engine's default schedule does: ``min_examples`` (500), then doubling (1,000, 2,000, 4,000, 8,000), then
the end (``doubling_checkpoints``; ``--chunk`` for fixed chunks instead), and stops at the first chunk end that
decides (met: lower bound >= 0; missed: upper bound < 0).

* ``boundary``: the candidate's population accuracy is exactly 0.89 (wrong where the baseline is right on 3 %,
  right where it is wrong on 2 %): the worst case of "not met", so every "met" is a wrong keep. Its share must be
  <= alpha (5 % at 95 %), shown with its Clopper-Pearson 95 % interval.
* ``clear good`` (0.92) and ``clear bad`` (0.85): every decision must equal the full-data decision (mean of z
  over all ``--n`` examples >= 0), and the mean share of examples used is printed.

Each row is one method: the betting CS (the default), the empirical-Bernstein CS, and the plain percentile
bootstrap (``--resamples``) recomputed at every chunk end, which is not anytime-valid: it keeps boundary
candidates more often than alpha. The script exits 1 when a CS breaks either rule. Seconds are for all runs of a
row: wall time, and this process's CPU time (the machine is shared: the load average is printed).

Run: ``python bench/bench_sequential_calibration.py`` (1,000 runs x 10,000 examples; about a minute or two on
2 cores); ``--runs 200`` for a quick look.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

from olive_eval.decide.sequential.decision import MET, MISSED, OPEN, decide_many, doubling_checkpoints  # noqa: E402
from tests.decide.sequential_simulation import paired_accuracy_margins, repeated_bootstrap  # noqa: E402

#: name -> (candidate wrong where the baseline is right, right where it is wrong): accuracy 0.90 - worse + better
SCENARIOS = {"boundary": (0.03, 0.02), "clear good": (0.01, 0.03), "clear bad": (0.06, 0.01)}
DEGRADATION = 0.01


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def share_interval(count: int, runs: int) -> str:
    ci = stats.binomtest(count, runs).proportion_ci(0.95, method="exact")
    return f"{count / runs:6.1%} [{ci.low:.1%}, {ci.high:.1%}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--min-examples", type=int, default=500)
    parser.add_argument("--chunk", type=int, default=0, help="fixed chunk size instead of doubling")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.chunk:
        checkpoints = sorted({*range(args.chunk, args.n, args.chunk), args.n})
    else:
        checkpoints = doubling_checkpoints(args.n, args.min_examples)
    print(f"{args.runs} runs x {args.n} examples, alpha {args.alpha}, chunk ends {checkpoints}; load {load()}")
    header = f"{'scenario':<11} {'method':<20} {'met':>7} {'missed':>7} {'open':>6} {'wrongly kept [CP 95%]':>24}"
    print(header + f" {'!= full data':>12} {'examples used':>13} {'wall s':>7} {'cpu s':>6}")
    failed = False
    rng = np.random.default_rng(args.seed)
    for name, (worse, better) in SCENARIOS.items():
        z, values = paired_accuracy_margins(rng, args.runs, args.n, worse, better, DEGRADATION)
        full = np.where(z.mean(axis=1) >= 0, MET, MISSED)
        for method in ("betting", "empirical_bernstein", "repeated bootstrap"):
            start, cpu = time.perf_counter(), time.process_time()
            if method == "repeated bootstrap":
                state, examples = repeated_bootstrap(rng, z, values, args.alpha, checkpoints, args.resamples)
            else:
                state, examples = decide_many(z, values[0], values[2], args.alpha, checkpoints, method)
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
            kept = int(np.count_nonzero(state == MET))
            wrong = int(np.count_nonzero((state != OPEN) & (state != full)))
            shares = [np.count_nonzero(state == code) / args.runs for code in (MET, MISSED, OPEN)]
            kept_text = share_interval(kept, args.runs) if name == "boundary" else "-"
            wrong_text = "-" if name == "boundary" else f"{wrong}"
            row = f"{name:<11} {method:<20} {shares[0]:7.1%} {shares[1]:7.1%} {shares[2]:6.1%} {kept_text:>24}"
            print(row + f" {wrong_text:>12} {examples.mean() / args.n:13.1%} {seconds:7.1f} {cpu:6.1f}")
            if method != "repeated bootstrap":
                failed |= name == "boundary" and kept / args.runs > args.alpha
                failed |= name != "boundary" and wrong > 0
    print(f"load {load()}")
    if failed:
        print("FAILED: a confidence sequence kept boundary candidates above alpha or contradicted the full data")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
