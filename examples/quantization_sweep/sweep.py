"""A model-selection loop over onnxruntime's quantization options for MiniLM, run as one olive-eval session.

Each step proposes one option of ``quantize.OPTIONS``, builds its int8 copy of the fp32 export, and asks the
session whether it meets the goals of ``configs/quantization_sweep.json`` and where it ranks. The baseline
(the fp32 export) is loaded and evaluated once; each candidate is timed in rounds interleaved with it. ::

    python examples/quantization_sweep/sweep.py            # the loop: each step, the best, the Pareto front
    python examples/quantization_sweep/sweep.py --compare  # also the same steps with evaluate() re-run on all
    python examples/quantization_sweep/sweep.py --sequential            # configs/quantization_sweep_sequential.json
    python examples/quantization_sweep/sweep.py --sequential --compare  # that config sequential and in full

``--compare`` then re-runs the loop as a script without a session would: at each step, ``olive_eval.evaluate``
on the config with every candidate so far (the baseline and the earlier candidates evaluated again), and
prints both wall times. Building the models is timed apart and counted in neither. With ``--sequential`` the
loop runs on the sequential config (a fidelity goal decided on as few pairs as it needs, ``sequential.py``), and
``--compare`` runs that config sequentially and in full and exits 1 unless the best and the Pareto front agree.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import quantize  # noqa: E402  (beside this file)
import sequential  # noqa: E402

import olive_eval  # noqa: E402
from olive_eval.records.results import ModelResult, RunResult  # noqa: E402

CONFIG = HERE.parents[1] / "configs" / "quantization_sweep.json"
AUROC, P50, SIZE = "similarity-cosine_auroc", "latency-p50", "size-bytes"
COSINE = "fidelity-cosine_similarity"  # the sequential config's top objective
LABELS = {AUROC: "AUROC", COSINE: "cosine to fp32"}


@dataclass
class Sweep:
    """What the loop found, and what it cost."""

    result: RunResult
    candidates: list[dict[str, Any]]
    evaluate_seconds: float
    build_seconds: float


def candidate(option: quantize.Option, path: Path, processor_path: Path) -> dict[str, Any]:
    """The model config the loop proposes for one built option (absolute paths): the baseline's tokenizer."""
    return {
        "type": "ONNXModel",
        "name": option.name,
        "model_path": str(path.resolve()),
        "processor_path": str(processor_path),
    }


def baseline_processor(config: Path) -> Path:
    """The tokenizer folder the config's baseline uses, resolved as the config resolves it."""
    raw = json.loads(config.read_text(encoding="utf-8"))
    return (config.parent / raw["input_model"]["processor_path"]).resolve()


def _cell(model: ModelResult, key: str) -> str:
    metric = model.metrics.get(key)
    if metric is None or metric.value is None:
        return "-"
    if key == SIZE:
        return f"{metric.value / 1e6:.1f} MB"
    if key == P50:
        ratio = metric.timing.ratio_to_baseline if metric.timing is not None else None
        return f"{metric.value:.1f} ms" + (f" (x{ratio:.2f})" if ratio is not None else "")
    return f"{metric.value:.4f}"


def _yes_no(flag: bool | None) -> str:
    return "-" if flag is None else ("yes" if flag else "no")


def top(result: RunResult) -> str:
    """The top objective's key: the AUROC (the shipped config), the cosine to fp32 (the sequential one)."""
    return result.objectives[0] if result.objectives else AUROC


