"""The differences between two runs' results.json that a behaviour-preserving change must not make.

Used by ``compare_runs.py compare``. It reads plain JSON (no olive_eval import), so a record made before a
restructuring can be compared with one made after it whatever the package's modules became.

Compared exactly (floats equal; ``rel_tol`` > 0 lets a float pass within that relative tolerance and names it):
per model its status, error, every sub-type's fields (value, interval bounds, goal with its threshold, met,
margins, change and probability), the order of its metrics, the pass's example and batch counts, its runtimes,
its early stop and its lm-eval results; per run the baseline, the models and their order, the objectives, the
ranking, the best candidate, each model's goals met and Pareto standing.

Timing sub-types (a ``timing`` block, a time unit, or a pass-timing sub-type, :data:`TIMING_NAMES`) are measured, not
computed: only their presence, unit, direction, priority, settings and goal settings are compared, not their
values, bounds, ratios or whether their goal was met. Ranking, best, goals met and the Pareto front may then
legitimately differ; when they do, they are computed again from the second run with the first run's timing
values put in: if that gives the first run's ranking, the difference is timing only (a note, not a difference).
Not compared: seconds and stage seconds, the memory a runtime measured (its ``peak_memory`` bytes), warnings (the busy-machine ones depend on the load), the environment,
the raw timing rounds' values.
"""

from __future__ import annotations

import copy
import math
from typing import Any

#: Units whose values are measured time, or rates of it.
TIME_UNITS = {"ms", "s", "us", "µs", "ns", "tokens/s", "samples/s", "items/s"}
#: Sub-types of the prediction pass read from its clock (``inference_seconds``), with no unit or timing block.
TIMING_NAMES = ("rtfx", "samples_per_second")
#: A timing sub-type's ``timing`` fields that are settings, not measurements.
TIMING_SETTINGS = ("loop", "interleaved", "adaptive", "warmup_num", "target_rel_ci")
#: A goal's fields that are settings (the rest, for a timing sub-type, follow from measured values).
GOAL_SETTINGS = ("type", "value", "confidence")
#: A sub-type's fields compared for a timing sub-type as they are.
TIMING_SUB_EXACT = ("priority", "higher_is_better", "unit", "aggregation", "confidence_interval")
#: ... and those compared for presence only.
TIMING_SUB_PRESENCE = ("value", "ci_low", "ci_high", "error", "undefined", "stderr", "per_class")


def is_timing(key: str, sub: dict[str, Any]) -> bool:
    """A sub-type whose value is read from the clock."""
    named = any(key.endswith(f"-{name}") for name in TIMING_NAMES)
    return sub.get("timing") is not None or sub.get("unit") in TIME_UNITS or named


class Diff:
    """The differences and notes found so far, each a short ``path: what`` line."""

    def __init__(self, rel_tol: float = 0.0) -> None:
        self.rel_tol = rel_tol
        self.differences: list[str] = []
        self.notes: list[str] = []

    def values(self, path: str, a: Any, b: Any) -> None:
        """Equal JSON values: same types, same keys, floats equal (or within ``rel_tol``, noted)."""
        if isinstance(a, dict) and isinstance(b, dict):
            for key in [*a, *(k for k in b if k not in a)]:
                if key not in a or key not in b:
                    self.differences.append(f"{path}.{key}: {'missing before' if key not in a else 'missing after'}")
                else:
                    self.values(f"{path}.{key}", a[key], b[key])
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                self.differences.append(f"{path}: {len(a)} items -> {len(b)}")
            else:
                for i, (x, y) in enumerate(zip(a, b, strict=True)):
                    self.values(f"{path}[{i}]", x, y)
        elif isinstance(a, float) and isinstance(b, float):
            if a == b or (math.isnan(a) and math.isnan(b)):
                return
            if self.rel_tol and abs(a - b) <= self.rel_tol * max(abs(a), abs(b)):
                self.notes.append(f"{path}: {a!r} -> {b!r} (within {self.rel_tol:g})")
            else:
                self.differences.append(f"{path}: {a!r} -> {b!r}")
        elif type(a) is not type(b) or a != b:
            self.differences.append(f"{path}: {short(a)} -> {short(b)}")

    def presence(self, path: str, a: Any, b: Any) -> None:
        if (a is None) != (b is None):
            self.differences.append(
                f"{path}: {'absent' if a is None else 'present'} -> {'absent' if b is None else 'present'}"
            )


