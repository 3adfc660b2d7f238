"""The lm_eval metric against lm-eval's own ``simple_evaluate`` (target ≤ 1.05, identical values): the same three
local tasks (``words_mc``, ``words_gen``, ``words_ppl`` of the tests, ``--n`` documents each) on the same
random-weight Llama built here, in one process.

* ours        ``olive_eval.evaluate(config)`` with one ``lm_eval`` metric over the three tasks (no sub-types: every
              value lm-eval reports), output in a fresh folder; ``evaluate()`` runs without the results cache, so
              no repetition is a cache hit;
* reference   what an lm-eval user writes: ``AutoModelForCausalLM`` + ``AutoTokenizer``, ``HFLM(pretrained=...)``,
              ``TaskManager(include_path=..., include_defaults=False)`` and ``simple_evaluate(..., log_samples=True)``
              with the same batch size and ``bootstrap_iters``.

Both sides load the model and the tasks. After one untimed warm-up of each, they alternate over ``--repeats``
rounds (each first in turn); a ratio is the median of the rounds' ratios, with their range. Both run with lm-eval's
log at ERROR and stderr captured (as olive-eval does). HFLM's three request methods, ``simple_evaluate`` and
``TaskManager.load`` are timed on both sides (the same objects serve both), so each run splits into the model's
requests, building the tasks, the rest of ``simple_evaluate`` (lm-eval's own Python) and what lies outside it.
The requests are the same work on both sides (same model, same requests, same answers), so their ratio shows
the machine's noise; "requests' noise removed" puts lm-eval's request time in olive-eval's run. Every
(task, metric, filter) value and stderr olive-eval reports is compared with lm-eval's results dict.

``--profile`` then runs olive-eval once under cProfile and lists its own functions by cumulative time.
Torch runs on one thread (``OMP_NUM_THREADS=1`` unless set), as in the other LLM benches.

Run: ``python bench/bench_lm_eval.py`` (about 80 s on 2 cores).
"""

from __future__ import annotations

import argparse
import functools
import io
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("OMP_NUM_THREADS", "1")  # torch's threads spin under a shared machine's load: one thread

from olive_eval import evaluate  # noqa: E402
from olive_eval.lm_eval.tasks import quiet_lm_eval  # noqa: E402
from tests.lm_eval import lm_tasks  # noqa: E402
from tests.runtimes import llm_models  # noqa: E402

TASKS = list(lm_tasks.TASKS)
REQUESTS = ("loglikelihood", "loglikelihood_rolling", "generate_until")
#: Seconds since the last reset inside HFLM's request methods, ``simple_evaluate``, and ``TaskManager.load``
#: (the tasks built from their YAML and data) inside and outside ``simple_evaluate``.
CLOCKS: dict[str, float] = {"requests": 0.0, "simple_evaluate": 0.0, "task_load_in": 0.0, "task_load_out": 0.0}
_DEPTH = {"simple_evaluate": 0}


