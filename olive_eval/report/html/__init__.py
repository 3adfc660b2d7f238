"""The HTML report: one self-contained page (inline JS and CSS, nothing fetched) from a run's results.json and
instance files, so a report can be made later from a saved run, or from an older olive-eval's with what it has.

Modules: :mod:`.source` reads and checks results.json; ``data_*`` extract (pure); ``fig_*`` build plotly figure
dicts (pure); :mod:`.tables` writes the HTML tables; :mod:`.bundle` inlines plotly.js (gzip + base64, why:
there); :mod:`.page` assembles and writes.

Chart element ids (each ``<div class="oe-chart" id=...>``, drawn from ``<script id="oe-figures">``, a JSON
object of plotly figures by id; ``data-drawn="true"`` once drawn, and ``body[data-charts-drawn]`` when all are):

- ``pareto``: the Pareto chart; ``<select id="pareto-x">`` and ``id="pareto-y"`` pick its metrics.
- ``values-<sub-type key>``: a metric's values with confidence intervals as error bars (only where some has one).
- ``timing-<metric>`` and ``timing-<metric>-<quantity>``: every timed run per model, rounds by colour.
- ``perclass-<key>``, ``pr-<key>``, ``roc-<key>``, ``confusion-<key>``: per-class values, PR and ROC curves,
  confusion matrices.

Keys are made id-safe (characters other than letters, digits, ``_.-`` become ``_``); a clash gets ``-2``.
Tables: ``oe-ranking``, ``oe-values``, ``oe-environment``, ``table-perclass-<key>``,
``examples-<metric>-<sub-type>-<candidate>``; in a run with fidelity metrics, ``oe-fidelity`` and
``disagree-<metric>-<sub-type>-<candidate>``.

plotly and pyarrow are imported only when a report is written.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def write_report(output_dir: Path, out: Path | None = None, stopped: Callable[[], bool] | None = None) -> Path:
    """See :func:`olive_eval.report.html.page.write_report`."""
    from olive_eval.report.html.page import write_report as write

    return write(output_dir, out, stopped)


__all__ = ["write_report"]
