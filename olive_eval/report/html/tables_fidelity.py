"""The fidelity section's HTML: each model's accuracy values beside its fidelity to the baseline (with how many
answers differ, where the scores say), one line per candidate that says it in words, and the examples where
each candidate disagrees most. Text from the run is escaped here."""

from __future__ import annotations

from html import escape
from typing import Any

from olive_eval.records.results import RunResult
from olive_eval.report.html.data_disagreement import Disagreement, Disagreements
from olive_eval.report.html.data_fidelity import FidelityView
from olive_eval.report.html.tables import fmt, html_table, value_cell


def _differ(table: Disagreement) -> str:
    assert table.differ is not None
    share = table.differ / table.scored if table.scored else 0.0
    return f"{table.differ:,} of {table.scored:,} ({share:.1%}) differ from the baseline's"


def _header(view: FidelityView) -> str:
    groups = [("model", 1)]
    if view.accuracy_keys:
        groups.append(("accuracy and kin: scored on their own (Δ from the baseline)", len(view.accuracy_keys)))
    groups.append(("fidelity: against the baseline's outputs", len(view.fidelity_keys)))
    top = "".join(f"<th colspan='{n}'>{escape(text)}</th>" for text, n in groups)
    keys = "".join(f"<th>{escape(k)}</th>" for k in [*view.accuracy_keys, *view.fidelity_keys])
    return f"<thead><tr>{top}</tr><tr><th></th>{keys}</tr></thead>"


def fidelity_table(view: FidelityView, result: RunResult, names: list[str], found: Disagreements) -> str:
    """A row per model (the baseline first: fidelity's identity), accuracy sub-types then fidelity sub-types."""
    base = result.models.get(result.baseline)
    rows = []
    for name in names:
        model = result.models[name]
        is_base = name == result.baseline
        cells = [escape(name) + (" <em>(baseline)</em>" if is_base else "")]
        for key in view.accuracy_keys:
            cells.append(value_cell(model.metrics.get(key), base.metrics.get(key) if base else None, is_base))
        for key in view.fidelity_keys:
            text = value_cell(model.metrics.get(key), None, is_base)
            differ = found.differ(name, key)
            if differ is not None:
                text += f"<br><span class='oe-base'>{escape(_differ(differ))}</span>"
            cells.append(text)
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return f"<table class='oe-table' id='oe-fidelity'>{_header(view)}<tbody>{''.join(rows)}</tbody></table>"


def fidelity_summary(view: FidelityView, result: RunResult, names: list[str], found: Disagreements) -> str:
    """One line per candidate: its first accuracy value's change from the baseline, and each count of answers
    that differ ("accuracy −0.002, but 3.0% of answers differ")."""
    base = result.models.get(result.baseline)
    lines = []
    for name in names:
        model = result.models[name]
        if name == result.baseline or not model.evaluated:
            continue
        parts = []
        for key in view.accuracy_keys[:1]:
            sub, base_sub = model.metrics.get(key), base.metrics.get(key) if base else None
            if sub is not None and sub.measured and base_sub is not None and base_sub.measured:
                assert sub.value is not None and base_sub.value is not None
                delta = sub.value - base_sub.value
                parts.append(f"{key} {fmt(sub.value)} (Δ {'+' if delta >= 0 else ''}{fmt(delta)} from the baseline)")
        counts = [f"{t.key}: {_differ(t)}" for t in found.tables if t.candidate == name and t.binary]
        if counts:
            parts.append(("but " if parts else "") + "; ".join(counts))
        if parts:
            lines.append(f"<li><b>{escape(name)}</b>: {escape(', '.join(parts))}</li>")
    return f"<ul class='oe-fidelity-summary'>{''.join(lines)}</ul>" if lines else ""


def _caption(t: Disagreement) -> str:
    worst = f"the {'lowest' if t.higher_is_better else 'highest'} {t.column} first"
    if t.binary:
        return f"{t.scored:,} examples scored; {_differ(t)}; {worst}"
    if t.differ is not None and t.differ < t.scored:
        return (
            f"{t.scored:,} examples scored, {t.differ:,} not at the baseline's own score (only those listed); {worst}"
        )
    return f"{t.scored:,} examples scored; {worst}"


def disagreement_table(t: Disagreement, table_id: str) -> str:
    header = ["example", escape(t.column), f"{escape(t.candidate)} prediction", "baseline prediction", "reference"]
    rows = [
        [
            escape(str(r.index)),
            fmt(r.score),
            f"<code>{escape(r.candidate_prediction)}</code>",
            f"<code>{escape(r.baseline_prediction)}</code>",
            f"<code>{escape(r.reference)}</code>",
        ]
        for r in t.rows
    ]
    caption = f"<p class='oe-caption'>{escape(_caption(t))}</p>"
    if not rows:
        empty = "Every example scores as the baseline does." if t.differ is not None else "No example has a score."
        return caption + f"<p class='oe-note'>{empty}</p>"
    return caption + html_table(table_id, header, rows, "oe-table oe-examples")


def disagreement_section(found: Disagreements, ids: Any) -> str:
    parts = []
    for t in found.tables:
        title = f"{t.metric}: {t.column} — {t.candidate}"
        table_id = ids("disagree", t.metric, t.column, t.candidate)
        parts.append(f"<h3>{escape(title)}</h3>{disagreement_table(t, table_id)}")
    return "".join(parts)