def short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def compare_results(before: dict[str, Any], after: dict[str, Any], rel_tol: float = 0.0) -> Diff:
    """Every difference between two results.json documents that is not a timing measurement's."""
    diff = Diff(rel_tol)
    for field in ("baseline", "objectives"):
        diff.values(field, before.get(field), after.get(field))
    names_before, names_after = list(before.get("models", {})), list(after.get("models", {}))
    diff.values("models", names_before, names_after)
    for name in names_before:
        if name in after.get("models", {}):
            compare_model(diff, name, before["models"][name], after["models"][name])
    compare_decisions(diff, before, after)
    return diff


def compare_model(diff: Diff, name: str, a: dict[str, Any], b: dict[str, Any]) -> None:
    """One model's status, metrics and what it ran on (its goals met and Pareto standing: see decisions)."""
    for field in ("status", "error", "early_stopped", "folder", "lm_eval"):
        diff.values(f"{name}.{field}", a.get(field), b.get(field))
    diff.values(f"{name}.runtimes", unmeasured(a.get("runtimes")), unmeasured(b.get("runtimes")))
    passes_a, passes_b = a.get("passes") or {}, b.get("passes") or {}
    diff.values(f"{name}.passes", list(passes_a), list(passes_b))
    for data, pass_a in passes_a.items():
        pass_b = passes_b.get(data) or {}
        for field in ("examples", "batches"):
            diff.values(f"{name}.passes.{data}.{field}", pass_a.get(field), pass_b.get(field))
    timings_a, timings_b = a.get("timings") or {}, b.get("timings") or {}
    diff.values(f"{name}.timings", list(timings_a), list(timings_b))
    for metric, t_a in timings_a.items():
        t_b = timings_b.get(metric) or {}
        for field in ("unit", "batch_size", "data_config"):
            diff.values(f"{name}.timings.{metric}.{field}", t_a.get(field), t_b.get(field))
    metrics_a, metrics_b = a.get("metrics") or {}, b.get("metrics") or {}
    diff.values(f"{name}.metrics", list(metrics_a), list(metrics_b))
    for key, sub_a in metrics_a.items():
        if key in metrics_b:
            compare_sub(diff, f"{name}.{key}", key, sub_a, metrics_b[key])


