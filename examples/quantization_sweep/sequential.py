"""The sweep run sequentially (``configs/quantization_sweep_sequential.json``) against the same config run in full.

A sequential run stops a candidate's pass over the pairs once its fidelity goal is decided by an anytime-valid
confidence sequence; what it must not change is the loop's answer. :func:`compare` runs the sweep twice, on the
sequential config and on that config without ``"sequential"``, and says whether the best candidate and the Pareto
front agree, how many candidate examples each used, and the wall time of each.

The front is compared with one set of latencies (the full run's p50 for both): each run times the models anew, and
on a busy machine two timings of one model differ by more than two int8 copies do, which is noise, not what the
sequential run decides. Each run's front on its own timings is printed too.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from olive_eval.decide.pareto import dominates
from olive_eval.records.results import RunResult

HERE = Path(__file__).resolve().parent
SEQUENTIAL_CONFIG = HERE.parents[1] / "configs" / "quantization_sweep_sequential.json"


def session_config(config: Path, *, full: bool = False, untimed: bool = False) -> Path | dict[str, Any]:
    """``config`` as the session takes it: the file, or with ``full`` its ``"sequential"`` key dropped (the same
    sweep run in full), with ``untimed`` its latency metric dropped and the later priorities moved up (what the
    prediction passes alone cost)."""
    if not full and not untimed:
        return config
    raw = json.loads(config.read_text(encoding="utf-8"))
    if full:
        raw.pop("sequential", None)
    if untimed:
        metrics = [m for m in raw["evaluator"]["metrics"] if m["type"] != "latency"]
        ranked = sorted((s for m in metrics for s in m["sub_types"] if s.get("priority", -1) > 0),
                        key=lambda s: s["priority"])  # fmt: skip
        for priority, sub in enumerate(ranked, 1):
            sub["priority"] = priority
        raw["evaluator"]["metrics"] = metrics
    return raw


def examples_used(result: RunResult) -> tuple[int, int]:
    """Examples the candidates were run on, and the examples a full run gives them (a pass that never started,
    a model that failed, counts as all of them)."""
    used = total = 0
    for name, model in result.models.items():
        if name == result.baseline:
            continue
        for record in model.sequential.values():
            used, total = used + record.examples, total + record.total
    return used, total


def front(result: RunResult, timing: RunResult | None = None) -> list[str]:
    """The Pareto front over ``result``'s objectives, with the timed values (``timing`` set) taken from ``timing``
    for the models it measured; without ``timing``, ``result``'s own front."""
    if timing is None:
        return [name for name, model in result.models.items() if model.pareto]
    points: dict[str, list[float]] = {}
    for name, model in result.models.items():
        if not model.evaluated:
            continue
        point = []
        for key in result.objectives:
            source = timing.models.get(name) if "latency" in key else model
            metric = source.metrics.get(key) if source is not None else None
            if metric is None or not metric.measured or metric.value is None:
                break
            sign = 1.0 if metric.higher_is_better else -1.0
            point.append(sign * metric.value)
        else:
            points[name] = point
    return [n for n, p in points.items() if not any(dominates(q, p) for m, q in points.items() if m != n)]


@dataclass
class Comparison:
    """The two runs' answers and costs."""

    sequential: RunResult
    full: RunResult
    sequential_seconds: float
    full_seconds: float

    @property
    def agree(self) -> bool:
        same_front = set(front(self.sequential, self.full)) == set(front(self.full, self.full))
        return self.sequential.best == self.full.best and same_front

    def lines(self) -> list[str]:
        used, total = examples_used(self.sequential)
        full_used, full_total = examples_used(self.full)
        full_used = full_used or full_total or total  # a full run records no sequential passes: it uses them all
        return [
            f"best: sequential {self.sequential.best or '-'}, full {self.full.best or '-'}",
            f"Pareto front (the full run's p50 for both): sequential {', '.join(front(self.sequential, self.full))}; "
            f"full {', '.join(front(self.full, self.full))}",
            f"Pareto front (each run's own p50): sequential {', '.join(front(self.sequential))}; "
            f"full {', '.join(front(self.full))}",
            f"candidate examples: sequential {used} / full {full_used} = {used / max(full_used, 1):.2f}",
            f"wall time evaluating: sequential {self.sequential_seconds:.1f} s / full {self.full_seconds:.1f} s "
            f"= {self.sequential_seconds / self.full_seconds:.2f}",
            "the same best and front" if self.agree else "FAILED: the sequential run's best or front differs",
        ]


def compare(
    run: Callable[..., Any], options: Sequence[Any], *, config: Path = SEQUENTIAL_CONFIG, **kw: Any
) -> Comparison:
    """``run`` (``sweep.sweep``) on ``config`` and on ``config`` in full, with the same options; each run's
    ``output_dir`` a subfolder (``sequential``, ``full``) of ``kw['output_dir']`` when given. The full run evaluates
    the models the sequential run built (the same files: building them again changed nothing and
    cost 12-21 s on a busy 2-core machine)."""
    out = kw.pop("output_dir", None)
    if out is None:
        out = (config.parent / json.loads(config.read_text(encoding="utf-8"))["output_dir"]).resolve()
    seq = run(options, config=config, output_dir=out / "sequential", **kw)
    kw["prebuilt"] = {c["name"]: Path(c["model_path"]) for c in seq.candidates}
    whole = run(options, config=config, output_dir=out / "full", full=True, **kw)  # after: a warm disk cache
    return Comparison(seq.result, whole.result, seq.evaluate_seconds, whole.evaluate_seconds)