def table(result: RunResult) -> str:
    """Every model's top objective, p50 (ratio to the baseline's), size, goals and Pareto membership, as Markdown
    (and the examples each candidate used, in a sequential run)."""
    key = top(result)
    used = bool(result.sequential)
    lines = [
        f"| model | {LABELS.get(key, key)} | p50, batch 32 (x baseline) | size | goals met | rank | Pareto front |"
        + (" examples used |" if used else ""),
        "|---|---|---|---|---|---|---|" + ("---|" if used else ""),
    ]
    for name, model in result.models.items():
        label = f"{name} (baseline)" if name == result.baseline else name
        rank = str(result.ranking.index(name) + 1) if name in result.ranking else "-"
        goals = "-" if name == result.baseline else _yes_no(model.goals_met)
        cells = [label, _cell(model, key), _cell(model, P50), _cell(model, SIZE), goals, rank, _yes_no(model.pareto)]
        if used:
            cells.append(", ".join(f"{p.examples} of {p.total}" for p in model.sequential.values()) or "all")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def sweep(
    options: Sequence[quantize.Option],
    *,
    config: Path = CONFIG,
    output_dir: Path | None = None,
    model_dir: Path = quantize.MODEL_DIR,
    source: Path | None = None,
    calibration_cache: Path | None = None,
    report: bool = False,
    full: bool = False,
    untimed: bool = False,
    prebuilt: Mapping[str, Path] | None = None,
) -> Sweep:
    """The loop: for each option, build it from ``source`` (default: the MiniLM fp32 export) into
    ``model_dir``, evaluate it in the session, print where it stands. Static options share one calibration
    per operator set, in ``calibration_cache`` (default: a temporary folder). ``report``: the session writes
    report.html beside results.json at the end. ``full``, ``untimed``: the config without its ``"sequential"``
    key, without its latency metric (``sequential.session_config``). ``prebuilt``: options already built (name →
    file), evaluated as they are rather than built again (``sequential.compare``'s full run takes the sequential
    run's copies)."""
    tokenizer = quantize.minilm.load_tokenizer()
    sentences = quantize.calibration_sentences(quantize.minilm.load_pairs())
    processor = baseline_processor(config)
    proposed, build_seconds, evaluate_seconds = [], 0.0, 0.0
    with contextlib.ExitStack() as stack:
        if calibration_cache is None:
            calibration_cache = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="calibration-")))
        session_config = sequential.session_config(config, full=full, untimed=untimed)
        if isinstance(session_config, dict):  # a dict's relative paths resolve against the working folder
            stack.enter_context(contextlib.chdir(config.parent))
        start = time.perf_counter()
        with olive_eval.Evaluation(session_config, output_dir=output_dir) as session:
            base = session.baseline()
            key = top(session.result)
            print(
                f"baseline {base.name}: {LABELS.get(key, key)} {_cell(base.model, key)}, p50 {_cell(base.model, P50)}"
            )
            evaluate_seconds += time.perf_counter() - start
            for step, option in enumerate(options, 1):
                start = time.perf_counter()
                path = (prebuilt or {}).get(option.name) or quantize.build(
                    option,
                    model_dir / f"{option.name}.onnx",
                    tokenizer=tokenizer,
                    sentences=sentences,
                    cache_dir=calibration_cache,
                    source=source,
                )
                built = time.perf_counter()
                proposed.append(candidate(option, path, processor))
                step_result = session.evaluate(proposed[-1])
                evaluate_seconds += time.perf_counter() - built
                build_seconds += built - start
                stop = f", stopped early by {step_result.early_stopped}" if step_result.early_stopped else ""
                print(
                    f"step {step} {option.name}: {LABELS.get(key, key)} {_cell(step_result.model, key)}, "
                    f"p50 {_cell(step_result.model, P50)}, size {_cell(step_result.model, SIZE)}, "
                    f"goals met {_yes_no(step_result.goals_met)}{stop}, rank {step_result.rank or '-'}; "
                    f"best so far {session.best or '-'} (built in {built - start:.1f} s, "
                    f"evaluated in {time.perf_counter() - built:.1f} s)"
                )
            result = session.result
            print(f"\nbest: {session.best or 'none meets every goal'}; ranking: {', '.join(session.ranking) or '-'}")
            print(f"Pareto front ({', '.join(result.objectives)}): {', '.join(session.pareto) or '-'}\n")
            if report:
                print(f"Report: {session.report()}\n")
    print(table(result))
    return Sweep(result, proposed, evaluate_seconds, build_seconds)


