"""Inside Olive's loop: a workflow with olive-eval as its evaluator against the same workflow with Olive's own.

One template, two workflows that differ only in the evaluator's ``type`` (``OnnxEvaluator`` against
``OliveEval`` with its ``user_script``): the quickstart digits model, ``OnnxQuantization`` (quant_mode and
per_channel searchable) then ``OnnxPeepholeOptimizer``, joint/sequential search, so Olive evaluates the input
model and four candidates; Olive's metrics (accuracy with accuracy_score, macro f1_score and precision; latency
``--latency-sub-type`` with the same warmup and repeat counts) over the quickstart digits test set repeated to
``--rows`` rows, through Olive's data config (the example's ``digits_data.py`` as its user_script).

The evaluation time of a workflow is the sum of Olive's ``LocalSystem.evaluate_model`` calls (timed by a
wrapper; passes and Olive's bookkeeping are left out). Both workflows run in this process, alternating over
``--rounds`` rounds, each round in fresh cache and output folders (Olive's evaluation cache never hits, and
each OliveEval round is a session of its own), after one pair that is not counted (imports and first use of
both evaluators). Printed: per round and median, ours / Olive's (target <= 0.6),
the split input model / candidates, and that the accuracy values both evaluators give each model agree
(Olive's float32 against olive-eval's float64, within 1e-6) on the same model files.

Run: ``python bench/bench_olive_workflow.py [--rows 10000] [--rounds 3] [--profile]`` (``--profile``: the
top functions of the OliveEval calls by cumulative time, over all rounds).
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import itertools
import logging
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("OLIVE_DISABLE_TELEMETRY", "1")  # before Olive is imported

from olive.systems.local import LocalSystem
from olive.workflows import run as olive_run

import olive_eval.olive.user_script as oe_script
from olive_eval.olive.evaluator import SESSIONS

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "examples/quickstart/models/digits_fp32.onnx"
DATA = ROOT / "examples/quickstart/data/digits_test.jsonl"
DATA_SCRIPT = ROOT / "examples/olive_workflow/digits_data.py"
EVALUATORS = {"olive": {"type": "OnnxEvaluator"}, "ours": {"type": "OliveEval", "user_script": oe_script.__file__}}
TOLERANCE = 1e-6


@dataclass
class Call:
    """One ``evaluate_model`` call: the model file it evaluated, its seconds and what it returned."""

    model: str
    seconds: float
    values: dict[str, float] = field(default_factory=dict)


def workflow(tmp: Path, evaluator: str, rows_file: Path, args: argparse.Namespace, round_dir: Path) -> dict:
    """The template with ``evaluator``'s evaluator entry; everything else is the same for both."""
    latency = {"warmup_num": args.warmup, "repeat_test_num": args.repeat}
    multiclass = {"task": "multiclass", "num_classes": 10}
    metrics = [
        {
            "name": "accuracy",
            "type": "accuracy",
            "data_config": "digits",
            "sub_types": [
                {
                    "name": "accuracy_score",
                    "priority": 1,
                    "goal": {"type": "max-degradation", "value": 0.01},
                    "metric_config": multiclass,
                },
                {"name": "f1_score", "metric_config": {**multiclass, "average": "macro"}},
                {"name": "precision", "metric_config": {**multiclass, "average": "macro"}},
            ],
        },
        {
            "name": "latency",
            "type": "latency",
            "data_config": "digits",
            "sub_types": [{"name": args.latency_sub_type, "priority": 2, "metric_config": latency}],
        },
    ]
    entry: dict[str, Any] = {**EVALUATORS[evaluator], "metrics": metrics}
    if evaluator == "ours":
        entry["output_dir"] = str(round_dir / "olive-eval")
    return {
        "input_model": {"type": "ONNXModel", "model_path": str(MODEL)},
        "systems": {
            "local": {
                "type": "LocalSystem",
                "accelerators": [{"device": "cpu", "execution_providers": ["CPUExecutionProvider"]}],
            }
        },
        "data_configs": [
            {
                "name": "digits",
                "type": "DataContainer",
                "user_script": str(tmp / DATA_SCRIPT.name),
                "load_dataset_config": {"type": "digits_dataset", "data_files": str(rows_file)},
                "post_process_data_config": {"type": "digits_argmax"},
                "dataloader_config": {"batch_size": 64},
            }
        ],
        "evaluators": {"e": entry},
        "passes": {
            "quant": {
                "type": "OnnxQuantization",
                "data_config": "digits",
                "quant_mode": "SEARCHABLE_VALUES",
                "per_channel": "SEARCHABLE_VALUES",
                "precision": "int8",
                "activation_type": "uint8",
                "weight_type": "int8",
                "quant_format": "QDQ",
                "calibrate_method": "MinMax",
                "reduce_range": False,
                "quant_preprocess": True,
            },
            "peephole": {"type": "OnnxPeepholeOptimizer"},
        },
        "search_strategy": {"execution_order": "joint", "sampler": "sequential"},
        "evaluator": "e",
        "host": "local",
        "target": "local",
        "cache_dir": str(round_dir / "cache"),
        "output_dir": str(round_dir / "output"),
        "log_severity_level": 3,
    }


def repeated_rows(source: Path, target: Path, n: int) -> Path:
    """The first ``n`` rows of ``source`` repeated cyclically: a test set large enough for the pass to matter."""
    lines = [line for line in source.read_text().splitlines() if line]
    target.write_text("\n".join(itertools.islice(itertools.cycle(lines), n)) + "\n")
    return target


def file_digest(path: str) -> str:
    """The model file's content hash (a folder: its .onnx files), to show both workflows evaluated the same files."""
    p = Path(path)
    files = sorted(p.rglob("*.onnx")) if p.is_dir() else [p]
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.read_bytes())
    return digest.hexdigest()[:12]


