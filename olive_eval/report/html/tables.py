"""The page's tables as HTML: ranking with goals, every value with the baseline beside it, per-class values,
worst examples, environment. Every piece of text from the run (model names, predictions) is escaped here."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from olive_eval.records.results import RunResult, SubMetricResult
from olive_eval.report.console import format_value
from olive_eval.report.html.data_details import PerClass
from olive_eval.report.html.data_examples import Examples, WorstExamples
from olive_eval.report.html.data_run import RankingRow, metric_keys


def fmt(value: float | None) -> str:
    """A count (an int: hits, substitutions) in full; anything else as the console table writes it."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return "–" if value is None else format_value(value)


def _flag(value: bool | None) -> str:
    return "–" if value is None else "yes" if value else "no"


def html_table(table_id: str, header: list[str], rows: list[list[str]], css: str = "oe-table") -> str:
    """Cells are HTML already (escaped by the caller)."""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{css}" id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def ranking_table(rows: list[RankingRow]) -> str:
    """One row per model: rank, status, goals met, Pareto, and each goal: value vs baseline, met or missed by."""
    keys = list(dict.fromkeys(g.key for r in rows for g in r.goals))
    header = ["rank", "model", "status", "goals met", "Pareto front", *(escape(k) for k in keys)]
    out = []
    for r in rows:
        name = escape(r.name) + (" <em>(baseline)</em>" if r.is_baseline else "")
        cells = ["–" if r.rank is None else str(r.rank), name, escape(r.status), _flag(r.goals_met), _flag(r.pareto)]
        goals = {g.key: g for g in r.goals}
        for key in keys:
            g = goals.get(key)
            if g is None:
                cells.append("baseline" if r.is_baseline else "–")
                continue
            text = f"{fmt(g.value)} <span class='oe-base'>(baseline {fmt(g.baseline)})</span><br>"
            if g.reason:
                text += f"<span class='oe-miss'>missed: {escape(g.reason)}</span>"
            elif g.met:
                text += f"<span class='oe-met'>met {escape(g.op)} {fmt(g.threshold)}</span>"
            else:
                text += f"<span class='oe-miss'>missed {escape(g.op)} {fmt(g.threshold)} by {fmt(g.missed_by)}</span>"
            cells.append(text)
        out.append(cells)
        if r.error:
            out.append(["", "", f"<span class='oe-miss'>{escape(r.error)}</span>", "", "", *([""] * len(keys))])
    return html_table("oe-ranking", header, out)


def value_cell(sub: SubMetricResult | None, base: SubMetricResult | None, is_baseline: bool) -> str:
    if sub is None:
        return "–"
    if not sub.measured:
        reason = sub.error or sub.undefined or "not finite"
        return f"<span class='oe-miss' title='{escape(reason)}'>{'failed' if sub.error else 'undefined'}</span>"
    assert sub.value is not None
    text = fmt(sub.value)
    if sub.ci_low is not None and sub.ci_high is not None:
        text += f" <span class='oe-ci'>[{fmt(sub.ci_low)}, {fmt(sub.ci_high)}]</span>"
    if not is_baseline and base is not None and base.measured and base.value is not None:
        delta = sub.value - base.value
        text += f"<br><span class='oe-base'>Δ {'+' if delta >= 0 else ''}{fmt(delta)}"
        if sub.timing is not None and sub.timing.ratio_to_baseline is not None:
            text += f", x{sub.timing.ratio_to_baseline:.2f}"
        text += "</span>"
    if sub.goal is not None and not is_baseline:
        text += " <span class='oe-met'>✓</span>" if sub.goal.met else " <span class='oe-miss'>✗</span>"
    return text


def values_table(result: RunResult, names: list[str]) -> str:
    """Every sub-type (rows) of every model (columns), the baseline first and each candidate's change from it."""
    base = result.models.get(result.baseline)
    header = ["metric", *(escape(n) + (" <em>(baseline)</em>" if n == result.baseline else "") for n in names)]
    rows = []
    for key in metric_keys(result):
        sample = next(m.metrics[key] for m in result.models.values() if key in m.metrics)
        unit = f" [{escape(sample.unit)}]" if sample.unit else ""
        direction = "" if sample.higher_is_better is None else " ↑" if sample.higher_is_better else " ↓"
        cells = [f"{escape(key)}{unit}{direction}"]
        for n in names:
            base_sub = base.metrics.get(key) if base is not None else None
            cells.append(value_cell(result.models[n].metrics.get(key), base_sub, n == result.baseline))
        rows.append(cells)
    return html_table("oe-values", header, rows)


