"""The table printed after a run: every metric of every model, goals, ranking and the best model."""

from __future__ import annotations

import math
import unicodedata

from olive_eval.records.results import GoalResult, RunResult, SubMetricResult
from olive_eval.report.sequential_lines import examples_used, sequential_lines


def format_value(value: float) -> str:
    if not math.isfinite(value):
        return str(value)
    if value == int(value) and abs(value) >= 1000:
        return f"{int(value):,}"
    magnitude = abs(value)
    if magnitude >= 100:
        return f"{value:.1f}"
    if magnitude >= 1:
        return f"{value:.3f}"
    return f"{value:.4f}"


def display_width(text: str) -> int:
    """Columns a terminal gives ``text``: wide (CJK) characters take two, combining marks none."""
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - display_width(text))


def _cell(sub: SubMetricResult | None, is_baseline: bool) -> str:
    if sub is None:
        return "-"
    if sub.value is None:
        return "failed" if sub.error is not None else "undefined"
    text = format_value(sub.value)
    if sub.ci_low is not None and sub.ci_high is not None:
        text += f" [{format_value(sub.ci_low)}, {format_value(sub.ci_high)}]"
    if sub.timing is not None and sub.timing.ratio_to_baseline is not None:
        text += f" x{sub.timing.ratio_to_baseline:.2f}"
    if sub.goal is not None and not is_baseline:
        mark = "ok" if sub.goal.met else "MISS"
        if sub.goal.threshold is None:
            text += " MISS (no baseline value)"
        else:
            text += f" {mark} {_op(sub)}{format_value(sub.goal.threshold)}"
            if sub.goal.confidence is not None:
                text += f" ({_confidence_bound(sub.goal, bool(sub.higher_is_better))})"
    return text


def _op(sub: SubMetricResult) -> str:
    return ">=" if sub.higher_is_better else "<="


def _confidence_bound(goal: GoalResult, higher_is_better: bool) -> str:
    """A goal with a confidence, in the metric's units: the threshold moved by the margin's bound (the
    value the goal was judged on) and, for a miss, how far short that is (``missed_by``)."""
    assert goal.confidence is not None and goal.threshold is not None
    level = f"{goal.confidence * 100:g}%"
    if goal.margin_bound is None or not math.isfinite(goal.margin_bound):
        return f"{level} bound undefined"
    sign = 1.0 if higher_is_better else -1.0
    text = f"{level} bound {format_value(goal.threshold + sign * goal.margin_bound)}"
    return text if goal.met else f"{text}, short by {format_value(-goal.margin_bound)}"


def _miss(key: str, sub: SubMetricResult) -> str:
    """One missed goal: the value against the threshold, how far the value misses it (threshold - value,
    signed by the direction) and, for a goal with a confidence, the bound it was judged on."""
    goal = sub.goal
    assert goal is not None
    if goal.reason is not None or sub.value is None or goal.threshold is None:
        return f"{key}: {goal.reason}"
    sign = 1.0 if sub.higher_is_better else -1.0
    shortfall = sign * (goal.threshold - sub.value)
    parts = [f"missed by {format_value(shortfall)}"] if shortfall > 0 else []
    if goal.confidence is not None:
        parts.append(_confidence_bound(goal, bool(sub.higher_is_better)))
    return f"{key} {format_value(sub.value)} vs {_op(sub)}{format_value(goal.threshold)} ({'; '.join(parts)})"


def _yes_no(flag: bool | None) -> str:
    """None is unknown (a model not finished), not a no."""
    return "-" if flag is None else "yes" if flag else "no"


