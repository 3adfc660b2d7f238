"""The report page: sections assembled from the run's results and instance files, written atomically.

Sections (element ids): ``sec-summary`` (ranking table ``oe-ranking``), ``sec-pareto``, ``sec-values``
(``oe-values``), ``sec-fidelity`` (``oe-fidelity``; only in a run with fidelity metrics), ``sec-timing``,
``sec-sequential`` (a sequential run's bounds), ``sec-classes``, ``sec-examples``, ``sec-environment`` (``oe-environment``), ``sec-missing`` (what the run did not
leave, each a ``p.oe-note``). Chart ids: see :mod:`olive_eval.report.html`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from html import escape
from pathlib import Path
from typing import Any

from olive_eval import __version__
from olive_eval.records.output_dir import REPORT_GENERATOR
from olive_eval.records.results import RunResult, atomic_write_text
from olive_eval.report.html import bundle
from olive_eval.report.html.charts import Chart, ChartIds
from olive_eval.report.html.data_details import structured
from olive_eval.report.html.data_disagreement import disagreements
from olive_eval.report.html.data_examples import worst_examples
from olive_eval.report.html.data_fidelity import FidelityView, fidelity_view
from olive_eval.report.html.data_run import default_axes, model_order, numeric_series, ranking_rows
from olive_eval.report.html.data_timing import timing_keys_without_runs, timing_views
from olive_eval.report.html.fig_details import confusion_chart, curve_charts, per_class_chart, reliability_chart
from olive_eval.report.html.fig_run import PARETO_ID, pareto_data, pareto_figure, value_charts
from olive_eval.report.html.fig_sequential import sequential_charts
from olive_eval.report.html.fig_timing import timing_charts
from olive_eval.report.html.source import load_run
from olive_eval.report.html.tables import (
    environment_section,
    examples_section,
    per_class_table,
    ranking_table,
    values_table,
)
from olive_eval.report.html.tables_fidelity import disagreement_section, fidelity_summary, fidelity_table

REPORT_FILE = "report.html"


def _json(value: Any) -> str:
    """JSON safe inside a ``<script>`` element (no ``</script>``, no ``<!--``), NaN as null."""
    return json.dumps(value, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")


def _notes(notes: list[str]) -> str:
    return "".join(f"<p class='oe-note'>{escape(n)}</p>" for n in notes)


def _chart(chart: Chart) -> str:
    return f"{_notes(chart.notes)}<div class='oe-chart' id='{chart.id}' data-title='{escape(chart.title)}'></div>"


def _section(section_id: str, title: str, body: str) -> str:
    return f"<section id='{section_id}'><h2>{escape(title)}</h2>{body}</section>"


class _Page:
    """Collects sections, charts and notes of what is missing."""

    def __init__(self) -> None:
        self.sections: list[str] = []
        self.figures: dict[str, Any] = {}
        self.missing: list[str] = []
        self.extra_json: dict[str, Any] = {}

    def charts(self, charts: list[Chart]) -> str:
        for c in charts:
            self.figures[c.id] = c.figure
            self.missing += [f"{c.title}: {n}" for n in c.notes]
        return "".join(_chart(c) for c in charts)


def build_page(output_dir: Path, result: RunResult) -> str:
    """The whole page as one HTML string (plotly inlined)."""
    plotly_js = bundle.plotly_gzip_base64()  # first: a missing plotly fails before any work
    page = _Page()
    ids = ChartIds()
    names = model_order(result)
    page.sections.append(_summary(result, names))
    page.sections.append(_pareto(page, result, names))
    page.sections.append(_values(page, result, names, ids))
    fidelity = fidelity_view(result, names)
    if fidelity is not None:
        page.sections.append(_fidelity(page, output_dir, result, names, ids, fidelity))
    sequential = sequential_charts(result, names, ids)
    if sequential:
        caption = "<p class='oe-caption'>Each candidate's bounds on its mean margin over the goal: met above 0.</p>"
        page.sections.append(_section("sec-sequential", "Sequential decisions", caption + page.charts(sequential)))
    page.sections.append(_timing(page, result, names, ids))
    page.sections.append(_classes(page, result, names, ids))
    skip = {m.stem for m in fidelity.metrics} if fidelity is not None else set()
    page.sections.append(_examples(page, output_dir, result, names, ids, skip))
    page.sections.append(_section("sec-environment", "Environment and provenance", environment_section(result, names)))
    missing = _section("sec-missing", "Missing from this report", _notes(page.missing) or "<p>Nothing.</p>")
    title = f"olive-eval report: {result.baseline} and {len(result.models) - 1} candidate(s)"
    nav = "".join(
        f"<a href='#{s}'>{t}</a>"
        for s, t in (
            ("sec-summary", "Ranking"),
            ("sec-pareto", "Pareto"),
            ("sec-values", "Values"),
            *([("sec-fidelity", "Fidelity")] if fidelity is not None else []),
            *([("sec-sequential", "Sequential")] if sequential else []),
            ("sec-timing", "Timing"),
            ("sec-classes", "Per class"),
            ("sec-examples", "Worst examples"),
            ("sec-environment", "Environment"),
            ("sec-missing", "Missing"),
        )
    )
    pareto = page.extra_json.get("pareto")
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f'{REPORT_GENERATOR} {escape(__version__)}">'
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{escape(title)}</title><style>{bundle.STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1><nav>{nav}</nav>{''.join(page.sections)}{missing}"
        f"<script type='application/json' id='oe-figures'>{_json(page.figures)}</script>"
        + (f"<script type='application/json' id='oe-pareto-data'>{_json(pareto)}</script>" if pareto else "")
        + f"<script type='application/octet-stream' id='oe-plotly-gz'>{plotly_js}</script>"
        f"<script>{bundle.SCRIPT}</script></body></html>\n"
    )


def _summary(result: RunResult, names: list[str]) -> str:
    env = result.environment
    facts = [f"baseline <b>{escape(result.baseline)}</b>"]
    if result.best:
        facts.append(f"best candidate <b>{escape(result.best)}</b>")
    elif len(names) > 1:
        facts.append("no candidate meets every goal")
    if result.objectives:
        facts.append("objectives by priority: " + ", ".join(escape(o) for o in result.objectives))
    if env.get("started_at"):
        facts.append(f"started {escape(str(env['started_at']))}")
    body = f"<p>{'; '.join(facts)}.</p>{ranking_table(ranking_rows(result, names))}"
    return _section("sec-summary", "Ranking and goals", body)


def _pareto(page: _Page, result: RunResult, names: list[str]) -> str:
    series = numeric_series(result, names)
    axes = default_axes(result, series)
    if axes is None:
        note = "No Pareto chart: fewer than two metrics have a numeric value."
        page.missing.append(note)
        return _section("sec-pareto", "Pareto front", _notes([note]))
    figure = pareto_figure(names, result.baseline, series[axes[0]], series[axes[1]])
    page.figures[PARETO_ID] = figure
    page.extra_json["pareto"] = pareto_data(names, result.baseline, series, axes)

    def select(axis: str, chosen: str) -> str:
        options = "".join(
            f"<option value='{escape(k)}'{' selected' if k == chosen else ''}>{escape(s.label)}</option>"
            for k, s in series.items()
        )
        return f"<label>{axis} <select id='pareto-{axis}'>{options}</select></label>"

    pickers = f"<p class='oe-pickers'>{select('x', axes[0])}{select('y', axes[1])}</p>"
    caption = "<p class='oe-caption'>Diamonds: on the Pareto front of the two metrics shown; bars: intervals.</p>"
    chart = Chart(PARETO_ID, "Pareto front", figure)
    return _section("sec-pareto", "Pareto front", pickers + caption + _chart(chart))


def _values(page: _Page, result: RunResult, names: list[str], ids: ChartIds) -> str:
    series = numeric_series(result, names)
    body = values_table(result, names) + page.charts(value_charts(names, result.baseline, series, ids))
    return _section("sec-values", "Every value, the baseline beside each candidate", body)


def _fidelity(
    page: _Page, output_dir: Path, result: RunResult, names: list[str], ids: ChartIds, view: FidelityView
) -> str:
    found = disagreements(output_dir, result, names, view.metrics)
    page.missing += found.missing
    caption = (
        "<p class='oe-caption'>Each candidate's outputs scored against the baseline's on the same examples (the "
        "baseline's row is the identity), beside the values scored on their own. Below: per candidate and fidelity "
        "sub-type, the examples where it disagrees most.</p>"
    )
    body = (
        caption
        + fidelity_summary(view, result, names, found)
        + fidelity_table(view, result, names, found)
        + _notes(found.missing)
        + disagreement_section(found, ids)
    )
    return _section("sec-fidelity", "Fidelity to the baseline", body)


def _timing(page: _Page, result: RunResult, names: list[str], ids: ChartIds) -> str:
    views = timing_views(result, names)
    notes = []
    if not views:
        without = timing_keys_without_runs(result)
        if without:
            notes.append(
                "Timing values without their timed runs (a results.json from before they were recorded, "
                f"or timings reused from the cache of an older version): {', '.join(without)}"
            )
        else:
            notes.append("No timing metric in this run.")
    page.missing += notes
    body = _notes(notes) + page.charts(timing_charts(views, ids))
    return _section("sec-timing", "Timed runs", body)


def _classes(page: _Page, result: RunResult, names: list[str], ids: ChartIds) -> str:
    data = structured(result, names)
    parts = []
    for pc in data.per_class:
        parts.append(f"<h3>{escape(pc.key)} per class</h3>")
        parts.append(per_class_table(pc, result.baseline, ids("table-perclass", pc.key)))
        parts.append(page.charts([per_class_chart(pc, result.baseline, ids)]))
    for curves in data.curves:
        parts.append(page.charts(curve_charts(curves, result.baseline, ids)))
    for confusion in data.confusion:
        parts.append(page.charts([confusion_chart(confusion, result.baseline, ids)]))
    for diagram in data.reliability:
        parts.append(page.charts([reliability_chart(diagram, result.baseline, ids)]))
    for breakdown in data.breakdowns:
        parts.append(f"<h3>{escape(breakdown.key)} in detail</h3>")
        parts.append(per_class_table(breakdown, result.baseline, ids("table-details", breakdown.key), "field"))
    notes = [f"{key}: a structured value this page does not draw (see results.json)" for key in data.undrawn]
    if not parts:
        notes.append(
            "No per-class values, curves, confusion matrices, reliability diagrams or detail counts in this run."
        )
    page.missing += notes
    return _section("sec-classes", "Per class, curves, confusion matrices and details", "".join(parts) + _notes(notes))


def _examples(page: _Page, output_dir: Path, result: RunResult, names: list[str], ids: ChartIds, skip: set[str]) -> str:
    """``skip``: instance files (fidelity's) whose examples the fidelity section lists."""
    examples = worst_examples(output_dir, result, names, skip=skip)
    notes = list(examples.missing)
    if not examples.tables and not notes:
        notes.append("No per-example scores to compare (no candidate, or no metric scores single examples).")
    page.missing += notes
    body = _notes(notes) + examples_section(examples, ids)
    return _section("sec-examples", "Worst examples against the baseline", body)


def write_report(output_dir: Path, out: Path | None = None, stopped: Callable[[], bool] | None = None) -> Path:
    """Write the report of the run in ``output_dir`` to ``out`` (default: report.html beside results.json),
    atomically, and return its path. Built from results.json and the instance files only.

    ``stopped``: asked once the page is built; True (a Ctrl-C a library swallowed) raises KeyboardInterrupt
    instead of writing a page that may lack what the interrupted code was doing.

    UsageError: no results.json, or one that is not valid or not ours (the message names the file).
    MissingDependencyError: plotly is not installed (``pip install "olive-eval[report]"``).
    """
    output_dir = Path(output_dir)
    result = load_run(output_dir)
    folder = Path(result.output_dir or output_dir)
    target = Path(out) if out is not None else folder / REPORT_FILE
    text = build_page(folder, result)
    if stopped is not None and stopped():
        raise KeyboardInterrupt
    target.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write_text(target, text)
