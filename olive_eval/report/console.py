"""The table printed after a run: every metric of every model, goals, ranking and the best model."""

from __future__ import annotations

import math
import unicodedata

from olive_eval.results import RunResult, SubMetricResult


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
            op = ">=" if sub.higher_is_better else "<="
            text += f" {mark} {op}{format_value(sub.goal.threshold)}"
            if sub.goal.confidence is not None and sub.goal.probability is not None:
                text += f" (P={sub.goal.probability:.2f}, need {sub.goal.confidence:.0%})"
    return text


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
    rows.append(
        ["goals met"] + ["-" if n == result.baseline else "yes" if result.models[n].goals_met else "no" for n in names]
    )
    rows.append(["pareto front"] + ["yes" if result.models[n].pareto else "no" for n in names])
    out = [_table(rows), ""]
    for name in names:
        model = result.models[name]
        if model.status in ("failed", "partial", "interrupted"):
            out.append(f"{model.status.upper()} {name}: {model.error}")
        for key, sub in model.metrics.items():
            if sub.undefined is not None:
                out.append(f"undefined: {name} {key}: {sub.undefined}")
    if len(names) == 1:
        out.append("No candidates to rank: only the baseline was evaluated.")
    elif result.ranking:
        out.append(
            "Ranking (candidates meeting every goal, best first): "
            + ", ".join(f"{i}. {n}" for i, n in enumerate(result.ranking, 1))
        )
        out.append(f"Best candidate: {result.best}")
    else:
        out.append("No candidate meets every goal.")
        for name in names:
            model = result.models[name]
            if name == result.baseline or not model.evaluated:
                continue
            misses = [
                f"{key}: {sub.goal.reason}"
                if sub.goal.reason is not None or sub.value is None or sub.goal.threshold is None
                else f"{key} {format_value(sub.value)} vs {'>=' if sub.higher_is_better else '<='}"
                f"{format_value(sub.goal.threshold)} (missed by {format_value(sub.goal.missed_by or 0.0)})"
                for key, sub in model.metrics.items()
                if sub.goal is not None and not sub.goal.met
            ]
            out.append(f"  {name}: " + ("; ".join(misses) if misses else "meets every goal"))
    for name in names:
        out.extend(f"warning: {name}: {text}" for text in result.models[name].warnings)
    footer = measurement_footer(result)
    if footer:
        out.append(footer)
    return "\n".join(out)


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