def timed_evaluate_model(calls: list[Call], profiler: cProfile.Profile | None) -> Callable:
    """``LocalSystem.evaluate_model`` timed, each call appended to ``calls`` (the profiler, if any, on around it)."""
    original = LocalSystem.evaluate_model

    def evaluate_model(self: LocalSystem, model_config: Any, evaluator_config: Any, accelerator: Any) -> Any:
        if profiler is not None:
            profiler.enable()
        start = time.perf_counter()
        result = original(self, model_config, evaluator_config, accelerator)
        seconds = time.perf_counter() - start
        if profiler is not None:
            profiler.disable()
        values = {key: float(sub.value) for key, sub in result.root.items()}
        calls.append(Call(file_digest(model_config.config["model_path"]), seconds, values))
        return result

    return evaluate_model


def run_workflow(evaluator: str, config: dict, profiler: cProfile.Profile | None) -> list[Call]:
    """One ``olive run`` of ``config`` with the timer on; the OliveEval session is closed as part of the time."""
    calls: list[Call] = []
    original = LocalSystem.evaluate_model
    LocalSystem.evaluate_model = timed_evaluate_model(calls, profiler)
    try:
        olive_run(config)
    finally:
        LocalSystem.evaluate_model = original
    if evaluator == "ours":
        start = time.perf_counter()
        SESSIONS.close_all()
        calls[-1].seconds += time.perf_counter() - start
    return calls


def check_agreement(olive: list[Call], ours: list[Call]) -> float:
    """The largest accuracy difference over the models both evaluated; fails unless they are the same files."""
    if [c.model for c in olive] != [c.model for c in ours]:
        sys.exit(
            f"the two workflows evaluated different models: {[c.model for c in olive]} / {[c.model for c in ours]}"
        )
    worst = 0.0
    for a, b in zip(olive, ours, strict=True):
        keys = sorted(k for k in a.values if k.startswith("accuracy-"))
        if keys != sorted(k for k in b.values if k.startswith("accuracy-")):
            sys.exit(f"different accuracy keys: {sorted(a.values)} / {sorted(b.values)}")
        worst = max([worst, *(abs(a.values[k] - b.values[k]) for k in keys)])
    if worst > TOLERANCE:
        sys.exit(f"accuracy values differ by {worst:.3g} (> {TOLERANCE}): not a like-for-like comparison")
    return worst


def one_round(
    tmp: Path, rows_file: Path, args: argparse.Namespace, r: int, profiler: cProfile.Profile | None
) -> dict[str, list[Call]]:
    """Both workflows in fresh folders (Olive's first in even rounds, ours first in odd ones): their calls."""
    calls: dict[str, list[Call]] = {}
    for evaluator in ["olive", "ours"] if r % 2 == 0 else ["ours", "olive"]:
        round_dir = tmp / f"r{r}-{evaluator}"
        config = workflow(tmp, evaluator, rows_file, args, round_dir)
        calls[evaluator] = run_workflow(evaluator, config, profiler if evaluator == "ours" else None)
        shutil.rmtree(round_dir, ignore_errors=True)
    return calls


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000, help="evaluation rows (the 360 test rows repeated)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency-sub-type", default="avg", choices=["avg", "p50"])
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--profile", action="store_true", help="print where the OliveEval calls spend their time")
    args = parser.parse_args(argv)
    logging.getLogger("olive.engine.engine").addFilter(lambda record: record.levelno >= logging.WARNING)  # history
    profiler = cProfile.Profile() if args.profile else None
    ratios, splits, worst = [], [], 0.0
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        shutil.copy(DATA_SCRIPT, tmp / DATA_SCRIPT.name)
        rows_file = repeated_rows(DATA, tmp / "digits_rows.jsonl", args.rows)
        cwd = Path.cwd()
        os.chdir(tmp)  # Olive writes some files relative to the working directory
        try:
            print(
                f"digits MLP, {args.rows} rows, accuracy x3 + latency {args.latency_sub_type} "
                f"({args.warmup}+{args.repeat}); seconds in LocalSystem.evaluate_model"
            )
            one_round(tmp, rows_file, args, -1, None)  # not counted: imports and first use of both evaluators
            for r in range(args.rounds):
                calls = one_round(tmp, rows_file, args, r, profiler)
                worst = max(worst, check_agreement(calls["olive"], calls["ours"]))
                total = {e: sum(c.seconds for c in calls[e]) for e in calls}
                first = {e: calls[e][0].seconds for e in calls}
                rest = {e: total[e] - first[e] for e in calls}
                ratios.append(total["ours"] / total["olive"])
                splits.append((first["ours"] / first["olive"], rest["ours"] / rest["olive"]))
                print(
                    f"round {r + 1}: {len(calls['olive'])} calls each; Olive {total['olive']:.3f}s (input "
                    f"{first['olive']:.3f} + candidates {rest['olive']:.3f}), ours {total['ours']:.3f}s (input "
                    f"{first['ours']:.3f} + candidates {rest['ours']:.3f}); ours / Olive = {ratios[-1]:.3f}"
                )
        finally:
            os.chdir(cwd)
    print(f"accuracy values agree on every model: largest difference {worst:.2g} (tolerance {TOLERANCE})")
    print(f"median ours / Olive total evaluation time = {statistics.median(ratios):.3f} (target <= 0.6)")
    print(
        f"  input model {statistics.median(s[0] for s in splits):.3f}, "
        f"candidates {statistics.median(s[1] for s in splits):.3f}"
    )
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(35)


if __name__ == "__main__":
    main()