def per_class_table(data: PerClass, baseline: str, table_id: str, first: str = "class") -> str:
    """A row per class (or per field, ``first``), a column per model, deltas against the baseline."""
    names = list(data.values)
    header = [first, *(escape(n) for n in names)]
    base = data.values.get(baseline)
    rows = []
    for ci, cls in enumerate(data.classes):
        cells = [escape(cls)]
        for n in names:
            value = data.values[n][ci]
            text = fmt(value)
            if n != baseline and base is not None and value is not None and base[ci] is not None:
                delta = value - base[ci]
                text += f" <span class='oe-base'>(Δ {'+' if delta >= 0 else ''}{fmt(delta)})</span>"
            cells.append(text)
        rows.append(cells)
    return html_table(table_id, header, rows)


def _examples_caption(t: WorstExamples) -> str:
    direction = {True: "higher is better", False: "lower is better", None: "direction unknown: largest changes"}
    parts = [f"{t.compared} examples compared ({direction[t.higher_is_better]})"]
    if t.higher_is_better is not None:
        parts.append(f"{t.worse} worse than the baseline, {t.better} better")
    if t.flips is not None:
        parts.append(f"{t.flips[0]} flipped right → wrong, {t.flips[1]} wrong → right")
    return "; ".join(parts)


def examples_table(t: WorstExamples, table_id: str) -> str:
    """The candidate's worst examples on one score, beside the baseline's prediction and the reference."""
    header = [
        "example",
        f"{escape(t.candidate)}",
        "baseline",
        f"{escape(t.candidate)} prediction",
        "baseline prediction",
        "reference",
    ]
    rows = [
        [
            str(r.index),
            fmt(r.candidate_score),
            fmt(r.baseline_score),
            f"<code>{escape(r.candidate_prediction)}</code>",
            f"<code>{escape(r.baseline_prediction)}</code>",
            f"<code>{escape(r.reference)}</code>",
        ]
        for r in t.rows
    ]
    caption = f"<p class='oe-caption'>{escape(_examples_caption(t))}</p>"
    if not rows:
        return caption + "<p class='oe-note'>No example is worse than the baseline.</p>"
    return caption + html_table(table_id, header, rows, "oe-table oe-examples")


def examples_section(examples: Examples, ids: Any) -> str:
    parts = []
    for t in examples.tables:
        title = f"{t.metric}: {t.column} — {t.candidate}"
        parts.append(f"<h3>{escape(title)}</h3>{examples_table(t, ids('examples', t.metric, t.column, t.candidate))}")
    return "".join(parts)


def environment_section(result: RunResult, names: list[str]) -> str:
    """What the numbers were measured with: versions, machine, config hash, start time, seeds; runtimes."""
    env = dict(result.environment)
    config = env.pop("config", None)
    packages = env.pop("packages", None)
    rows = [
        [escape(str(k)), f"<code>{escape(json.dumps(v) if not isinstance(v, str) else v)}</code>"]
        for k, v in env.items()
    ]
    if isinstance(packages, dict):
        rows.append(["packages", escape(", ".join(f"{k} {v}" for k, v in packages.items()))])
    for n in names:
        model = result.models[n]
        for runtime in model.runtimes:
            rows.append([f"runtime of {escape(n)}", f"<code>{escape(json.dumps(runtime))}</code>"])
        if model.seconds is not None:
            rows.append([f"seconds for {escape(n)}", fmt(model.seconds)])
        for warning in model.warnings:
            rows.append([f"warning for {escape(n)}", escape(warning)])
    if result.stage_seconds:
        rows.append(["run stages (s)", escape(", ".join(f"{k} {v:.3g}" for k, v in result.stage_seconds.items()))])
    out = html_table("oe-environment", ["what", "value"], rows) if rows else ""
    if not env:
        out += "<p class='oe-note'>This results.json records no environment (an older olive-eval).</p>"
    if config is not None:
        out += f"<details><summary>run config</summary><pre>{escape(json.dumps(config, indent=2))}</pre></details>"
    return out
