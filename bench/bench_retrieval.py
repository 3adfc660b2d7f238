"""The retrieval sub-types (ndcg, mrr, recall_at_k, precision_at_k, map_at_k) against ranx, on 1M scored pairs.

Data: ``--queries`` (default 10,000) x ``--candidates`` (default 100) random scores (distinct, so both sides rank
alike) and grades 0-2. For each measure, in the same process, best of ``--repeat`` interleaved runs:

* **ours**: the registered metric's ``statistics`` (per-query values) on the ``[queries, candidates]`` arrays a
  data column of equal-length lists gives; and, second, on a list of one array per query (stacked, as they
  are of one length here);
* **ranx**: ``ranx.evaluate(qrels, run, "ndcg@10", return_mean=False)`` on ``Qrels`` / ``Run`` objects built
  beforehand (building them from dicts is not timed; it is printed). Each measure's first call is made before
  timing and left out: it loads or compiles ranx's numba kernels. The evaluate call still converts the run and
  qrels to numba lists each time (hashing doc ids), as every ranx user's call does;
* **ranx kernel**: ranx's numba function alone (``ranx.metrics.ndcg(qrels, run, k)``) on numba lists made
  beforehand: a floor no user call reaches, printed for scale.

Printed ratios: ours / ranx evaluate, and ours / the ranx kernel. Per-query values must equal ranx's to 1e-9, or
the script exits with status 1. ranx runs its kernels in parallel over the machine's cores; ours use one.

Run: ``python bench/bench_retrieval.py`` (about a minute to build ranx's objects, then a few seconds a measure).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from olive_eval.metrics import get_metric

#: (our sub-type, its metric_config, ranx's name, ranx's kernel and its k)
MEASURES: list[tuple[str, dict[str, Any], str, str, int]] = [
    ("ndcg", {"k": 10}, "ndcg@10", "ndcg", 10),
    ("ndcg", {}, "ndcg", "ndcg", 0),
    ("mrr", {}, "mrr", "reciprocal_rank", 0),
    ("mrr", {"k": 10}, "mrr@10", "reciprocal_rank", 10),
    ("recall_at_k", {"k": 10}, "recall@10", "recall", 10),
    ("precision_at_k", {"k": 10}, "precision@10", "precision", 10),
    ("map_at_k", {"k": 10}, "map@10", "average_precision", 10),
]


def best(func: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = func()
        times.append(time.perf_counter() - start)
    return min(times), out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--candidates", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    import ranx
    from ranx import Qrels, Run

    n, c = args.queries, args.candidates
    rng = np.random.default_rng(0)
    scores = rng.random((n, c))
    grades = rng.integers(0, 3, (n, c))
    rows, grade_rows = list(scores), list(grades)
    names = [f"q{q:06d}" for q in range(n)]  # ranx orders queries by id: this is their order
    docs = [f"d{j}" for j in range(c)]
    start = time.perf_counter()
    run = Run({q: dict(zip(docs, s.tolist(), strict=True)) for q, s in zip(names, scores, strict=True)})
    qrels = Qrels({q: dict(zip(docs, g.tolist(), strict=True)) for q, g in zip(names, grades, strict=True)})
    run_lists, qrels_lists = run.to_typed_list(), qrels.to_typed_list()
    print(f"{n} queries x {c} candidates = {n * c:,} scored pairs; ranx's Run and Qrels built in "
          f"{time.perf_counter() - start:.1f} s (not timed below)")  # fmt: skip
    print(f"{'measure':<16}{'ours':>10}{'ours list':>13}{'ranx':>10}{'kernel':>10}{'ours/ranx':>11}{'/kernel':>9}")
    failed = False
    for name, config, ranx_name, kernel_name, k in MEASURES:
        metric = get_metric(name, config)
        kernel = getattr(ranx.metrics, kernel_name)
        expected = ranx.evaluate(qrels, run, ranx_name, return_mean=False)  # compiles: not timed
        kernel(qrels_lists, run_lists, k)
        t_ours = t_ragged = t_ranx = t_kernel = float("inf")
        for _ in range(args.repeat):  # interleaved, best of each
            t, ours = best(lambda m=metric: m.statistics(scores, grades), 1)
            t_ours = min(t_ours, t)
            t, ragged = best(lambda m=metric: m.statistics(rows, grade_rows), 1)
            t_ragged = min(t_ragged, t)
            t, _ = best(lambda r=ranx_name: ranx.evaluate(qrels, run, r, return_mean=False), 1)
            t_ranx = min(t_ranx, t)
            t, _ = best(lambda f=kernel, kk=k: f(qrels_lists, run_lists, kk), 1)
            t_kernel = min(t_kernel, t)
        if not (np.allclose(ours, expected, rtol=1e-9, atol=1e-12) and np.array_equal(ours, ragged)):
            print(f"{ranx_name}: values differ from ranx's", file=sys.stderr)
            failed = True
        print(
            f"{ranx_name:<16}{t_ours * 1e3:>8.1f}ms{t_ragged * 1e3:>11.1f}ms{t_ranx * 1e3:>8.1f}ms"
            f"{t_kernel * 1e3:>8.1f}ms{t_ours / t_ranx:>11.3f}{t_ours / t_kernel:>9.2f}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
