"""A sweep of clearly good and clearly bad candidates, full against sequential (issue 33's bar).

10,000 labelled examples; a baseline at 0.90 accuracy and candidates at 0.93-0.96 (clearly within a 0.02
max-degradation goal at 95% confidence) and 0.60-0.84 (clearly outside it). Every model sleeps ``--delay``
seconds per example, as a real model costs time per example. The same sweep runs in full and with
``"sequential": {"min_examples": 250}`` (doubling chunks, betting confidence sequence).

Printed, median of ``--repeats`` rounds, with the load average:
* candidate examples, sequential / full (target <= 0.25);
* the sweep's wall time (baseline included), sequential / full (target <= 0.5);
and a check that every candidate's goal decision and the ranking equal the full run's.

Run: ``python bench/bench_sequential_sweep.py`` (about a minute and a half on 2 cores).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from olive_eval import evaluate  # noqa: E402
from tests.engine.sequential_sweep import Sweep  # noqa: E402

GOOD = {"good_93": 0.93, "good_94": 0.94, "good_96": 0.96}
BAD = {"bad_60": 0.60, "bad_75": 0.75, "bad_84": 0.84}


def one_round(root: Path, n: int, delay: float) -> tuple[float, float, bool]:
    """(candidate examples ratio, wall ratio, decisions equal) of one full and one sequential sweep."""
    sweep = Sweep(root, n=n, delay=delay)
    candidates = {**GOOD, **BAD}
    started = time.perf_counter()
    full = evaluate(sweep.config(candidates, batch_size=100))
    full_seconds = time.perf_counter() - started
    full_examples = sum(full.models[name].passes["d"]["examples"] for name in candidates)
    config = sweep.config(candidates, sequential={"min_examples": 250}, batch_size=100)
    config["output_dir"] = str(root / "out_sequential")
    started = time.perf_counter()
    sequential = evaluate(config)
    sequential_seconds = time.perf_counter() - started
    used = sum(sequential.models[name].sequential["d"].examples for name in candidates)
    same = sequential.ranking == full.ranking and all(
        sequential.models[name].goals_met == full.models[name].goals_met for name in candidates
    )
    for name in candidates:
        record = sequential.models[name].sequential["d"]
        state = record.goals["acc-accuracy_score"].state
        print(f"  {name}: {state} after {record.examples:,} of {record.total:,} (full run: goals met = "
              f"{full.models[name].goals_met})")  # fmt: skip
    print(f"  full {full_seconds:.2f} s, sequential {sequential_seconds:.2f} s")
    return used / full_examples, sequential_seconds / full_seconds, same


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--delay", type=float, default=0.0002, help="seconds per example of each model call")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    examples, walls, equal = [], [], []
    for i in range(args.repeats):
        print(f"round {i + 1}:")
        with tempfile.TemporaryDirectory() as tmp:
            share, wall, same = one_round(Path(tmp), args.examples, args.delay)
        examples.append(share)
        walls.append(wall)
        equal.append(same)
    load = os.getloadavg()[0]
    print(f"load average {load:.2f}; {len(GOOD)} good and {len(BAD)} bad candidates, {args.examples:,} examples")
    print(f"candidate examples, sequential / full: {statistics.median(examples):.3f} (target <= 0.25)")
    print(f"sweep wall time, sequential / full:    {statistics.median(walls):.3f} (target <= 0.5)")
    print(f"decisions and ranking equal the full run's: {all(equal)}")
    if not all(equal):
        sys.exit(1)


if __name__ == "__main__":
    main()
