"""A generating HfModel's latency under a busy CPU (issue 29, item 24): olive-eval's latency ``p50`` of a tiny GPT-2
decoded by ``decode`` (``max_new_tokens`` 24, a batch of 4 prompts), with the model's ``threads`` set, / the median
of a direct back-to-back ``generate()`` loop on the same tensors with ``torch.set_num_threads`` at the same count,
in one process, while ``--load`` busy-loop processes keep the cores busy.

Before ``threads``, torch ran with its default count (the cores, whatever the load) and the pass and the timing
could run with different counts: the ratio read 2.08 at a load of 7 (0.95 on a quiet machine). It should be about 1.
olive-eval's runs and the direct loops alternate over ``--reps`` repetitions, so both see the same load; the ratio
printed last is the median over repetitions. Unlike ``bench_call_mode.py``, ``OMP_NUM_THREADS`` is left alone: the
thread count is the model's setting (``--threads``, default: the usable cores, as olive-eval's default).

Run: ``python bench/bench_threads.py [--load 7] [--threads N]`` (about a minute).
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from bench_call_mode import GENERATION, traced_gpt2  # noqa: E402
from bench_call_mode import config as call_mode_config  # noqa: E402
from transformers.utils import logging as transformers_logging  # noqa: E402

from olive_eval import evaluate  # noqa: E402
from olive_eval.cores import usable_cores  # noqa: E402
from olive_eval.runtimes.torch_threads import torch_threads  # noqa: E402


def busy() -> None:
    """One core's worth of background load, until terminated."""
    while True:
        pass


def config(folder: Path, data: Path, out: Path, runs: int, threads: int) -> dict[str, Any]:
    """bench_call_mode's latency config of the same model, with the model's thread count set."""
    run = call_mode_config(folder, data, out, runs)
    run["input_model"]["threads"] = threads
    return run


def direct_p50(lm: Any, tensors: dict[str, Any], runs: int, threads: int) -> float:
    """The median of a back-to-back ``generate()`` loop at ``threads``, in ms."""
    seconds = []
    with torch_threads(threads), torch.inference_mode():
        for _ in range(3):
            lm.generate(**tensors, **GENERATION)
        for _ in range(runs):
            started = time.perf_counter()
            lm.generate(**tensors, **GENERATION)
            seconds.append(time.perf_counter() - started)
    return float(np.median(seconds)) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40, help="timed calls per repetition, each side")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--load", type=int, default=7, help="busy-loop processes in the background")
    parser.add_argument("--threads", type=int, default=usable_cores(), help="the model's threads, both sides")
    args = parser.parse_args()
    transformers_logging.set_verbosity_error()  # the direct loop's padding-side notice, once per call
    tmp = Path(tempfile.mkdtemp())
    folder, data, timed, lm = traced_gpt2(tmp)
    load = [multiprocessing.get_context("spawn").Process(target=busy, daemon=True) for _ in range(args.load)]
    for process in load:
        process.start()
    print(f"{args.load} busy-loop processes; threads {args.threads} (usable cores {usable_cores()})")
    ratios = []
    try:
        for rep in range(args.reps):
            result = evaluate(config(folder, data, tmp / f"out{rep}", args.runs, args.threads)).models["gpt2"]
            assert result.status == "ok", result.error
            assert result.runtimes[0]["threads"] == args.threads
            reported = result.metrics["lat-p50"].value
            direct = direct_p50(lm, timed["tensors"], args.runs, args.threads)
            ratios.append(reported / direct)
            print(
                f"rep {rep}: olive-eval p50 {reported:.3f} ms, direct generate() {direct:.3f} ms, ratio {ratios[-1]:.3f}"
            )
    finally:
        for process in load:
            process.terminate()
        for process in load:
            process.join()
    print(
        f"latency p50 / direct generate() at {args.threads} threads under a load of {args.load}: "
        f"{statistics.median(ratios):.3f} (median of {args.reps}; target ~1)"
    )


if __name__ == "__main__":
    main()