def _table(rows: list[list[str]]) -> str:
    widths = [max(display_width(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(_pad(cell, w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def render(result: RunResult) -> str:
    names = list(result.models)
    keys: list[str] = []
    for model in result.models.values():
        keys.extend(k for k in model.metrics if k not in keys)
    header = ["metric"] + [f"{n} (baseline)" if n == result.baseline else n for n in names]
    rows = [header]
    for key in keys:
        sample = next(m.metrics[key] for m in result.models.values() if key in m.metrics)
        unit = f" [{sample.unit}]" if sample.unit else ""
        notes = []
        if sample.higher_is_better is not None:
            notes.append(f"{'higher' if sample.higher_is_better else 'lower'} better")
        if sample.priority > 0:
            notes.append(f"p{sample.priority}")
        label = f"{key}{unit}" + (f" ({', '.join(notes)})" if notes else "")
        rows.append([label] + [_cell(result.models[n].metrics.get(key), n == result.baseline) for n in names])
    rows.append(["status"] + [result.models[n].status for n in names])
    has_goals = any(sub.goal is not None for model in result.models.values() for sub in model.metrics.values())
    rows.append(
        ["goals met"]
        + ["-" if n == result.baseline or not has_goals else _yes_no(result.models[n].goals_met) for n in names]
    )
    rows.append(["pareto front"] + [_yes_no(result.models[n].pareto) for n in names])
    if any(result.models[n].early_stopped for n in names):
        rows.append(["stopped early by"] + [result.models[n].early_stopped or "-" for n in names])
    if any(result.models[n].sequential for n in names):
        rows.append(["examples used"] + [examples_used(result.models[n].sequential) for n in names])
    out = [_table(rows), ""]
    for name in names:
        model = result.models[name]
        if model.status in ("failed", "partial", "interrupted"):
            out.append(f"{model.status.upper()} {name}: {model.error}")
        if model.early_stopped is not None:
            skipped = [k for k in keys if k not in model.metrics]
            out.append(
                f"STOPPED EARLY {name}: missed the goal of {model.early_stopped}; not measured: "
                + (", ".join(skipped) or "nothing")
            )
        out.extend(sequential_lines(name, model.sequential))
        for key, sub in model.metrics.items():
            if sub.undefined is not None:
                out.append(f"undefined: {name} {key}: {sub.undefined}")
    if len(names) == 1:
        out.append("No candidates to rank: only the baseline was evaluated.")
    elif result.ranking:
        out.extend(_ranking_lines(result))
    elif not any(result.models[n].evaluated for n in names if n != result.baseline):
        out.append("No candidate to rank: none was evaluated.")
    else:
        out.append("No candidate meets every goal.")
        for name in names:
            model = result.models[name]
            if name == result.baseline or not model.evaluated:
                continue
            misses = [
                _miss(key, sub) for key, sub in model.metrics.items() if sub.goal is not None and not sub.goal.met
            ]
            out.append(f"  {name}: " + ("; ".join(misses) if misses else "meets every goal"))
    for name in names:
        out.extend(f"warning: {name}: {text}" for text in result.models[name].warnings)
    footer = measurement_footer(result)
    if footer:
        out.append(footer)
    return "\n".join(out)


#: Said when no goal was set: without goals "best" means only "first in priority order".
NO_GOALS = (
    "No goals set: every evaluated candidate is ranked by metric priority; "
    "'best' is the top of that order, even if worse than the baseline."
)


def _ranking_lines(result: RunResult) -> list[str]:
    """The ranking and the best candidate; without goals, what they mean and whether the best is worse than
    the baseline on the top-priority metric."""
    order = ", ".join(f"{i}. {n}" for i, n in enumerate(result.ranking, 1))
    ranked = (result.models[n] for n in result.ranking)
    if any(sub.goal is not None for model in ranked for sub in model.metrics.values()):
        return [f"Ranking (candidates meeting every goal, best first): {order}", f"Best candidate: {result.best}"]
    assert result.best is not None
    worse = _worse_than_baseline(result, result.best)
    best = f"Best candidate: {result.best}" + (f" ({worse})" if worse else "")
    return [NO_GOALS, f"Ranking (by metric priority, best first): {order}", best]


def _worse_than_baseline(result: RunResult, name: str) -> str | None:
    if not result.objectives:
        return None
    key = result.objectives[0]
    cand, base = result.models[name].metrics.get(key), result.models[result.baseline].metrics.get(key)
    if cand is None or base is None or not cand.measured or not base.measured:
        return None
    assert cand.value is not None and base.value is not None
    if cand.value >= base.value if cand.higher_is_better else cand.value <= base.value:
        return None
    return f"worse than the baseline on {key}: {format_value(cand.value)} vs {format_value(base.value)}"


def measurement_footer(result: RunResult) -> str | None:
    """One line on what latency was measured with: the schedule, the CPU and the thread settings."""
    timing = next(
        (sub.timing for model in result.models.values() for sub in model.metrics.values() if sub.timing), None
    )
    if timing is None:
        return None
    env = result.environment
    schedule = f"interleaved in {timing.rounds} rounds" if timing.interleaved else "one model after the other"
    loop = "back to back" if timing.loop == "back_to_back" else "yielding between runs"
    threads = []
    for runtime in (r for m in result.models.values() for r in m.runtimes):
        if "intra_op_threads" in runtime:
            spin = "spinning" if runtime.get("allow_spinning") else "no spinning"
            threads.append(f"onnxruntime {runtime['intra_op_threads']} intra-op threads, {spin}")
        elif "threads" in runtime:
            threads.append(f"torch {runtime['threads']} threads")
    cpu = f"{env.get('cpu', 'unknown CPU')}, {env.get('logical_cores', '?')} logical cores" if env else "unknown CPU"
    parts = [f"Timing: {schedule}, {loop}", cpu, *dict.fromkeys(threads)]
    return "; ".join(parts)