def _timed(clock: str | Callable[[], str], fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        name = clock if isinstance(clock, str) else clock()
        _DEPTH["simple_evaluate"] += name == "simple_evaluate"
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            CLOCKS[name] += time.perf_counter() - start
            _DEPTH["simple_evaluate"] -= name == "simple_evaluate"

    return wrapper


def instrument() -> None:
    """Time HFLM's request methods, ``lm_eval.simple_evaluate`` and ``TaskManager.load``: both sides call the
    same objects (olive-eval loads its tasks at plan time, outside ``simple_evaluate``)."""
    import lm_eval
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    for name in REQUESTS:
        setattr(HFLM, name, _timed("requests", getattr(HFLM, name)))
    lm_eval.simple_evaluate = _timed("simple_evaluate", lm_eval.simple_evaluate)
    where = lambda: "task_load_in" if _DEPTH["simple_evaluate"] else "task_load_out"  # noqa: E731
    TaskManager.load = _timed(where, TaskManager.load)


def reference(model_folder: Path, tasks_folder: Path, tasks: list[str], batch_size: int, iters: int) -> dict:
    """lm-eval's own run, as its user writes it, model and tasks loaded here."""
    import lm_eval
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with quiet_lm_eval():  # lm-eval's log at ERROR and stderr captured, as olive-eval runs it
        model = AutoModelForCausalLM.from_pretrained(model_folder).eval()
        tokenizer = AutoTokenizer.from_pretrained(model_folder)
        lm = HFLM(pretrained=model, tokenizer=tokenizer, batch_size=batch_size, device="cpu")
        manager = TaskManager(include_path=str(tasks_folder), include_defaults=False)
        return lm_eval.simple_evaluate(
            model=lm, tasks=tasks, task_manager=manager, log_samples=True, bootstrap_iters=iters
        )


def config(model_folder: Path, tasks_folder: Path, out: Path, batch_size: int, iters: int) -> dict[str, Any]:
    options = {"tasks": TASKS, "include_path": str(tasks_folder), "batch_size": batch_size, "bootstrap_iters": iters}
    return {
        "input_model": {"type": "HfModel", "name": "base", "model_path": str(model_folder), "task": "text-generation"},
        "metrics": [{"name": "lm", "type": "lm_eval", "metric_config": options}],
        "output_dir": str(out),
    }


def build(root: Path, n: int, hidden: int, layers: int) -> tuple[Path, Path]:
    """The Llama and the tasks; ``words_gen``'s answers come from the model's own greedy text (one lm-eval run
    with placeholder answers), so both filters score above zero, as in the tests."""
    model = llm_models.build_tiny_llama(root / "hf", hidden_size=hidden, layers=layers)
    tasks = lm_tasks.write_tasks(root / "tasks", ["placeholder"] * n, n)
    first = reference(model, tasks, ["words_gen"], 1, 0)
    by_doc = {s["doc_id"]: s["resps"][0][0] for s in first["samples"]["words_gen"]}
    return model, lm_tasks.write_tasks(tasks, lm_tasks.answers_from([by_doc[i] for i in range(n)]), n)


def compare(ours: Any, theirs: dict[str, Any]) -> tuple[bool, float, int]:
    """Whether every value and stderr lm-eval reports equals olive-eval's (and no sub-type is extra), the largest
    absolute difference, and how many values were compared."""
    metrics = ours.models["base"].metrics
    same, worst, count, seen = True, 0.0, 0, set()
    for task in TASKS:
        reported = theirs["results"][task]
        for key, value in reported.items():
            if "," not in key or "_stderr," in key:
                continue
            name = f"lm-{task}/{key}"
            seen.add(name)
            got = metrics.get(name)
            if got is None:
                same = False
                continue
            metric, _, filt = key.partition(",")
            stderr = reported.get(f"{metric}_stderr,{filt}")
            pairs = [(got.value, float(value))]
            if isinstance(stderr, (int, float)):
                pairs.append((got.stderr, float(stderr)))
            elif got.stderr is not None:
                same = False
            for a, b in pairs:
                count += 1
                if a is None or a != b:
                    same = False
                worst = max(worst, math.inf if a is None else abs(a - b))
    return same and seen == set(metrics), worst, count


def clocked(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """Wall and CPU seconds of ``fn()`` (CPU time moves less with a shared machine's load), and its result."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def profile(model: Path, tasks: Path, out: Path, batch_size: int, iters: int, top: int = 20) -> None:
    """One olive-eval run under cProfile: olive-eval's own functions with the most cumulative time."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    evaluate(config(model, tasks, out, batch_size, iters))
    profiler.disable()
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).sort_stats("cumulative").print_stats("olive_eval/", top)
    print("\n--- one olive-eval run under cProfile: olive_eval/ functions, cumulative seconds ---")
    lines = stream.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if "ncalls" in line)
    print("\n".join(line for line in lines[start:] if line.strip()))


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def split(row: dict[str, float], side: str) -> dict[str, float]:
    """A run's seconds in four parts: HFLM's requests (the model's work), building the tasks, the rest of
    ``simple_evaluate`` (lm-eval's own: requests built, results scored, samples logged, stderrs), and what is
    outside ``simple_evaluate`` (model and tokenizer loaded, HFLM wrapped; olive-eval's plan and results)."""
    inside = row[f"{side}_simple_evaluate"]
    return {
        "HFLM requests (model work)": row[f"{side}_requests"],
        "TaskManager.load (tasks built)": row[f"{side}_task_load_in"] + row[f"{side}_task_load_out"],
        "rest of simple_evaluate": inside - row[f"{side}_requests"] - row[f"{side}_task_load_in"],
        "outside simple_evaluate, other": row[side] - inside - row[f"{side}_task_load_out"],
    }