def reevaluate(candidates: Sequence[dict[str, Any]], *, config: Path = CONFIG) -> tuple[float, RunResult]:
    """The same steps without a session: ``evaluate`` on the baseline and every candidate so far, each step."""
    raw = json.loads(config.read_text(encoding="utf-8"))
    start = time.perf_counter()
    result = None
    with tempfile.TemporaryDirectory(prefix="reevaluate-") as scratch, contextlib.chdir(config.parent):
        for step in range(1, len(candidates) + 1):
            step_config = {**raw, "candidates": list(candidates[:step])}
            result = olive_eval.evaluate(step_config, output_dir=Path(scratch) / f"step{step}")
            print(f"re-evaluated step {step}: {step + 1} models, {time.perf_counter() - start:.1f} s so far")
    assert result is not None
    return time.perf_counter() - start, result


def failed_models(result: RunResult) -> list[str]:
    """The models that did not finish ok, each with its status and error."""
    return [f"{name} ({model.status}: {model.error})" for name, model in result.models.items() if model.status != "ok"]


def failure(result: RunResult) -> str | None:
    """Why the sweep counts as failed (a model that did not finish ok, or no candidate meeting every goal)."""
    failed = failed_models(result)
    if failed:
        return f"{', '.join(failed)} did not finish ok"
    return None if result.best is not None else "no candidate meets every goal"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compare", action="store_true", help="also time the steps re-evaluating everything")
    parser.add_argument("--sequential", action="store_true", help="the sequential config (with --compare: vs full)")
    parser.add_argument("--untimed", action="store_true", help="with --sequential: without the latency metric")
    parser.add_argument("--only", nargs="+", choices=[o.name for o in quantize.OPTIONS], help="sweep these options")
    parser.add_argument("--output-dir", type=Path, help="results.json's folder (default: the config's output_dir)")
    parser.add_argument("--report", action="store_true", help="write report.html beside results.json (plotly)")
    parser.add_argument(
        "--allow-no-best",
        action="store_true",
        help="exit 0 when no candidate meets every goal (a model that fails still exits 1): whether a latency goal "
        "is met depends on the CPU, which a smoke run of the loop does not test",
    )
    options = parser.parse_args(argv)
    chosen = [o for o in quantize.OPTIONS if options.only is None or o.name in options.only]
    if options.sequential and options.compare:
        compared = sequential.compare(
            sweep, chosen, output_dir=options.output_dir, report=options.report, untimed=options.untimed
        )
        print("\n" + "\n".join(compared.lines()))
        problem = failure(compared.sequential) or failure(compared.full)
        if not compared.agree or problem is not None:
            raise SystemExit(f"FAILED: {problem or 'the sequential and the full run disagree'}")
        return
    config = sequential.SEQUENTIAL_CONFIG if options.sequential else CONFIG
    found = sweep(chosen, config=config, output_dir=options.output_dir, report=options.report, untimed=options.untimed)
    print(
        f"\nsession: {found.evaluate_seconds:.1f} s evaluating {len(chosen)} candidates and the baseline "
        f"(plus {found.build_seconds:.1f} s building the models)"
    )
    if options.compare:
        seconds, _ = reevaluate(found.candidates, config=config)
        print(
            f"re-evaluating everything each step: {seconds:.1f} s; the session saved "
            f"{seconds - found.evaluate_seconds:.1f} s ({found.evaluate_seconds / seconds:.2f} of the time)"
        )
    problem = failure(found.result)
    if problem is not None and not (options.allow_no_best and not failed_models(found.result)):
        raise SystemExit(f"FAILED: {problem}")  # exit 1, as olive-eval's CLI when a model fails: CI runs the loop


if __name__ == "__main__":
    main()