def unmeasured(runtimes: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """The runtimes' descriptions with the memory they measured (``peak_memory``'s byte counts) as ``<measured>``."""
    if runtimes is None:
        return None
    out = copy.deepcopy(runtimes)
    for runtime in out:
        memory = runtime.get("peak_memory") if isinstance(runtime, dict) else None
        for key, value in (memory or {}).items():
            if key.endswith("_bytes") and value is not None:
                memory[key] = "<measured>"
    return out


def compare_sub(diff: Diff, path: str, key: str, a: dict[str, Any], b: dict[str, Any]) -> None:
    """A computed sub-type in full; a timing one by its settings and the presence of its measurements."""
    if not (is_timing(key, a) or is_timing(key, b)):
        diff.values(path, a, b)
        return
    diff.values(f"{path}.<keys>", sorted(a), sorted(b))
    for field in TIMING_SUB_EXACT:
        diff.values(f"{path}.{field}", a.get(field), b.get(field))
    for field in TIMING_SUB_PRESENCE:
        diff.presence(f"{path}.{field}", a.get(field), b.get(field))
    goal_a, goal_b = a.get("goal"), b.get("goal")
    diff.presence(f"{path}.goal", goal_a, goal_b)
    if goal_a is not None and goal_b is not None:
        for field in GOAL_SETTINGS:
            diff.values(f"{path}.goal.{field}", goal_a.get(field), goal_b.get(field))
    timing_a, timing_b = a.get("timing"), b.get("timing")
    diff.presence(f"{path}.timing", timing_a, timing_b)
    if timing_a is not None and timing_b is not None:
        diff.values(f"{path}.timing.<keys>", sorted(timing_a), sorted(timing_b))
        settings = TIMING_SETTINGS if timing_a.get("adaptive") else (*TIMING_SETTINGS, "rounds")
        for field in settings:
            diff.values(f"{path}.timing.{field}", timing_a.get(field), timing_b.get(field))
        for field in sorted(set(timing_a) - set(settings)):
            diff.presence(f"{path}.timing.{field}", timing_a.get(field), timing_b.get(field))


def decisions(result: dict[str, Any]) -> dict[str, Any]:
    """What the run decided: ranking, best, each model's goals met and Pareto standing."""
    models = result.get("models", {})
    return {
        "ranking": result.get("ranking"),
        "best": result.get("best"),
        "goals_met": {name: m.get("goals_met") for name, m in models.items()},
        "pareto": {name: m.get("pareto") for name, m in models.items()},
    }


def compare_decisions(diff: Diff, before: dict[str, Any], after: dict[str, Any]) -> None:
    """Decisions equal; or, where timing values feed them, equal once the first run's timings are put in."""
    want, got = decisions(before), decisions(after)
    if want == got:
        return
    if not timing_feeds_decisions(before):
        diff.values("decisions", want, got)
        return
    if decide(after) != got:  # the recomputation below must reproduce a run's own decisions to be trusted
        diff.values("decisions", want, got)
        diff.differences.append("decisions: not reproduced from the second run's values, so not explained")
        return
    hybrid = with_timings_of(after, before)
    if decide(hybrid) == want:
        changed = [k for k in want if want[k] != got[k]]
        diff.notes.append(f"{', '.join(changed)} differ only through timing values")
    else:
        diff.values("decisions", want, got)


def timing_feeds_decisions(result: dict[str, Any]) -> bool:
    """Some objective, or some goal, is on a timing sub-type."""
    objectives = set(result.get("objectives") or [])
    for model in result.get("models", {}).values():
        for key, sub in (model.get("metrics") or {}).items():
            if is_timing(key, sub) and (key in objectives or sub.get("goal") is not None):
                return True
    return False


def with_timings_of(result: dict[str, Any], timings: dict[str, Any]) -> dict[str, Any]:
    """``result`` with each timing sub-type replaced by the one ``timings`` holds for the same model."""
    out = copy.deepcopy(result)
    for name, model in out.get("models", {}).items():
        source = (timings.get("models", {}).get(name) or {}).get("metrics") or {}
        metrics = model.get("metrics") or {}
        for key, sub in metrics.items():
            if is_timing(key, sub) and key in source:
                metrics[key] = copy.deepcopy(source[key])
    return out


def measured(sub: dict[str, Any] | None) -> bool:
    value = None if sub is None else sub.get("value")
    return isinstance(value, (int, float)) and math.isfinite(value)


def decide(result: dict[str, Any]) -> dict[str, Any]:
    """Goals met, ranking, best and Pareto front from the sub-types' own goal results.

    The documented rules (docs/output.md): goals met when every goal is; the candidates meeting every goal
    ranked by the objectives in priority order, ties in config order, a missing value last; Pareto: no model
    better or equal on every objective and better on one.
    """
    models = result.get("models", {})
    baseline, objectives = result.get("baseline"), result.get("objectives") or []
    goals_met: dict[str, Any] = {}
    for name, model in models.items():
        met = model.get("goals_met")
        goals = [sub["goal"] for sub in (model.get("metrics") or {}).values() if sub.get("goal") is not None]
        if name != baseline and model.get("status") in ("ok", "partial") and isinstance(met, bool) and goals:
            met = all(goal.get("met") for goal in goals)
        goals_met[name] = met

    def higher(key: str) -> bool:
        return any(bool(m.get("metrics", {}).get(key, {}).get("higher_is_better")) for m in models.values())

    def key_of(name: str) -> tuple[tuple[int, float], ...]:
        metrics = models[name].get("metrics") or {}
        key = []
        for obj in objectives:
            sub = metrics.get(obj)
            value = float(sub["value"]) if measured(sub) else 0.0
            key.append((0, -value if higher(obj) else value) if measured(sub) else (1, 0.0))
        return tuple(key)

    eligible = [
        n
        for n in models
        if n != baseline and models[n].get("status") in ("ok", "partial") and goals_met[n] is not False
    ]
    ranking = sorted(eligible, key=key_of)

    def oriented(name: str) -> list[float]:
        return [(1.0 if higher(o) else -1.0) * float(models[name]["metrics"][o]["value"]) for o in objectives]

    complete = [
        n
        for n, m in models.items()
        if m.get("status") in ("ok", "partial") and all(measured((m.get("metrics") or {}).get(o)) for o in objectives)
    ]
    pareto: dict[str, Any] = {}
    for name, model in models.items():
        if model.get("status") in ("pending", "running"):
            pareto[name] = None
            continue
        mine = oriented(name) if name in complete else None
        pareto[name] = mine is not None and not any(dominates(oriented(o), mine) for o in complete)
    return {"ranking": ranking, "best": ranking[0] if ranking else None, "goals_met": goals_met, "pareto": pareto}


def dominates(a: list[float], b: list[float]) -> bool:
    return all(x >= y for x, y in zip(a, b, strict=True)) and any(x > y for x, y in zip(a, b, strict=True))