def report(args: argparse.Namespace, rows: list[dict[str, float]], identical: bool, worst: float, count: int) -> None:
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print(f"Llama {args.layers} layers x hidden {args.hidden}; {args.n} documents per task ({', '.join(TASKS)});")
    print(f"batch size {args.batch_size}, bootstrap_iters {args.bootstrap_iters}; {args.repeats} rounds;")
    print(f"torch threads {os.environ['OMP_NUM_THREADS']}; load average at the end {load}")

    def line(label: str, *columns: list[float]) -> None:
        print(f"{label:36}" + "".join(f"{_spread(c):>24}" for c in columns))

    print(f"{'seconds, median (min-max)':36}{'olive-eval':>24}{'lm-eval':>24}")
    line("whole run", [r["ours"] for r in rows], [r["ref"] for r in rows])
    parts = {side: [split(r, side) for r in rows] for side in ("ours", "ref")}
    for part in parts["ours"][0]:
        line("  " + part, *([p[part] for p in parts[side]] for side in ("ours", "ref")))
    line("whole run, CPU seconds", [r["ours_cpu"] for r in rows], [r["ref_cpu"] for r in rows])
    for stage in ("setup", "load", "lm_eval"):
        line(f"olive-eval stage {stage}", [r["stage_" + stage] for r in rows])
    ratio = [r["ours"] / r["ref"] for r in rows]
    print("ratios ours / lm-eval, median of the rounds' ratios (min-max):")
    line("whole run (target <= 1.05)", ratio)
    print(" " * 36 + "per round: " + " ".join(f"{x:.3f}" for x in ratio))
    line("whole run, CPU seconds", [r["ours_cpu"] / r["ref_cpu"] for r in rows])
    line("HFLM requests (the same work)", [r["ours_requests"] / r["ref_requests"] for r in rows])
    swapped = [(r["ours"] - r["ours_requests"] + r["ref_requests"]) / r["ref"] for r in rows]
    line("whole run, requests' noise removed", swapped)
    line("whole run minus requests", [(r["ours"] - r["ours_requests"]) / (r["ref"] - r["ref_requests"]) for r in rows])
    line("stage lm_eval / simple_evaluate", [r["stage_lm_eval"] / r["ref_simple_evaluate"] for r in rows])
    line("olive-eval's extra seconds", [r["ours"] - r["ref"] for r in rows])
    print(
        f"values identical: {'yes' if identical else 'no'} ({count} values and stderrs each round, "
        f"max abs difference {worst:.3g})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--n", type=int, default=200, help="documents per task")
    parser.add_argument("--hidden", type=int, default=128, help="the Llama's hidden size")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--bootstrap-iters", type=int, default=1000)
    parser.add_argument("--profile", action="store_true", help="then one olive-eval run under cProfile")
    args = parser.parse_args()
    sizes = (args.batch_size, args.bootstrap_iters)
    instrument()
    rows: list[dict[str, float]] = []
    identical, worst, count = True, 0.0, 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model, tasks = build(root, args.n, args.hidden, args.layers)
        evaluate(config(model, tasks, root / "warm", *sizes))  # warm-up: first imports, first HfModel load
        reference(model, tasks, TASKS, *sizes)
        for rep in range(args.repeats):  # olive-eval first, then the reference first: a drift cancels
            row: dict[str, float] = {}
            got: dict[str, Any] = {}
            for side in ("ours", "ref") if rep % 2 == 0 else ("ref", "ours"):
                for clock in CLOCKS:
                    CLOCKS[clock] = 0.0
                if side == "ours":
                    run = functools.partial(evaluate, config(model, tasks, root / f"out{rep}", *sizes))
                    row["ours"], row["ours_cpu"], got["ours"] = clocked(run)
                    row["stage_setup"] = got["ours"].stage_seconds.get("setup", math.nan)
                    stages = got["ours"].models["base"].stage_seconds
                    row["stage_load"], row["stage_lm_eval"] = stages.get("load", math.nan), stages["lm_eval"]
                else:
                    run = functools.partial(reference, model, tasks, TASKS, *sizes)
                    row["ref"], row["ref_cpu"], got["ref"] = clocked(run)
                row |= {f"{side}_{clock}": seconds for clock, seconds in CLOCKS.items()}
            same, diff, count = compare(got["ours"], got["ref"])
            identical, worst = identical and same, max(worst, diff)
            rows.append(row)
        report(args, rows, identical, worst, count)
        if args.profile:
            profile(model, tasks, root / "profiled", *sizes)


if __name__ == "__main__":
    main()
